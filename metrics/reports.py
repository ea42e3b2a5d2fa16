"""What the metric pages show: run rows, per-query values, drill-down rankings, comparisons."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext as _

from annotator.evidence import Evidence
from annotator.models import Chunk, Document, Project, Query
from annotator.templatetags.sources_tags import sources_label
from gold.units import DOCUMENTS, PAGES, Units, level_name, level_units
from numerics.mapping import FragmentationCounts, fragmentation_counts, fragmentation_figures
from numerics.spans import SpanArrays

from . import charts, kept_values
from .coverage import run_coverage
from .evaluation import (
    LOW_COVERAGE,
    OWN,
    EvaluationSetting,
    RunScores,
    evaluate_run,
    lookup,
)
from .label_state import counted_labels, label_state
from .models import Run
from .rankings import ranked_run
from .run_indexes import run_index

SNIPPET = 400  # characters of a unit's text shown in a drill-down


def run_filter(runs, *, tag: str = "", param: tuple[str, str] | None = None) -> list[Run]:
    """Runs carrying ``tag`` and whose parameter ``key`` reads ``value`` (as text)."""
    chosen = []
    for run in runs:
        if tag and tag not in run.tags:
            continue
        if param and str(run.parameters.get(param[0], "")) != param[1]:
            continue
        chosen.append(run)
    return chosen


def group_value(run: Run, group: str) -> str:
    """The value of a run that the dashboard groups by: its tags, series, chunking or a
    parameter."""
    if group == "tag":
        return ", ".join(run.tags) or "—"
    if group == "series":
        return run.series or "—"
    if group == "chunking":
        return run.chunking.name if run.chunking_id else "documents"
    value = run.parameters.get(group)
    return "—" if value is None else str(value)


def run_rows(
    project: Project,
    setting: EvaluationSetting,
    *,
    tag: str = "",
    param: tuple[str, str] | None = None,
) -> list[dict]:
    """One row per active run that can be evaluated at the level (and passes the filters):
    means with 95 % intervals."""
    names = [*setting.names, setting.judged]
    rows = []
    runs = Run.objects.filter(project=project).active().select_related("chunking")
    for run in run_filter(runs.without_results(), tag=tag, param=param):
        if not setting.can_evaluate(run):
            continue
        gold = setting.gold_for(run)
        scores = evaluate_run(run, gold, names)
        cells = []
        for name, label in setting.measures:
            interval = scores.interval(name)
            cells.append(
                {
                    "name": name,
                    "label": label,
                    "mean": scores.mean(name),
                    "low": interval[0] if interval else None,
                    "high": interval[1] if interval else None,
                }
            )
        judged = scores.mean(setting.judged)
        rows.append(
            {
                "coverage": run_coverage(run, gold, setting.k).mean,
                "run": run,
                "unit_level": gold.units.level,
                "n_units": len(gold.units.ids),
                "cells": cells,
                "judged": judged,
                "low_coverage": judged < LOW_COVERAGE,
                "scores": scores,
            }
        )
    return rows


def _level_shown(level: str) -> str:
    return _("each run's own units") if level == OWN else level_name(level)


def bar_chart(rows: list[dict], setting: EvaluationSetting, names: list[str]) -> str:
    """SVG of the runs' means of the chosen measures with their intervals, runs sorted by
    the first measure (best first)."""
    ordered = sorted(rows, key=lambda r: (-r["scores"].mean(names[0]), r["run"].name))
    return charts.bar_chart(
        f"{', '.join(names)} · {_level_shown(setting.level)} · {sources_caption(setting)}",
        names,
        [
            (
                r["run"].name,
                [r["scores"].mean(n) for n in names],
                [r["scores"].interval(n) for n in names],
            )
            for r in ordered
        ],
    )


def sources_caption(setting: EvaluationSetting) -> str:
    """What a figure's caption says it stands on: the label sources, or the gold set."""
    gold_set = setting.gold.gold_set
    if gold_set is not None:
        return _("gold set %(name)s v%(version)s") % {
            "name": gold_set.name,
            "version": gold_set.version,
        }
    return _("labels of %(sources)s") % {"sources": sources_label(setting.source_names)}


