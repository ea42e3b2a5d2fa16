"""Metric dashboards, run pages, drill-downs, comparisons and exports.

Every view resolves the project through ``get_project_for_user`` (outsiders: 404); every
member may read metrics, and those who may label can grade from a drill-down.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotator.access import can_label, get_project_for_user
from annotator.labels import Evidence, change_label
from annotator.models import Chunk, Document, Query
from gold.units import DOCUMENTS, PAGES, levels
from numerics.mapping import fragmentation
from numerics.significance import (
    diff_ci,
    holm,
    paired_randomization_test,
    paired_t_test,
    wins_ties_losses,
)
from numerics.spans import SpanArrays
from web.downloads import attachment
from web.spreadsheets import append

from . import charts
from .evaluation import (
    LOW_COVERAGE,
    LevelMismatch,
    can_evaluate,
    dashboard_measures,
    evaluate_run,
    load_gold,
    lookup,
    qrels_lines,
    run_at_level,
    run_lines,
)
from .forms import DashboardForm, JudgeForm
from .models import Run


@dataclass
class Setting:
    """A validated dashboard setting: gold, level, k, mapping, and the loaded gold grades."""

    form: DashboardForm
    gold: object
    k: int
    measures: list[tuple[str, str]]

    @property
    def level(self) -> str:
        return self.form.cleaned_data["level"]

    @property
    def query_string(self) -> str:
        return self.form.query_string()


def _setting(request, project) -> Setting | None:
    form = DashboardForm(request.GET, project=project)
    if not form.is_valid():
        return None
    data = form.cleaned_data
    gold = load_gold(project, data["level"], gold_set=data["gold"], mapping=data["mapping"])
    return Setting(form, gold, data["k"], dashboard_measures(data["k"]))


def _get_run_for_user(request, slug: str, pk: int):
    project, membership = get_project_for_user(request, slug)
    run = get_object_or_404(Run.objects.without_results(), project=project, pk=pk)
    return project, membership, Run.objects.get(pk=run.pk)


def _bad(message: str) -> HttpResponseBadRequest:
    return HttpResponseBadRequest(message)


def _run_rows(project, setting: Setting) -> list[dict]:
    names = [name for name, _label in setting.measures] + [f"Judged@{setting.k}"]
    rows = []
    for run in Run.objects.filter(project=project).select_related("chunking"):
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
        judged = scores.mean(f"Judged@{setting.k}")
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


def _chart_measure(setting: Setting, requested: str) -> tuple[str, str]:
    for name, label in setting.measures:
        if requested in (name, label):
            return name, label
    return setting.measures[6]  # nDCG@k


@login_required
@require_GET
def dashboard(request, slug: str):
    project, membership = get_project_for_user(request, slug)
    setting = _setting(request, project)
    if setting is None:
        return _bad(_("Bad dashboard parameters."))
    rows = _run_rows(project, setting)
    chart_name, chart_label = _chart_measure(setting, setting.form.cleaned_data["chart"])
    chart = charts.bar_chart(
        f"{chart_label} · {setting.level}",
        [
            (r["run"].name, r["scores"].mean(chart_name), r["scores"].interval(chart_name))
            for r in rows
        ],
    )
    context = {
        "project": project,
        "membership": membership,
        "setting": setting,
        "rows": rows,
        "levels": levels(project),
        "gold_sets": project.gold_sets.all(),
        "chart": chart,
        "chart_name": chart_label,
        "n_queries": len(setting.gold.query_pks),
        "low_coverage": LOW_COVERAGE,
    }
    if request.htmx:
        return render(request, "metrics/partials/dashboard_table.html", context)
    return render(request, "metrics/dashboard.html", context)


@login_required
@require_GET
def dashboard_chart(request, slug: str):
    """The dashboard's bar chart as an SVG file."""
    project, _membership = get_project_for_user(request, slug)
    setting = _setting(request, project)
    if setting is None:
        return _bad(_("Bad dashboard parameters."))
    rows = _run_rows(project, setting)
    name, label = _chart_measure(setting, setting.form.cleaned_data["chart"])
    svg = charts.bar_chart(
        f"{label} · {setting.level}",
        [(r["run"].name, r["scores"].mean(name), r["scores"].interval(name)) for r in rows],
    )
    return _svg_download(svg, f"{project.slug}-{label}.svg")


def _svg_download(svg: str, filename: str) -> HttpResponse:
    return attachment(svg, "image/svg+xml; charset=utf-8", filename)


