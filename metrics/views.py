"""Metric dashboards, run pages, drill-downs with grading, and run comparisons.

Every view resolves the project through ``get_project_for_user`` (outsiders: 404), runs
through ``get_run_for_user``; the gold a page measures against is one the member may read
(``DashboardForm`` asks ``annotator.access``: annotators, who label blind, read released
gold sets only). Those who read the live grades and may label can grade from a
drill-down against the live labels. What the pages show is built in ``metrics.reports``; the file
downloads live in ``metrics.file_views``.
"""

from __future__ import annotations

import functools
import json
import re

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotator.access import (
    NoGoldToRead,
    can_label,
    get_project_for_user,
    readable_gold_sets,
    reads_live_grades,
    require_grades,
)
from annotator.labels import change_label
from annotator.models import Membership, Query
from annotator.sources import source_choices
from gold.units import level_units, levels
from web.errors import BadParameters, answers_bad_parameters
from web.htmx import for_htmx
from web.pages import page_of
from web.sections import sections

from . import charts, reports
from .access import get_run_for_user, project_run
from .compared import chosen_runs, compare_runs
from .evaluation import (
    LOW_COVERAGE,
    MEASURE_CATALOGUE,
    OWN,
    EvaluationSetting,
    LevelMismatch,
    coarse_label_warning,
    measure_catalogue,
    own_level,
)
from .forms import (
    DashboardForm,
    DrilldownGradeForm,
    MeasureChoiceForm,
    SourceRankingForm,
    dashboard_form,
    run_setting,
)
from .models import MeasureChoice, Run
from .source_rankings import compare_sources


def _valid_form(request: HttpRequest, membership: Membership) -> DashboardForm | None:
    form = DashboardForm(request.GET, membership=membership)
    return form if form.is_valid() else None


def _gold_choices(membership: Membership) -> dict:
    """What the setting form offers: live labels if the member reads them (and whose
    labels count), readable sets."""
    live = reads_live_grades(membership)
    return {
        "source_choices": source_choices(membership.project) if live else [],
        "live_choice": live,
        "gold_sets": readable_gold_sets(membership, membership.project.gold_sets.all()),
    }


def _may_grade(membership: Membership, setting: EvaluationSetting) -> bool:
    """Grading from a drill-down: labellers who read the live grades, on the live labels."""
    return can_label(membership) and reads_live_grades(membership) and setting.gold.gold_set is None