def tag_breakdown(rows: list[dict], setting: EvaluationSetting) -> dict:
    """Each measure's mean per query tag for every run: {"tags", "measures": [{"label",
    "rows": [(run, [mean or None per tag])]}]}; empty without tagged queries."""
    # Only tagged queries are read: decoding every query's empty tag list costs more than
    # the rest of a refreshed dashboard.
    tags_of = dict(
        Query.objects.filter(project=setting.project).exclude(tags=[]).values_list("pk", "tags")
    )
    tags = sorted({t for values in tags_of.values() for t in values})
    if not tags or not rows:
        return {"tags": [], "measures": []}
    measures = []
    masks: dict[str, dict[str, np.ndarray]] = {}
    for name, label in setting.measures:
        table = []
        for row in rows:
            scores = row["scores"]
            level = scores.gold.units.level
            if level not in masks:
                pks = scores.gold.query_pks.tolist()
                masks[level] = {
                    t: np.array([t in tags_of.get(q, ()) for q in pks], bool) for t in tags
                }
            values = scores.values[name]
            table.append(
                (
                    row["run"],
                    [
                        float(values[masks[level][t]].mean()) if masks[level][t].any() else None
                        for t in tags
                    ],
                )
            )
        measures.append({"label": label, "rows": table})
    # A tag none of whose queries has gold would be a column of dashes: left out.
    keep = [
        i
        for i in range(len(tags))
        if any(values[i] is not None for m in measures for _run, values in m["rows"])
    ]
    if not keep:
        return {"tags": [], "measures": []}
    for measure in measures:
        measure["rows"] = [(run, [values[i] for i in keep]) for run, values in measure["rows"]]
    return {"tags": [tags[i] for i in keep], "measures": measures}


def query_scores(run: Run, setting: EvaluationSetting) -> RunScores:
    """The run's per-query values of the setting's measures and its judged share, in the
    order of the gold's query pks (what ``per_query`` shows, without the queries)."""
    setting = setting.for_run(run)
    return evaluate_run(run, setting.gold, [*setting.names, setting.judged])


def per_query(
    run: Run, setting: EvaluationSetting, *, queries: bool = True
) -> tuple[RunScores, list[dict]]:
    """The run's scores and one row per gold query (in query pk order) with its ``pk``,
    ``qid`` and value of every measure (``values``), and with ``queries`` its ``Query``
    (without, a page shows some rows' queries: ``attach_queries``)."""
    scores = query_scores(run, setting)
    at = setting.for_run(run)
    names = [*at.names, at.judged]
    pks = scores.gold.query_pks.tolist()
    columns = [scores.values[name].astype(float).tolist() for name in names]
    rows = [
        {"pk": pk, "qid": qid, "values": dict(zip(names, values, strict=True))}
        for pk, qid, *values in zip(pks, scores.gold.qids, *columns, strict=True)
    ]
    if queries:
        attach_queries(rows)
    return scores, rows


def attach_queries(rows: list[dict]) -> None:
    """Give each row of ``per_query`` its ``Query`` (one read)."""
    found = Query.objects.in_bulk([row["pk"] for row in rows])
    for row in rows:
        row["query"] = found[row["pk"]]


@dataclass(frozen=True)
class _Fragmentation:
    counts: FragmentationCounts
    mark: tuple  # the label state's when the counts were brought up to date

    @property
    def nbytes(self) -> int:
        return self.counts.nbytes


