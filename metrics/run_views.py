"""Managing runs: the runs page, renaming and editing, archiving, deleting, series trends.

Every member sees the runs page and a series' trend; only owners change runs. Archived
runs leave dashboards and comparisons until restored; deleting a run frees its cached
arrays in this process.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.access import get_project_for_user
from annotator.models import Role
from web.errors import BadParameters, answers_bad_parameters
from web.pages import page_of

from . import charts, run_indexes
from .access import get_run_for_user
from .evaluation import evaluate_run
from .forms import RunEditForm, dashboard_form
from .models import Run


@login_required
@require_GET
@answers_bad_parameters
def runs(request: HttpRequest, slug: str) -> HttpResponse:
    """Every run of the project, active and archived (a page of each), with the owners'
    actions."""
    project, membership = get_project_for_user(request, slug)
    project_runs = Run.objects.filter(project=project).select_related("chunking").without_results()
    active = page_of(request, project_runs.filter(archived_at__isnull=True))
    archived = page_of(
        request, project_runs.filter(archived_at__isnull=False), parameter="archived_page"
    )
    series = project_runs.exclude(series="").values_list("series", flat=True)
    context = {
        "project": project,
        "membership": membership,
        "active": active.object_list,
        "active_page": active,
        "archived": archived.object_list,
        "archived_page": archived,
        "series": sorted(set(series.order_by().distinct())),
        "may_manage": membership.role == Role.OWNER,
    }
    return TemplateResponse(request, "metrics/runs.html", context)


@login_required
@require_POST
def run_edit(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Rename a run and set its parameters, tags and series (owners)."""
    _project, _membership, run = get_run_for_user(request, slug, pk, Role.OWNER)
    form = RunEditForm(request.POST, run=run)
    if not form.is_valid():
        errors = "; ".join(e for field in form.errors.values() for e in field)
        return HttpResponseBadRequest(errors)
    data = form.cleaned_data
    Run.objects.filter(pk=run.pk).update(
        name=data["name"], parameters=data["parameters"], tags=data["tags"], series=data["series"]
    )
    return redirect(reverse("metrics:run_detail", args=[slug, run.pk]))


@login_required
@require_POST
def run_archive(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Archive (``action=archive``) or restore (``action=restore``) a run (owners)."""
    _project, _membership, run = get_run_for_user(request, slug, pk, Role.OWNER)
    action = request.POST.get("action")
    if action not in ("archive", "restore"):
        return HttpResponseBadRequest(_("Archive or restore."))
    archived_at = timezone.now() if action == "archive" else None
    Run.objects.filter(pk=run.pk).update(archived_at=archived_at)
    return redirect(reverse("metrics:runs", args=[slug]))


@login_required
@require_http_methods(["GET", "POST"])
def run_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Ask (GET), then delete (POST with ``confirm`` = the run's name) a run (owners)."""
    project, membership, run = get_run_for_user(request, slug, pk, Role.OWNER)
    if request.method == "POST":
        if request.POST.get("confirm", "").strip() != run.name:
            return HttpResponseBadRequest(_("Type the run's name to delete it."))
        run.delete()
        run_indexes.forget(pk)
        return redirect(reverse("metrics:runs", args=[slug]))
    context = {"project": project, "membership": membership, "run": run}
    return TemplateResponse(request, "metrics/run_delete.html", context)


@login_required
@require_GET
@answers_bad_parameters
def series(request: HttpRequest, slug: str) -> HttpResponse:
    """A series' builds over time: the chart's measures with their 95 % intervals."""
    project, membership = get_project_for_user(request, slug)
    setting = dashboard_form(request, membership).setting()
    name = request.GET.get("series", "")
    if "\x00" in name:  # no series holds one (and PostgreSQL refuses to compare it)
        raise BadParameters(_("Null characters are not allowed."))
    builds = [
        run
        for run in Run.objects.filter(project=project, series=name)
        .active()
        .select_related("chunking")
        .order_by("created_at", "pk")
        .without_results()
        if setting.can_evaluate(run)
    ]
    names = setting.chart_names
    points = []
    for run in builds:
        scores = evaluate_run(run, setting.gold_for(run), names)
        points.append(
            (run.name, [scores.mean(n) for n in names], [scores.interval(n) for n in names])
        )
    chart = charts.trend_chart(f"{name} · {', '.join(names)}", names, points) if points else ""
    context = {
        "project": project,
        "membership": membership,
        "setting": setting,
        "series_name": name,
        "all_series": sorted(set(project.runs.exclude(series="").values_list("series", flat=True))),
        "points": points,
        "names": names,
        "chart": chart,
    }
    return TemplateResponse(request, "metrics/series.html", context)