@functools.lru_cache(maxsize=1 << 16)
def natural_key(text: str) -> tuple:
    """Sort key reading digit runs as numbers: q2 < q10 (kept per process: a run's page
    sorts thousands of qids on every view)."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in _DIGIT_RUNS.split(text)
        if part
    )


_DIGIT_RUNS = re.compile(r"(\d+)")


def _percent(share: float | None) -> float | None:
    return None if share is None else 100 * share


@login_required
@require_GET
@for_htmx("metrics/partials/dashboard_table.html")
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    try:
        form = _valid_form(request, membership)
    except NoGoldToRead as nothing:
        context = {"project": project, "membership": membership, "nothing": nothing}
        return TemplateResponse(request, "metrics/dashboard_blind.html", context)
    if form is None:
        return HttpResponseBadRequest(_("Bad dashboard parameters."))
    setting = form.setting()
    data = form.cleaned_data
    rows = reports.run_rows(project, setting, tag=data["run_tag"], param=data["param"])
    if data["group"]:
        for row in rows:
            row["group"] = reports.group_value(row["run"], data["group"])
        rows.sort(key=lambda r: r["group"])
    context = {
        "view_query": form.view_query,
        "group": data["group"],
        "run_tags": sorted(
            {t for r in project.runs.active().values_list("tags", flat=True) for t in r}
        ),
        "parameter_keys": sorted(
            {k for p in project.runs.active().values_list("parameters", flat=True) for k in p}
        ),
        "n_archived": project.runs.exclude(archived_at=None).count(),
        "chart": reports.bar_chart(rows, setting, setting.chart_names),
        "tag_breakdown": reports.tag_breakdown(rows, setting),
        "catalogue": measure_catalogue(setting),
        "own": setting.own,
        "document_label_share": _percent(coarse_label_warning(setting, [r["run"] for r in rows])),
        "any_low_coverage": any(r["low_coverage"] for r in rows),
        "project": project,
        "membership": membership,
        "form": form,
        "setting": setting,
        "rows": rows,
        "levels": [OWN, *levels(project)],
        **_gold_choices(membership),
        "n_queries": len(setting.gold.query_pks),
        "low_coverage": LOW_COVERAGE,
        # What other apps measure in the same setting (nugget recall …), below the table.
        "sections": sections(
            "dashboard", project=project, membership=membership, setting=setting, rows=rows
        ),
    }
    return TemplateResponse(request, "metrics/dashboard.html", context)


@login_required
@require_GET
@for_htmx("metrics/partials/run_queries.html")
@answers_bad_parameters
def run_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership, run = get_run_for_user(request, slug, pk)
    form = dashboard_form(request, membership)
    setting = run_setting(form, run)
    # The queries themselves are read for the page's rows only, and tags only of the
    # queries that have any: reading and decoding thousands of queries took most of
    # a view.
    scores, rows = reports.per_query(run, setting, queries=False)
    data = form.cleaned_data
    sort_name, _label = setting.measure(data["sort"])
    tags_of = dict(project.queries.exclude(tags=[]).values_list("pk", "tags"))
    if data["tag"]:
        rows = [r for r in rows if data["tag"] in tags_of.get(r["pk"], ())]
    # Ties in qid order, numbers as numbers (q2 before q10), whichever way values go.
    rows.sort(key=lambda r: natural_key(r["qid"]))
    rows.sort(key=lambda r: r["values"][sort_name], reverse=data["desc"])
    tags = sorted({t for values in tags_of.values() for t in values})
    # A page of the per-query table (the histogram shows every query): drawing a row per
    # query of a project with thousands took seconds.
    page = page_of(request, rows)
    reports.attach_queries(page.object_list)
    for row in page.object_list:  # the page's cells in the columns' order
        row["cells"] = [row["values"].get(name) for name, _label in setting.measures]
    context = {
        "project": project,
        "membership": membership,
        "run": run,
        "parameters_json": json.dumps(run.parameters, ensure_ascii=False),
        "setting": setting,
        "rows": page.object_list,
        "page": page,
        "sort_name": sort_name,
        "desc": data["desc"],
        "current_tag": data["tag"],
        "tags": tags,
        "histogram": charts.histogram(
            _("%(measure)s per query · %(run)s") % {"measure": sort_name, "run": run.name},
            [r["values"][sort_name] for r in rows],
        ),
        "summary": [(label, scores.mean(name)) for name, label in setting.measures],
        "diagnostics": reports.diagnostics(run, setting) if run.chunking_id else None,
        "judged": scores.mean(setting.judged),
    }
    return TemplateResponse(request, "metrics/run_detail.html", context)


def _drilldown(
    request: HttpRequest,
    template: str,
    membership: Membership,
    run: Run,
    query: Query,
    setting: EvaluationSetting,
    other: Run | None,
) -> TemplateResponse:
    project = membership.project
    context = {
        "project": project,
        "membership": membership,
        "run": run,
        "query": query,
        "setting": setting,
        **reports.drill_context(run, query, setting, other),
        "runs": Run.objects.filter(project=project).exclude(pk=run.pk).without_results(),
        "may_label": _may_grade(membership, setting),
        "grade_labels": project.shown_grade_labels,
        # What other apps show about this query and run (nuggets covered at which rank …).
        "sections": sections(
            "drilldown",
            project=project,
            membership=membership,
            run=run,
            query=query,
            setting=setting,
        ),
    }
    return TemplateResponse(request, template, context)


@login_required
@require_GET
@for_htmx("metrics/partials/drilldown.html")
@answers_bad_parameters
def run_query(request: HttpRequest, slug: str, pk: int, qid: str) -> HttpResponse:
    """Drill-down: one query's ranking with grades, missed gold and a second run."""
    project, membership, run = get_run_for_user(request, slug, pk)
    query = get_object_or_404(Query, project=project, qid=qid)
    form = dashboard_form(request, membership)
    other = form.cleaned_data["other"]
    other_run = project_run(project, other) if other else None
    try:
        return _drilldown(
            request, "metrics/run_query.html", membership, run, query, form.setting(), other_run
        )
    except LevelMismatch:
        return HttpResponseBadRequest(_("This run cannot be evaluated at that level."))


@login_required
@require_POST
def judge(request: HttpRequest, slug: str, pk: int, qid: str) -> HttpResponse:
    """Grade a unit of the drill-down; the query's metrics are recomputed in place.

    The browser sends the seconds spent before the grade (``elapsed``), kept as the
    labelling screen keeps them.
    """
    project, membership, run = get_run_for_user(request, slug, pk)
    if not (can_label(membership) and reads_live_grades(membership)):
        raise PermissionDenied(_("Your role does not grade from drill-downs."))
    query = get_object_or_404(Query, project=project, qid=qid)
    form, grade_form = _valid_form(request, membership), DrilldownGradeForm(request.POST)
    if form is None or not grade_form.is_valid():
        return HttpResponseBadRequest(_("Bad grade."))
    if form.cleaned_data["gold"] is not None:
        return HttpResponseBadRequest(_("Grades are given against the live labels."))
    level = form.cleaned_data["level"]
    units = level_units(project, own_level(run) if level == OWN else level)
    unit = grade_form.cleaned_data["unit"]
    if unit >= len(units.ids):
        return HttpResponseBadRequest(_("No such unit."))
    change_label(
        query=query,
        annotator=request.user,
        evidence=reports.unit_evidence(units, unit),
        grade=grade_form.cleaned_data["grade"],
        seconds=grade_form.cleaned_data["elapsed"],
    )
    setting = form.setting()  # reload the gold: the label changed it
    other = form.cleaned_data["other"]
    other_run = Run.objects.filter(project=project, pk=other).first() if other else None
    response = _drilldown(
        request, "metrics/partials/drilldown.html", membership, run, query, setting, other_run
    )
    response["HX-Trigger"] = "labels-changed"
    return response