def _per_query(run: Run, setting: Setting):
    names = [name for name, _label in setting.measures] + [f"Judged@{setting.k}"]
    scores = evaluate_run(run, setting.gold, names)
    queries = {q.pk: q for q in Query.objects.filter(pk__in=setting.gold.query_pks.tolist())}
    rows = []
    for index, pk in enumerate(setting.gold.query_pks.tolist()):
        rows.append(
            {
                "query": queries[pk],
                "values": {name: float(scores.values[name][index]) for name in names},
            }
        )
    return scores, rows


@login_required
@require_GET
def run_detail(request, slug: str, pk: int):
    project, membership, run = _get_run_for_user(request, slug, pk)
    setting = _setting(request, project)
    if setting is None:
        return _bad(_("Bad parameters."))
    if not can_evaluate(run, setting.level):
        return _bad(_("This run cannot be evaluated at that level."))
    scores, rows = _per_query(run, setting)
    data = setting.form.cleaned_data
    sort_name = next(
        (n for n, label in setting.measures if data["sort"] in (n, label)), setting.measures[6][0]
    )
    if data["tag"]:
        rows = [r for r in rows if data["tag"] in r["query"].tags]
    rows.sort(key=lambda r: (r["values"][sort_name], r["query"].qid), reverse=data["desc"])
    tags = sorted({t for q in project.queries.values_list("tags", flat=True) for t in q})
    context = {
        "project": project,
        "membership": membership,
        "run": run,
        "setting": setting,
        "rows": rows,
        "sort_name": sort_name,
        "tags": tags,
        "histogram": charts.histogram(
            f"{sort_name} per query · {run.name}", [r["values"][sort_name] for r in rows]
        ),
        "summary": [(label, scores.mean(name)) for name, label in setting.measures],
        "diagnostics": _diagnostics(run, setting) if run.chunking_id else None,
        "judged": scores.mean(f"Judged@{setting.k}"),
    }
    if request.htmx:
        return render(request, "metrics/partials/run_queries.html", context)
    return render(request, "metrics/run_detail.html", context)


def _diagnostics(run: Run, setting: Setting) -> dict:
    """Evidence fragmentation over the run's chunking and gold coverage of the run."""
    from gold.units import live_labels, units_for_level

    labels = live_labels(run.project)
    chunks = units_for_level(run.project, run.chunking.name)
    result = fragmentation(
        SpanArrays(labels.document, labels.start, labels.end),
        SpanArrays(chunks.document, chunks.start, chunks.end),
        grade=labels.grade,
        policy=setting.form.cleaned_data["mapping"],
        query=labels.query,
    )
    query_pk, _unit, _score = run_at_level(run, setting.gold.units)
    result["gold_queries_retrieved"] = int(
        np.isin(setting.gold.query_pks, np.unique(query_pk)).sum()
    )
    result["gold_queries"] = len(setting.gold.query_pks)
    return result


@login_required
@require_GET
def run_query(request, slug: str, pk: int, query_pk: int):
    """Drill-down: one query's ranking with grades, missed gold and a second run."""
    project, membership, run = _get_run_for_user(request, slug, pk)
    query = get_object_or_404(Query, project=project, pk=query_pk)
    setting = _setting(request, project)
    if setting is None:
        return _bad(_("Bad parameters."))
    other = None
    if request.GET.get("other"):
        if not request.GET["other"].isdigit():
            return _bad(_("Bad comparison run."))
        other = get_object_or_404(Run, project=project, pk=int(request.GET["other"]))
    try:
        context = _drill_context(project, membership, run, query, setting, other)
    except LevelMismatch:
        return _bad(_("This run cannot be evaluated at that level."))
    template = "metrics/partials/drilldown.html" if request.htmx else "metrics/run_query.html"
    return render(request, template, context)


def _ranking(run: Run, query: Query, setting: Setting, depth: int) -> tuple[list[dict], dict]:
    gold = setting.gold
    units = gold.units
    query_pk, unit, score = run_at_level(run, units)
    mine = query_pk == query.pk
    unit, score = unit[mine], score[mine]
    order = np.lexsort((-gold.code[unit], -score))
    unit, score = unit[order], score[order]
    in_query = gold.grades.query == query.pk
    grades = dict(
        zip(gold.grades.unit[in_query].tolist(), gold.grades.grade[in_query].tolist(), strict=True)
    )
    rank_of = {u: r for r, u in enumerate(unit.tolist(), start=1)}
    threshold = gold.threshold
    first_relevant = next(
        (r for r, u in enumerate(unit.tolist(), start=1) if grades.get(u, -1) >= threshold), None
    )
    top = unit[:depth].tolist()
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
        for r, (u, s) in enumerate(zip(top, score[:depth].tolist(), strict=True), start=1)
    ]
    _attach_text(items + missed, units)
    return items, {"first_relevant": first_relevant, "missed": missed, "n": int(unit.size)}


