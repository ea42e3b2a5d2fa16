"""Metric downloads: metric tables (CSV, XLSX), TREC run and qrels files, SVG charts."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotator.access import get_project_for_user
from web.downloads import attachment
from web.errors import answers_bad_parameters
from web.spreadsheets import csv_text, xlsx_bytes

from . import charts, reports
from .access import get_run_for_user, project_run
from .forms import MetricsExportForm, dashboard_form, run_setting
from .tables import metrics_export
from .trec_lines import gold_qrels_lines, run_lines

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
TEXT = "text/plain; charset=utf-8"
SVG = "image/svg+xml; charset=utf-8"


@login_required
@require_GET
def export_metrics(request: HttpRequest, slug: str) -> HttpResponse:
    """Means per run, or per-query values (with ``run``), as CSV or XLSX."""
    project, membership = get_project_for_user(request, slug)
    form = MetricsExportForm(request.GET, membership=membership)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad export parameters."))
    data = form.cleaned_data
    run = project_run(project, data["run"]) if data["run"] else None
    exported = metrics_export(form.setting(), run=run, run_tag=data["run_tag"], param=data["param"])
    if exported is None:
        return HttpResponseBadRequest(_("This run cannot be evaluated at that level."))
    name, policy = exported.name, exported.policy
    if form.cleaned_data["format"] == "csv":
        text = csv_text(exported.header, exported.table)
        return attachment(text, "text/csv; charset=utf-8", f"{name}.csv", policy=policy)
    return attachment(xlsx_bytes(exported.sheets()), XLSX, f"{name}.xlsx", policy=policy)


@login_required
@require_GET
@answers_bad_parameters
def dashboard_chart(request: HttpRequest, slug: str) -> HttpResponse:
    """The dashboard's bar chart as an SVG file."""
    project, membership = get_project_for_user(request, slug)
    setting = dashboard_form(request, membership).setting()
    rows = reports.run_rows(project, setting)
    svg = reports.bar_chart(rows, setting, setting.chart_names)
    return attachment(svg, SVG, f"{project.slug}-{'-'.join(setting.chart_names)}.svg")


@login_required
@require_GET
@answers_bad_parameters
def run_file(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The run as a TREC file at the chosen level, in its ranking (what `evaluate` reads)."""
    _project, membership, run = get_run_for_user(request, slug, pk)
    setting = run_setting(dashboard_form(request, membership), run)
    content = "\n".join(run_lines(run, setting.gold)) + "\n"
    return attachment(content, TEXT, f"{run.name}-{setting.level}.run")


@login_required
@require_GET
@answers_bad_parameters
def qrels_file(request: HttpRequest, slug: str) -> HttpResponse:
    """The gold grades of the dashboard setting as TREC qrels."""
    project, membership = get_project_for_user(request, slug)
    setting = dashboard_form(request, membership).setting()
    if setting.own:
        return HttpResponseBadRequest(_("Choose a level: documents, pages or a chunking."))
    content = "\n".join(gold_qrels_lines(setting.gold)) + "\n"
    return attachment(
        content, TEXT, f"{project.slug}-{setting.level}.qrels", policy=setting.gold.description
    )


@login_required
@require_GET
@answers_bad_parameters
def run_histogram(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The run page's histogram of one measure's per-query values as an SVG file."""
    _project, membership, run = get_run_for_user(request, slug, pk)
    form = dashboard_form(request, membership)
    setting = run_setting(form, run)
    scores = reports.query_scores(run, setting)  # the values alone: no query is read
    name, label = setting.measure(form.cleaned_data["sort"])
    title = _("%(measure)s per query · %(run)s") % {"measure": label, "run": run.name}
    svg = charts.histogram(title, scores.values[name].astype(float).tolist())
    return attachment(svg, SVG, f"{run.name}-{label}.svg")