@login_required
@require_GET
@for_htmx("metrics/partials/compare_table.html")
def compare(request: HttpRequest, slug: str) -> HttpResponse:
    """Runs against a chosen baseline on the setting's measures, chosen as the API chooses
    them (``metrics.compared``): a run that cannot be measured at the level is named in
    a 400, never left out."""
    project, membership = get_project_for_user(request, slug)
    form = _valid_form(request, membership)
    ids = request.GET.getlist("runs")
    if form is None or not all(i.isascii() and i.isdigit() and len(i) <= 15 for i in ids):
        return HttpResponseBadRequest(_("Bad comparison parameters."))
    setting = form.setting()
    baseline_pk = form.cleaned_data["baseline"]
    active = Run.objects.filter(project=project).active().select_related("chunking")
    context = {
        "project": project,
        "membership": membership,
        "setting": setting,
        "all_runs": active.without_results(),
        "selected": [int(i) for i in ids],
        "baseline": None,
        "comparison": None,
        "problem": "",
    }
    if not ids:
        return TemplateResponse(request, "metrics/compare.html", context)
    try:
        runs = chosen_runs(project, setting, [int(i) for i in ids], baseline_pk)
    except BadParameters as error:
        context["problem"] = str(error)
        return TemplateResponse(request, "metrics/compare.html", context, status=400)
    comparison = compare_runs(runs, setting, setting.names)
    delta = setting.chart_names[0]
    context |= {
        "baseline": comparison.baseline,
        "comparison": comparison,
        "deltas": [
            {
                "run": run,
                "chart": charts.delta_chart(
                    _("%(measure)s: %(run)s − %(baseline)s, per query")
                    % {"measure": delta, "run": run.name, "baseline": comparison.baseline.name},
                    comparison.differences(run, delta).tolist(),
                    delta,
                ),
            }
            for run in comparison.others
        ],
    }
    return TemplateResponse(request, "metrics/compare.html", context)


@login_required
@require_POST
def choose_measures(request: HttpRequest, slug: str) -> HttpResponse:
    """Remember the measures the user chose for this project's dashboards; back to it."""
    project, _membership = get_project_for_user(request, slug)
    form = MeasureChoiceForm(request.POST, catalogue=MEASURE_CATALOGUE)
    if not form.is_valid():
        return HttpResponseBadRequest(" ".join(form.non_field_errors()) or _("Bad measures."))
    measures = form.cleaned_data["measures"]
    MeasureChoice.objects.update_or_create(
        user=request.user, project=project, defaults={"measures": measures}
    )
    query = request.POST.get("back", "")
    params = QueryDict(query, mutable=True)
    params.setlist("measure", measures)
    params.pop("chart", None)
    return redirect(reverse("metrics:dashboard", args=[slug]) + "?" + params.urlencode())


@login_required
@require_GET
@for_htmx("metrics/partials/source_rankings.html")
def source_rankings(request: HttpRequest, slug: str) -> HttpResponse:
    """Judge against people where it matters: the runs ranked under two sets of label
    sources on one measure, τ and τ_AP, the flipped pairs, per-query correlations."""
    project, membership = get_project_for_user(request, slug)
    require_grades(membership, None)
    data = request.GET.copy()
    data.setdefault("a", "people,assessors")
    if not data.get("b"):
        judges = [c for c in source_choices(project) if c.startswith("judge:") and "@" not in c]
        data["b"] = judges[0] if judges else "assessors"
    form = SourceRankingForm(data, project=project)
    if not form.is_valid():
        return HttpResponseBadRequest(
            " ".join(str(e) for errors in form.errors.values() for e in errors)
        )
    result = compare_sources(
        project,
        form.cleaned_data["a"],
        form.cleaned_data["b"],
        form.cleaned_data["measure"],
        **form.options(),
    )
    context = {
        "project": project,
        "membership": membership,
        "form": form,
        "result": result,
        "choices": source_choices(project),
        "levels": [OWN, *levels(project)],
    }
    return TemplateResponse(request, "metrics/source_rankings.html", context)