def _attach_text(items: list[dict], units) -> None:
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
            snippet=text[:400] + ("…" if len(text) > 400 else ""),
        )


def _drill_context(project, membership, run, query, setting, other) -> dict:
    depth = max(setting.k, 20)
    items, info = _ranking(run, query, setting, depth)
    names = [name for name, _label in setting.measures]
    scores = evaluate_run(run, setting.gold, names)
    positions, found = lookup(setting.gold.query_pks, np.array([query.pk]))
    index, in_gold = int(positions[0]), bool(found[0])
    query_values = [
        (label, float(scores.values[name][index]) if in_gold else None)
        for name, label in setting.measures
    ]
    other_items = None
    if other is not None and can_evaluate(other, setting.level):
        other_items, _info = _ranking(other, query, setting, depth)
    return {
        "project": project,
        "membership": membership,
        "run": run,
        "query": query,
        "setting": setting,
        "items": items,
        "info": info,
        "query_values": query_values,
        "summary": [(label, scores.mean(name)) for name, label in setting.measures],
        "other": other,
        "other_items": other_items,
        "runs": Run.objects.filter(project=project).exclude(pk=run.pk).without_results(),
        "may_label": can_label(membership),
        "grade_labels": project.grade_labels,
    }


@login_required
@require_POST
def judge(request, slug: str, pk: int, query_pk: int):
    """Grade a unit of the drill-down; the query's metrics are recomputed in place."""
    project, membership, run = _get_run_for_user(request, slug, pk)
    if not can_label(membership):
        raise PermissionDenied("Viewers cannot label")
    query = get_object_or_404(Query, project=project, pk=query_pk)
    setting = _setting(request, project)
    form = JudgeForm(request.POST)
    if setting is None or not form.is_valid():
        return _bad(_("Bad grade."))
    units = setting.gold.units
    unit = form.cleaned_data["unit"]
    if unit >= len(units.ids):
        return _bad(_("No such unit."))
    evidence = _evidence_for(units, unit)
    change_label(
        query=query, annotator=request.user, evidence=evidence, grade=form.cleaned_data["grade"]
    )
    setting = _setting(request, project)  # reload the gold: the label changed it
    other = None
    if request.GET.get("other", "").isdigit():
        other = Run.objects.filter(project=project, pk=int(request.GET["other"])).first()
    context = _drill_context(project, membership, run, query, setting, other)
    response = render(request, "metrics/partials/drilldown.html", context)
    response["HX-Trigger"] = "labels-changed"
    return response


def _evidence_for(units, index: int) -> Evidence:
    if units.level == DOCUMENTS:
        return Evidence.for_document(Document.objects.get(pk=int(units.pk[index])))
    document = Document.objects.get(pk=int(units.document[index]))
    if units.level == PAGES:
        number = int(str(units.ids[index]).rsplit("#p", 1)[1])
        if not document.page_starts:
            return Evidence.for_document(document)
        return Evidence.for_page(document, number)
    return Evidence.for_chunk(Chunk.objects.select_related("document").get(pk=int(units.pk[index])))


@login_required
@require_GET
def compare(request, slug: str):
    project, membership = get_project_for_user(request, slug)
    setting = _setting(request, project)
    ids = request.GET.getlist("runs")
    if setting is None or not all(i.isdigit() for i in ids):
        return _bad(_("Bad comparison parameters."))
    runs = list(Run.objects.filter(project=project, pk__in=[int(i) for i in ids]))
    runs.sort(key=lambda r: ids.index(str(r.pk)))
    runs = [r for r in runs if can_evaluate(r, setting.level)]
    name, label = _chart_measure(setting, setting.form.cleaned_data["chart"])
    context = {
        "project": project,
        "membership": membership,
        "setting": setting,
        "all_runs": Run.objects.filter(project=project).without_results(),
        "selected": [r.pk for r in runs],
        "measure": label,
    }
    if len(runs) >= 2:
        scores = [evaluate_run(r, setting.gold, [name]).values[name] for r in runs]
        base = scores[0]
        rows = []
        for run, values in zip(runs[1:], scores[1:], strict=True):
            t = paired_t_test(values, base)
            interval = diff_ci(values, base)
            rows.append(
                {
                    "run": run,
                    "mean": float(values.mean()),
                    "delta": float(values.mean() - base.mean()),
                    "wtl": wins_ties_losses(values, base),
                    "p_randomization": paired_randomization_test(values, base),
                    "p_t": t[1] if t else None,
                    "low": interval[0] if interval else None,
                    "high": interval[1] if interval else None,
                }
            )
        adjusted = holm([r["p_randomization"] for r in rows])
        for row, p in zip(rows, adjusted, strict=True):
            row["p_holm"] = float(p)
            row["significant"] = p < 0.05
        context.update(
            baseline=runs[0],
            base_mean=float(base.mean()),
            rows=rows,
            delta_chart=charts.delta_chart(
                f"{label}: {runs[1].name} − {runs[0].name} per query",
                (scores[1] - base).tolist(),
            ),
        )
    template = "metrics/partials/compare_table.html" if request.htmx else "metrics/compare.html"
    return render(request, template, context)


