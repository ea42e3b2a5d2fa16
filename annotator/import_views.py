"""Upload page for project owners: files are imported in the background with progress."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods

from formats.errors import Problem
from web.errors import answers_bad_parameters
from web.htmx import for_htmx
from web.pages import page_of

from .access import get_project_for_user
from .forms import ImportForm
from .import_jobs import (
    read_file_progress,
    read_progress,
    save_upload,
    save_uploads,
    start_job,
    upload_name,
)
from .importing import kinds
from .models import ImportJob, ImportStatus, Role


def _get_job_for_user(request, slug: str, job_id: int):
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    job = get_object_or_404(ImportJob, pk=job_id, project=project)
    return project, membership, job


@login_required
@require_http_methods(["GET", "POST"])
@answers_bad_parameters
def import_upload(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    form = ImportForm(request.POST or None, request.FILES or None, project=project)
    if request.method == "POST" and form.is_valid():
        files = form.cleaned_data["file"]
        path = save_upload(files[0]) if len(files) == 1 else save_uploads(files)
        job = ImportJob.objects.create(
            project=project,
            kind=form.cleaned_data["kind"],
            options=form.job_options(),
            filename=upload_name(files)[:255],
            path=str(path),
            size=sum(f.size for f in files),
            created_by=request.user,
        )
        start_job(job)
        return redirect("annotator:import_status", slug=project.slug, job_id=job.pk)
    page = page_of(request, project.import_jobs.select_related("created_by"))
    jobs = page.object_list
    for job in jobs:
        job.kind_label = _kind_label(job.kind)
    status = 400 if request.method == "POST" else 200
    context = {
        "project": project,
        "membership": membership,
        "form": form,
        "jobs": jobs,
        "page": page,
        "kinds": kinds(),
    }
    return TemplateResponse(request, "annotator/import_upload.html", context, status=status)


# What became of a file, as the per-file report says it.
OUTCOMES = {
    "imported": _("imported"),
    "replaced": _("replaced"),
    "unchanged": _("unchanged"),
    "skipped": _("skipped"),
    "passed over": _("not a document, passed over"),
}


def _report(job: ImportJob) -> list[dict]:
    """What became of each file, its problems as problems (shown in the reader's language)."""
    return [
        {
            "name": line.get("name", ""),
            "outcome": line.get("outcome", ""),
            "label": OUTCOMES.get(line.get("outcome"), line.get("outcome")),
            "problems": [Problem.from_json(p) for p in line.get("problems") or []],
        }
        for line in job.report
        if isinstance(line, dict)
    ]


def _kind_label(name: str) -> str:
    return next((kind.label for kind in kinds() if kind.name == name), name)


@for_htmx("annotator/partials/import_progress.html")
@login_required
@require_GET
def import_status(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    project, membership, job = _get_job_for_user(request, slug, job_id)
    context = {
        "project": project,
        "membership": membership,
        "job": job,
        "kind_label": _kind_label(job.kind),
        "percent": read_progress(job),
        "files": read_file_progress(job) if job.status == ImportStatus.RUNNING else [],
        "running": job.status in (ImportStatus.PENDING, ImportStatus.RUNNING),
        "report": _report(job),
        "skipped": sum(1 for line in job.report if line.get("outcome") == "skipped"),
    }
    return TemplateResponse(request, "annotator/import_status.html", context)
