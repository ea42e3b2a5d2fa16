"""What the metric pages show: run rows, per-query values, drill-down rankings, comparisons."""

from __future__ import annotations

import numpy as np

from annotator.labels import Evidence
from annotator.models import Chunk, Document, Project, Query
from gold.units import DOCUMENTS, PAGES, Units, frozen_labels, live_labels, units_for_level
from numerics.mapping import fragmentation
from numerics.significance import against_baseline
from numerics.spans import SpanArrays

from . import charts
from .evaluation import (
    LOW_COVERAGE,
    EvaluationSetting,
    RunScores,
    can_evaluate,
    evaluate_run,
    lookup,
)
from .models import Run
from .rankings import ranked_run

SNIPPET = 400  # characters of a unit's text shown in a drill-down


def run_rows(project: Project, setting: EvaluationSetting) -> list[dict]:
    """One row per run that can be evaluated at the level: means with 95 % intervals."""
    names = [*setting.names, setting.judged]
    rows = []
    for run in Run.objects.filter(project=project).select_related("chunking").without_results():
        if not can_evaluate(run, setting.level):
            continue
        scores = evaluate_run(run, setting.gold, names)
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
                "run": run,
                "cells": cells,
                "judged": judged,
                "low_coverage": judged < LOW_COVERAGE,
                "scores": scores,
            }
        )
    return rows


def bar_chart(rows: list[dict], setting: EvaluationSetting, requested: str) -> tuple[str, str]:
    """(SVG, measure label) of the runs' means of one measure, with their intervals."""
    name, label = setting.measure(requested)
    svg = charts.bar_chart(
        f"{label} · {setting.level}",
        [(r["run"].name, r["scores"].mean(name), r["scores"].interval(name)) for r in rows],
    )
    return svg, label


def per_query(run: Run, setting: EvaluationSetting) -> tuple[RunScores, list[dict]]:
    """The run's scores and one row per gold query with its value of every measure."""
    names = [*setting.names, setting.judged]
    scores = evaluate_run(run, setting.gold, names)
    queries = {q.pk: q for q in Query.objects.filter(pk__in=setting.gold.query_pks.tolist())}
    rows = [
        {
            "query": queries[pk],
            "values": {name: float(scores.values[name][index]) for name in names},
        }
        for index, pk in enumerate(setting.gold.query_pks.tolist())
    ]
    return scores, rows


def diagnostics(run: Run, setting: EvaluationSetting) -> dict:
    """Evidence fragmentation over the run's chunking and gold coverage of the run.

    The evidence is the setting's own: the frozen gold set's labels, or the live labels.
    """
    gold_set = setting.gold.gold_set
    labels = frozen_labels(gold_set) if gold_set else live_labels(run.project)
    chunks = units_for_level(run.project, run.chunking.name)
    result = fragmentation(
        SpanArrays(labels.document, labels.start, labels.end),
        SpanArrays(chunks.document, chunks.start, chunks.end),
        grade=labels.grade,
        policy=setting.mapping,
        query=labels.query,
    )
    retrieved = ranked_run(run, setting.gold.units).query
    result["gold_queries_retrieved"] = int(np.isin(setting.gold.query_pks, retrieved).sum())
    result["gold_queries"] = len(setting.gold.query_pks)
    return result


def ranking(
    run: Run, query: Query, setting: EvaluationSetting, depth: int
) -> tuple[list[dict], dict]:
    """The query's top ``depth`` units in the run's ranking with their grades, and the
    rank of the first relevant unit and the gold units missed in the top k."""
    gold = setting.gold
    ranked = ranked_run(run, gold.units)
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


def drill_context(run: Run, query: Query, setting: EvaluationSetting, other: Run | None) -> dict:
    """The drill-down of one query: its ranking, its values, the run's means and,
    side by side, a second run's ranking."""
    depth = max(setting.k, 20)
    items, info = ranking(run, query, setting, depth)
    scores = evaluate_run(run, setting.gold, setting.names)
    positions, found = lookup(setting.gold.query_pks, np.array([query.pk]))
    index, in_gold = int(positions[0]), bool(found[0])
    other_items = None
    if other is not None and can_evaluate(other, setting.level):
        other_items, _info = ranking(other, query, setting, depth)
    return {
        "items": items,
        "info": info,
        "query_values": [
            (label, float(scores.values[name][index]) if in_gold else None)
            for name, label in setting.measures
        ],
        "summary": [(label, scores.mean(name)) for name, label in setting.measures],
        "other": other,
        "other_items": other_items,
    }


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


def comparison(runs: list[Run], setting: EvaluationSetting, measure: tuple[str, str]) -> dict:
    """Runs against the first (the baseline) on one measure: per-query paired tests with
    Holm's correction over the comparisons, and the per-query differences of the second."""
    name, label = measure
    scores = [evaluate_run(r, setting.gold, [name]).values[name] for r in runs]
    base = scores[0]
    rows = against_baseline(base, scores[1:])
    for run, row in zip(runs[1:], rows, strict=True):
        row["run"] = run
    return {
        "baseline": runs[0],
        "base_mean": float(base.mean()),
        "rows": rows,
        "delta_chart": charts.delta_chart(
            f"{label}: {runs[1].name} − {runs[0].name} per query", (scores[1] - base).tolist()
        ),
    }