@login_required
@require_GET
def export_metrics(request, slug: str):
    """Means per run, or per-query values (with ``run``), as CSV or XLSX."""
    project, _membership = get_project_for_user(request, slug)
    setting = _setting(request, project)
    fmt = request.GET.get("format", "csv")
    if setting is None or fmt not in ("csv", "xlsx"):
        return _bad(_("Bad export parameters."))
    labels = [label for _name, label in setting.measures]
    if request.GET.get("run"):
        if not request.GET["run"].isdigit():
            return _bad(_("Bad run."))
        run = get_object_or_404(Run, project=project, pk=int(request.GET["run"]))
        if not can_evaluate(run, setting.level):
            return _bad(_("This run cannot be evaluated at that level."))
        _scores, rows = _per_query(run, setting)
        header = ["qid", "query", *labels]
        table = [
            [r["query"].qid, r["query"].text, *(r["values"][n] for n, _label in setting.measures)]
            for r in rows
        ]
        filename = f"{project.slug}-{run.name}-per-query"
    else:
        header = ["run", "level", "gold", *labels, "low/high (95 % bootstrap) per measure"]
        table = []
        for row in _run_rows(project, setting):
            table.append(
                [
                    row["run"].name,
                    setting.level,
                    setting.gold.description["gold"],
                    *(c["mean"] for c in row["cells"]),
                    "; ".join(
                        f"{c['label']} {c['low']:.4f}–{c['high']:.4f}"
                        for c in row["cells"]
                        if c["low"] is not None
                    ),
                ]
            )
        filename = f"{project.slug}-runs"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(header)
        for line in table:
            # Text cells that start like a formula are prefixed so spreadsheets show text.
            writer.writerow(
                [f"'{c}" if isinstance(c, str) and c[:1] in "=+-@" else c for c in line]
            )
        content, content_type = out.getvalue(), "text/csv; charset=utf-8"
    else:
        from openpyxl import Workbook

        book = Workbook(write_only=True)
        sheet = book.create_sheet("metrics")
        append(sheet, header)
        for line in table:
            append(sheet, line)
        out = io.BytesIO()
        book.save(out)
        content = out.getvalue()
        content_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    return attachment(content, content_type, f"{filename}.{fmt}")


@login_required
@require_GET
def run_file(request, slug: str, pk: int):
    """The run as a TREC file at the chosen level (what `evaluate` reads)."""
    project, _membership, run = _get_run_for_user(request, slug, pk)
    setting = _setting(request, project)
    if setting is None or not can_evaluate(run, setting.level):
        return _bad(_("Bad parameters."))
    return attachment(
        "\n".join(run_lines(run, setting.gold)) + "\n",
        "text/plain; charset=utf-8",
        f"{run.name}-{setting.level}.run",
    )


@login_required
@require_GET
def qrels_file(request, slug: str):
    """The gold grades of the dashboard setting as TREC qrels."""
    project, _membership = get_project_for_user(request, slug)
    setting = _setting(request, project)
    if setting is None:
        return _bad(_("Bad parameters."))
    return attachment(
        "\n".join(qrels_lines(setting.gold)) + "\n",
        "text/plain; charset=utf-8",
        f"{project.slug}-{setting.level}.qrels",
    )


@login_required
@require_GET
def run_histogram(request, slug: str, pk: int):
    project, _membership, run = _get_run_for_user(request, slug, pk)
    setting = _setting(request, project)
    if setting is None or not can_evaluate(run, setting.level):
        return _bad(_("Bad parameters."))
    _scores, rows = _per_query(run, setting)
    name, label = _chart_measure(setting, setting.form.cleaned_data["sort"])
    svg = charts.histogram(f"{label} per query · {run.name}", [r["values"][name] for r in rows])
    return _svg_download(svg, f"{run.name}-{label}.svg")