def diagnostics(run: Run, setting: EvaluationSetting) -> dict:
    """Evidence fragmentation over the run's chunking and gold coverage of the run.

    The evidence is the setting's own: the frozen gold set's labels, or the live labels
    of its sources. The fragmentation's counts are kept per query, per process and in a
    file under the label file's version (``metrics.kept_values``), for the chunking's
    units, the mapping and the sources; after label changes only the changed queries'
    counts are derived again (a query's counts depend on its own evidence alone): a new
    process behind the live labels no longer maps every label onto every chunk.
    """
    setting = setting.for_run(run)
    gold = setting.gold
    state = gold.state or label_state(run.project, gold.gold_set)
    sources = gold.sources if gold.gold_set is None else None
    chunks = level_units(run.project, run.chunking.name)
    key = (
        "fragmentation",
        state.key,
        chunks.fingerprint,
        str(setting.mapping),
        sources.key if sources is not None else None,
    )

    def read() -> _Fragmentation | None:  # a new process: as kept at the label file's version
        found = kept_values.read_named(DIAGNOSTICS, key, state)
        if found is None or set(found[1]) != set(FragmentationCounts.NAMES):
            return None
        named = (found[1][name] for name in FragmentationCounts.NAMES)
        return _Fragmentation(FragmentationCounts(found[0], *named), (state.epoch, 0))

    def count(labels) -> FragmentationCounts:
        return fragmentation_counts(
            SpanArrays(labels.document, labels.start, labels.end),
            SpanArrays(chunks.document, chunks.start, chunks.end),
            grade=labels.grade,
            policy=setting.mapping,
            query=labels.query,
        )

    def update(kept: _Fragmentation, changed: np.ndarray) -> _Fragmentation:
        fresh = count(counted_labels(state, sources, changed))
        return _Fragmentation(kept.counts.splice(fresh, changed), state.mark)

    def write(kept: _Fragmentation) -> None:
        counts = kept.counts
        kept_values.write_named(DIAGNOSTICS, key, state, counts.query, counts.named)

    kept = kept_values.brought_up_to_date(
        key,
        state,
        read=read,
        update=update,
        derive=lambda: _Fragmentation(count(counted_labels(state, sources)), state.mark),
        write=write,
    )
    result = fragmentation_figures(kept.counts, setting.mapping)
    # The run's queries at these units: its index's (kept in a file), not its ranking.
    retrieved = run_index(run, gold.units).query
    result["gold_queries_retrieved"] = int(np.isin(gold.query_pks, retrieved).sum())
    result["gold_queries"] = len(gold.query_pks)
    return result


DIAGNOSTICS = kept_values.DIAGNOSTICS


def ranking(
    run: Run, query: Query, setting: EvaluationSetting, depth: int
) -> tuple[list[dict], dict]:
    """The query's top ``depth`` units in the run's ranking with their grades, and the
    rank of the first relevant unit and the gold units missed in the top k."""
    gold = setting.for_run(run).gold
    ranked = ranked_run(run, gold.units, keep=True)
    rows = ranked.rows(query.pk)
    unit, score = ranked.item[rows], ranked.score[rows]
    in_query = gold.grades.query == query.pk
    grades = dict(
        zip(gold.grades.unit[in_query].tolist(), gold.grades.grade[in_query].tolist(), strict=True)
    )
    rank_of = {u: r for r, u in enumerate(unit.tolist(), start=1)}
    threshold = gold.threshold
    first_relevant = next(
        (r for r, u in enumerate(unit.tolist(), start=1) if grades.get(u, -1) >= threshold), None
    )
    missed = sorted(
        (
            {"unit": u, "grade": g, "rank": rank_of.get(u)}
            for u, g in grades.items()
            if g >= threshold and (rank_of.get(u) is None or rank_of[u] > setting.k)
        ),
        key=lambda m: (-m["grade"], m["rank"] or 10**9),
    )
    items = [
        {"unit": u, "rank": r, "score": float(s), "grade": grades.get(u)}
        for r, (u, s) in enumerate(
            zip(unit[:depth].tolist(), score[:depth].tolist(), strict=True), start=1
        )
    ]
    attach_text(items + missed, gold.units)
    return items, {"first_relevant": first_relevant, "missed": missed, "n": int(unit.size)}


