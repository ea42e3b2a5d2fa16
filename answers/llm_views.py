"""LLM judges on answers: owners start an answers job (its cost shown first), and whoever
reads live grades reads the judge's calibration against people (page and API).

Every view resolves the project through ``annotator.access.get_project_for_user``
(outsiders: 404). Starting a job is for owners (who configure judges and pay for their
calls); the calibration stands on everyone's live judgements, so annotators (who judge
blind) get 403, as for the answer measures.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from annotator.access import get_project_for_user, reads_live_grades, require_grades
from annotator.models import Role
from annotator.problems import shown
from annotator.sources import SourcesError, source_choices
from api.views import token_required
from judges.models import Judge
from judges.services import JudgeError

from .calibration import calibrate_answers, default_judge
from .forms import AnswerCalibrationForm, LlmJudgingForm
from .judge_jobs import answer_jobs, plan_answers, start_answers
from .models import AnswerRun
from .presenting import ASPECT_LABELS, LEVEL_LABELS, MEASURE_LABELS


@login_required
@require_http_methods(["GET", "POST"])
def llm_judging(request: HttpRequest, slug: str) -> HttpResponse:
    """Owners: choose a judge, answer runs, queries and at most N answers; the page shows
    what the job will cost (GET with a judge chosen); POST starts it and follows it on
    its job page."""
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    runs = list(AnswerRun.objects.filter(project=project).active().values_list("name", flat=True))
    judges = list(project.judges.order_by("name"))
    data = request.POST if request.method == "POST" else (request.GET if request.GET else None)
    form = LlmJudgingForm(data, runs=runs)
    plan, error, status = None, "", 200
    if data is not None:
        if not form.is_valid():
            if request.method == "POST":
                return HttpResponseBadRequest(_("Bad job options."))
            status = 400
        else:
            judge = get_object_or_404(Judge, project=project, pk=form.cleaned_data["judge"])
            try:
                plan = plan_answers(judge, **form.plan_options())
            except JudgeError as problem:
                error, status = shown(problem.problem), 400
            else:
                if request.method == "POST":
                    if not plan.questions:
                        return HttpResponseBadRequest(
                            _("Nothing to ask: every answer chosen is judged.")
                        )
                    job = start_answers(plan, created_by=request.user)
                    return redirect("judges:job", slug=project.slug, job_pk=job.pk)
    context = {
        "project": project,
        "membership": membership,
        "form": form,
        "judges": judges,
        "runs": runs,
        "plan": plan,
        "error": error,
        "jobs": answer_jobs(project)[:20],
    }
    return TemplateResponse(request, "answers/llm_judging.html", context, status=status)


def _table(result) -> dict:
    """The calibration as the page shows it: labels translated, the confusion matrix
    with its levels."""
    aspects = []
    for row in result.aspects:
        levels = [str(LEVEL_LABELS[level]) for level in row.levels]
        aspects.append(
            {
                "row": row,
                "label": ASPECT_LABELS[row.aspect],
                "levels": levels,
                "confusion": list(zip(levels, row.confusion, strict=True)),
                "reference_percent": round(100 * row.reference["exact_agreement"])
                if row.reference
                else None,
            }
        )
    rankings = [
        {
            "ranking": r,
            "label": MEASURE_LABELS[r.measure],
            "scored": sum(1 for p in r.runs if p.answers),
        }
        for r in result.rankings
    ]
    runs = [p.run for p in result.rankings[0].runs] if result.rankings else []
    return {"aspects": aspects, "rankings": rankings, "ranking_runs": runs}


@login_required
@require_GET
def calibration(request: HttpRequest, slug: str) -> HttpResponse:
    """People (or any label sources) against a judge on the same answers: agreement per
    aspect with TREC's figure beside citation support, and the agreement of run rankings."""
    project, membership = get_project_for_user(request, slug)
    require_grades(membership, None)
    form = AnswerCalibrationForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad calibration parameters."))
    a = form.cleaned_data["a"].strip() or "people"
    b = form.cleaned_data["b"].strip() or default_judge(project)
    result = None
    if b:
        try:
            result = calibrate_answers(project, a, b, form.cleaned_data["runs"])
        except SourcesError as error:
            return HttpResponseBadRequest(str(error))
    context = {
        "project": project,
        "membership": membership,
        "chosen": {"a": a, "b": b or ""},
        "all_runs": list(
            AnswerRun.objects.filter(project=project).active().values_list("name", flat=True)
        ),
        "chosen_runs": form.cleaned_data["runs"] or [],
        "choices": source_choices(project),
        "result": result,
        **(_table(result) if result else {}),
    }
    return TemplateResponse(request, "answers/calibration.html", context)


@token_required
@require_GET
def api_calibration(request: HttpRequest, slug: str) -> JsonResponse:
    """``?a=people&b=judge:<slug>[&runs=NAME&runs=NAME]`` (default: people against the
    first judge, on every active answer run), for those who read live grades; the same
    values as the page and ``answer_calibration [--runs NAME ...]``."""
    project, membership = get_project_for_user(request, slug)
    if not reads_live_grades(membership):
        return JsonResponse({"error": "the calibration stands on the live judgements"}, status=403)
    form = AnswerCalibrationForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"error": "bad calibration parameters"}, status=400)
    try:
        result = calibrate_answers(
            project,
            form.cleaned_data["a"].strip() or "people",
            form.cleaned_data["b"].strip() or None,
            form.cleaned_data["runs"],
        )
    except SourcesError as error:
        return JsonResponse({"error": str(error)}, status=400)
    return JsonResponse(result.as_json())
