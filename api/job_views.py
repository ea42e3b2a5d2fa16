"""Large run uploads through the worker: the upload answers 202 with its job, which the
client polls at ``GET /api/p/<slug>/jobs/<id>/`` (the import page's jobs, owners only).

A run file over ``ASSAY_API_INLINE_RUN_BYTES`` is not parsed inside the web request (a
million lines held hundreds of MB in the server process): it is saved, queued as an
import job of kind "run" with the upload's fields, and read by ``manage.py db_worker``.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotator.access import get_project_for_user
from annotator.import_jobs import save_upload, start_job
from annotator.models import ImportJob, ImportStatus, Role
from annotator.problems import as_data
from metrics.models import Run

from .views import token_required


def hand_to_worker(request, project, uploaded, data: dict) -> JsonResponse:
    """Queue the upload as an import job; 202 with the job and where to poll it."""
    path = save_upload(uploaded)
    job = ImportJob.objects.create(
        project=project,
        kind="run",
        options={
            "name": data["name"],
            "chunking": data["chunking"] or "",
            "parameters": data["parameters"],
            "keep_known": data["keep_known"],
            "replace": data["replace"],
            "tags": data["tags"],
            "series": data["series"],
        },
        filename=uploaded.name[:255],
        path=str(path),
        size=uploaded.size,
        created_by=request.user,
    )
    start_job(job)
    job.refresh_from_db()
    url = reverse("api:run_job", args=[project.slug, job.pk])
    response = JsonResponse(_job_json(job) | {"poll": url}, status=202)
    response["Location"] = url
    return response


def _job_json(job: ImportJob) -> dict:
    body = {"job": job.pk, "status": job.status, "percent": job.percent, "run": None}
    if job.status == ImportStatus.DONE:
        run = Run.objects.filter(project=job.project, name=job.options.get("name")).first()
        body["run"] = {"id": run.pk, "name": run.name} if run else None
    if job.status == ImportStatus.FAILED:
        problems = [as_data(problem) for problem in job.problems]
        body |= {"lines": [p["message"] for p in problems], "problems": problems}
    return body


@token_required
@require_GET
def run_job(request, slug: str, pk: int) -> JsonResponse:
    """An upload handed to the worker: ``pending``, ``running``, ``done`` (with the run)
    or ``failed`` (with every problem, nothing imported)."""
    project, _membership = get_project_for_user(request, slug, Role.OWNER)
    job = get_object_or_404(ImportJob, project=project, pk=pk, kind="run")
    return JsonResponse(_job_json(job))
