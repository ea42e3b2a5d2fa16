"""Token-authenticated JSON endpoints for pipelines, and the page where users manage tokens.

The endpoints take ``Authorization: Bearer <token>`` only (never the session cookie, so
they need no CSRF token) and apply the same role checks as the pages.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.access import get_project_for_user, require_grades
from annotator.models import Project, Role
from annotator.problems import as_data
from formats import FileRejected
from gold.export import FORMATS, build_export, export_filename, render_export
from gold.forms import ExportForm
from gold.models import GoldSet
from gold.units import levels
from metrics.forms import RunUploadForm
from metrics.models import Run
from metrics.run_import import import_run
from web.downloads import attachment
from web.fields import whole

from .models import ApiToken


def token_required(view):
    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        row = ApiToken.authenticate(token.strip()) if scheme.lower() == "bearer" else None
        if row is None:
            return JsonResponse({"error": "a valid API token is required"}, status=401)
        match = getattr(request, "resolver_match", None)
        slug = kwargs.get("slug") or (match.kwargs.get("slug") if match else None)
        if slug and not row.reaches(slug):
            return JsonResponse({"error": "not found"}, status=404)  # outside its projects
        if row.read_only and request.method not in ("GET", "HEAD", "OPTIONS"):
            return JsonResponse({"error": "this token may only read"}, status=403)
        request.user = row.user
        request.api_token = row
        try:
            return view(request, *args, **kwargs)
        except Http404:
            return JsonResponse({"error": "not found"}, status=404)
        except PermissionDenied:
            return JsonResponse(
                {"error": "your role in this project does not allow this"}, status=403
            )

    return csrf_exempt(wrapper)


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request):
    """Create and revoke one's own tokens; a new token is shown once."""
    created = None
    if request.method == "POST":
        if request.POST.get("action") == "revoke":
            pk = whole(request.POST.get("token"))
            if pk is None:
                raise Http404("No such token")
            get_object_or_404(ApiToken, pk=pk, user=request.user).revoke()
        else:
            name = request.POST.get("name", "").strip()[:100] or "pipeline"
            if "\x00" in name:
                return HttpResponseBadRequest(_("Null characters are not allowed."))
            mine = Project.objects.for_user(request.user)
            chosen = [whole(pk) for pk in request.POST.getlist("projects")]
            projects = list(mine.filter(pk__in=[pk for pk in chosen if pk is not None]))
            if len(projects) != len(chosen):
                return HttpResponseBadRequest(_("Choose among your own projects."))
            _row, created = ApiToken.create_for(
                request.user,
                name,
                read_only=request.POST.get("read_only") == "on",
                projects=projects,
            )
    return render(
        request,
        "api/tokens.html",
        {
            "tokens": request.user.api_tokens.prefetch_related("projects"),
            "created": created,
            "projects": Project.objects.for_user(request.user).order_by("name"),
        },
    )


@token_required
@require_POST
def upload_run(request, slug: str):
    """Multipart: ``file``, ``name``, ``chunking`` (or none for documents), ``parameters``
    (JSON object), ``keep_known`` (true/false), ``replace`` (true/false), ``tags``
    (comma-separated) and ``series`` (the pipeline whose build this is)."""
    project, _membership = get_project_for_user(request, slug, Role.OWNER)
    uploaded = request.FILES.get("file")
    if uploaded is None or not request.POST.get("name", "").strip():
        return JsonResponse({"error": "send a file and a name"}, status=400)
    if uploaded.size > settings.ASSAY_MAX_UPLOAD_BYTES:
        return JsonResponse({"error": "the file is over the size limit"}, status=400)
    form = RunUploadForm(request.POST)
    if not form.is_valid():
        field, errors = next(iter(form.errors.items()))
        return JsonResponse({"error": f"{field}: {errors[0]}"}, status=400)
    data = form.cleaned_data
    chunking = None
    if data["chunking"]:
        chunking = project.chunkings.filter(name=data["chunking"]).first()
        if chunking is None:
            return JsonResponse({"error": "no such chunking"}, status=400)
    if uploaded.size > settings.ASSAY_API_INLINE_RUN_BYTES:
        from .job_views import hand_to_worker  # imported here: it imports this module

        return hand_to_worker(request, project, uploaded, data)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / Path(uploaded.name).name
        with path.open("wb") as handle:
            for block in uploaded.chunks():
                handle.write(block)
        try:
            run = import_run(
                project,
                path,
                name=data["name"],
                chunking=chunking,
                parameters=data["parameters"],
                keep_known=data["keep_known"],
                replace=data["replace"],
                created_by=request.user,
            )
        except FileRejected as failure:
            problems = [as_data(problem) for problem in failure.problems]
            lines = [problem["message"] for problem in problems]
            return JsonResponse(
                {"error": "nothing imported", "lines": lines, "problems": problems}, status=400
            )
    if data["tags"] or data["series"]:
        Run.objects.filter(pk=run.pk).update(tags=data["tags"], series=data["series"])
    return JsonResponse(
        {
            "id": run.pk,
            "name": run.name,
            "results": run.n_results,
            "queries": run.n_queries,
            "dropped": run.n_dropped,
        },
        status=201,
    )


@token_required
@require_GET
def gold_export(request, slug: str, pk: int):
    """A gold set file: ``?format=jsonl|qrels|xlsx&level=&mapping=`` (owners; every member
    once it is released)."""
    project, membership = get_project_for_user(request, slug)
    gold_set = get_object_or_404(GoldSet, project=project, pk=pk)
    require_grades(membership, gold_set)
    form = ExportForm(
        {"level": "documents", "format": "jsonl", **request.GET.dict()}, levels=levels(project)
    )
    if not form.is_valid():
        return JsonResponse({"error": "bad parameters", "fields": form.errors}, status=400)
    data = form.cleaned_data
    export = build_export(gold_set, data["level"], data["mapping"])
    return attachment(
        render_export(export, data["format"]),
        FORMATS[data["format"]][0],
        export_filename(export, data["format"]),
        policy=export.policy,
    )