def attach_text(items: list[dict], units: Units) -> None:
    """Give each item (a dict with a ``unit`` index) its id, title, page and snippet."""
    documents = {
        d.pk: d
        for d in Document.objects.filter(
            pk__in={int(units.document[i["unit"]]) for i in items}
        ).only("doc_id", "title", "text", "page_starts")
    }
    for item in items:
        index = item["unit"]
        document = documents[int(units.document[index])]
        start, end = int(units.start[index]), int(units.end[index])
        text = document.text[start:end]
        item.update(
            id=str(units.ids[index]),
            title=document.title,
            page=document.page_of(start),
            snippet=text[:SNIPPET] + ("…" if len(text) > SNIPPET else ""),
        )


def _query_values(run: Run, query: Query, setting: EvaluationSetting) -> list:
    """(label, the run's value on this query or None if the query has no gold) per measure."""
    scores = evaluate_run(run, setting.gold, setting.names)
    positions, found = lookup(setting.gold.query_pks, np.array([query.pk]))
    index, in_gold = int(positions[0]), bool(found[0])
    return [
        (label, float(scores.values[name][index]) if in_gold else None)
        for name, label in setting.measures
    ], scores


def drill_context(run: Run, query: Query, setting: EvaluationSetting, other: Run | None) -> dict:
    """The drill-down of one query: its ranking, its values, the run's means and, side by
    side, a second run's ranking aligned by rank with its own values on the query."""
    own = setting.for_run(run)
    depth = max(own.k, 20)
    items, info = ranking(run, query, own, depth)
    query_values, scores = _query_values(run, query, own)
    positions, found = lookup(own.gold.query_pks, np.array([query.pk]))
    coverage = run_coverage(run, own.gold, own.k)
    context = {
        "coverage": coverage.at(int(positions[0])) if found[0] else None,
        "sources": own.source_names,
        "items": items,
        "info": info,
        "query_values": query_values,
        "summary": [(label, scores.mean(name)) for name, label in own.measures],
        "other": other,
        "other_items": None,
    }
    if other is not None and setting.can_evaluate(other):
        other_setting = setting.for_run(other)
        other_items, _info = ranking(other, query, other_setting, depth)
        other_values, _scores = _query_values(other, query, other_setting)
        context["other_items"] = other_items
        context["side_by_side"] = [
            (
                rank,
                items[rank - 1] if rank <= len(items) else None,
                other_items[rank - 1] if rank <= len(other_items) else None,
            )
            for rank in range(1, max(len(items), len(other_items)) + 1)
        ]
        context["values_side_by_side"] = [
            (label, mine, theirs)
            for (label, mine), (_label, theirs) in zip(query_values, other_values, strict=True)
        ]
    return context


def unit_evidence(units: Units, index: int) -> Evidence:
    """The span a grade of unit ``index`` is stored against (a chunk, page or document)."""
    if units.level == DOCUMENTS:
        return Evidence.for_document(Document.objects.get(pk=int(units.pk[index])))
    document = Document.objects.get(pk=int(units.document[index]))
    if units.level == PAGES:
        number = int(str(units.ids[index]).rsplit("#p", 1)[1])
        if not document.page_starts:
            return Evidence.for_document(document)
        return Evidence.for_page(document, number)
    return Evidence.for_chunk(Chunk.objects.select_related("document").get(pk=int(units.pk[index])))


def aligned_values(
    runs: list[Run], setting: EvaluationSetting, names: list[str]
) -> tuple[np.ndarray, list[dict[str, np.ndarray]]]:
    """Per-query values of each run on the queries judged at every run's level (at level
    ``own`` the levels may differ), in query pk order: (query pks, one dict per run)."""
    golds = [setting.gold_for(run) for run in runs]
    common = golds[0].query_pks
    for gold in golds[1:]:
        common = np.intersect1d(common, gold.query_pks)
    values = []
    for run, gold in zip(runs, golds, strict=True):
        scores = evaluate_run(run, gold, names)
        rows = np.searchsorted(gold.query_pks, common)
        values.append({name: scores.values[name][rows] for name in names})
    return common, values


def p_text(p: float | None) -> str:
    """A p-value as printed: four decimals, "< 0.0001" below that, "—" when undefined."""
    if p is None:
        return "—"
    return "< 0.0001" if p < 0.0001 else f"{p:.4f}"
