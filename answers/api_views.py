"""Token endpoints for answer runs: list and upload, metrics, compare and the CI gate.

They take ``Authorization: Bearer <token>`` (``api.views.token_required``) and the same
role checks and services as the pages, so the API and the pages give the same numbers.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from annotator.access import get_project_for_user, reads_live_grades
from annotator.importing import run_import
from annotator.models import Role
from annotator.problems import as_data
from annotator.sources import SourcesError
from api.metrics_views import _ids, _is_id
from api.views import token_required
from formats import FileRejected
from metrics.forms import RunUploadForm
from metrics.gate import GateForm, gate
from web.errors import BadParameters

from .comparison import (
    chosen_answer_runs,
    chosen_measures,
    compare_answer_runs,
    comparison_json,
    gate_json,
)
from .metrics import answer_sources
from .models import AnswerRun


def requested_sources(request: HttpRequest, project):
    """The label sources a page or API call asks for: ``?sources=`` (comma-separated, or
    repeated as the sources picker sends them), people when none; ``SourcesError``
    (``annotator.sources``) naming a token that is not of the project."""
    return answer_sources(project, ",".join(request.GET.getlist("sources")))


def answer_run_json(run: AnswerRun) -> dict:
    return {
        "id": run.pk,
        "name": run.name,
        "run_tag": run.run_tag,
        "format": run.shape,
        "chunking": run.chunking.name if run.chunking_id else None,
        "parameters": run.parameters,
        "tags": run.tags,
        "archived": run.archived_at is not None,
        "answers": run.n_answers,
        "sentences": run.n_sentences,
        "citations": run.n_citations,
        "created_at": run.created_at.isoformat(),
    }


@csrf_exempt
def answer_runs(request: HttpRequest, slug: str):
    """``GET``: the answer runs (any member); ``POST``: upload one (owners)."""
    return upload(request, slug) if request.method == "POST" else listing(request, slug)


@token_required
@require_GET
def listing(request: HttpRequest, slug: str) -> JsonResponse:
    """Every answer run of the project (``?archived=true`` to include archived ones)."""
    project, _membership = get_project_for_user(request, slug)
    runs = AnswerRun.objects.filter(project=project).select_related("chunking")
    if request.GET.get("archived") != "true":
        runs = runs.active()
    return JsonResponse({"answer_runs": [answer_run_json(r) for r in runs]})


@token_required
@require_POST
def upload(request: HttpRequest, slug: str) -> JsonResponse:
    """Multipart: ``file``, ``name``, ``chunking`` (whose chunk ids the file cites),
    ``parameters`` (a JSON object) and ``tags`` (comma-separated)."""
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
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / (Path(uploaded.name).name or "answers.jsonl")
        with path.open("wb") as handle:
            for block in uploaded.chunks():
                handle.write(block)
        try:
            result = run_import(
                "answers",
                project,
                path,
                options={
                    "name": data["name"],
                    "chunking": data["chunking"],
                    "parameters": data["parameters"],
                    "tags": data["tags"],
                },
                changed_by=request.user,
                source_name=uploaded.name,
            )
        except FileRejected as failure:
            problems = [as_data(problem) for problem in failure.problems]
            lines = [problem["message"] for problem in problems]
            return JsonResponse(
                {"error": "nothing imported", "lines": lines, "problems": problems}, status=400
            )
    run = AnswerRun.objects.select_related("chunking").get(project=project, name=data["name"])
    return JsonResponse({**answer_run_json(run), "imported": result.created}, status=201)


def metrics_json(run: AnswerRun, sources=None) -> dict:
    """A run's measures on ``sources`` (people by default), as the API and
    ``answer_metrics --json`` give them, with the label sources they stand on."""
    from .metrics import answer_sources, run_scores

    sources = answer_sources(run.project, sources)
    scores = run_scores(run, sources)
    return {
        "answer_run": answer_run_json(run),
        "sources": sources.names,
        "measures": scores.summary(),
        "per_query": scores.per_query(),
    }


@token_required
@require_GET
def answer_run_metrics(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Each measure's mean over the run's answers (with how many it is defined for) and
    every answer's values; for those who read live grades."""
    project, membership = get_project_for_user(request, slug)
    if not reads_live_grades(membership):
        return JsonResponse({"error": "answer measures stand on the live judgements"}, status=403)
    run = AnswerRun.objects.filter(project=project, pk=pk).select_related("chunking").first()
    if run is None:
        return JsonResponse({"error": "no such answer run"}, status=404)
    try:
        sources = requested_sources(request, project)
    except SourcesError as error:
        return JsonResponse({"error": str(error)}, status=400)
    return JsonResponse(metrics_json(run, sources))


def _live_reader(request: HttpRequest, slug: str):
    project, membership = get_project_for_user(request, slug)
    if not reads_live_grades(membership):
        return None
    return project


NOT_LIVE = "answer measures stand on the live judgements"


@token_required
@require_GET
def answer_compare(request: HttpRequest, slug: str) -> JsonResponse:
    """Answer runs against a baseline: ``?runs=<id>,<id>&baseline=<id>&measure=...``
    (the first run is the baseline when none is named; every measure when none is);
    the parameters and the answer of the retrieval runs' ``compare``, each measure over
    the queries where every run's value is defined (``answers.comparison``)."""
    project = _live_reader(request, slug)
    if project is None:
        return JsonResponse({"error": NOT_LIVE}, status=403)
    ids = _ids(request.GET.getlist("runs"))
    baseline = request.GET.get("baseline", "")
    if not ids or (baseline and not _is_id(baseline)):
        return JsonResponse(
            {"error": "name the runs to compare: runs=<id>,<id>[&baseline=<id>]"}, status=400
        )
    try:
        names = chosen_measures(request.GET.getlist("measure"))
        runs = chosen_answer_runs(project, ids, int(baseline) if baseline else None)
        sources = requested_sources(request, project)
    except (BadParameters, SourcesError) as error:
        return JsonResponse({"error": str(error)}, status=400)
    return JsonResponse(comparison_json(compare_answer_runs(runs, names, sources=sources)))


@token_required
@require_GET
def answer_gate(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Pass or fail an answer run against a baseline with the retrieval runs' gate
    (``metrics.gate``: ``?baseline=<id>&measure=<name>&max_drop=<x>[&alpha=]``): 200 with
    ``"pass": true``, else 422, the figures in the body either way."""
    project = _live_reader(request, slug)
    if project is None:
        return JsonResponse({"error": NOT_LIVE}, status=403)
    form = GateForm(request.GET, run_pk=pk)
    if not form.is_valid():
        return JsonResponse({"error": form.message()}, status=400)
    params = form.cleaned_data
    try:
        names = chosen_measures(form.measures)
        runs = chosen_answer_runs(project, [pk], params["baseline"])
        sources = requested_sources(request, project)
    except (BadParameters, SourcesError) as error:
        return JsonResponse({"error": str(error)}, status=400)
    comparison = compare_answer_runs(runs, names, sources=sources)
    outcome = gate(comparison, params["max_drops"], params["alpha"])
    return JsonResponse(gate_json(comparison, outcome), status=200 if outcome.passed else 422)
