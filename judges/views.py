"""Judge pages: owners configure judges and start, watch, cancel, resume jobs; owners,
adjudicators and viewers read calibration. Annotators see nothing of judges (403)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.access import get_project_for_user, reads_live_grades
from annotator.models import Membership, Project, Role
from annotator.problems import shown
from annotator.sources import SourcesError, source_choices
from gold.policy import people
from quality.models import QualityDimension
from web.errors import answers_bad_parameters
from web.htmx import for_htmx
from web.pages import page_of

from .calibration import calibrate, calibrate_quality
from .forms import CalibrationForm, JobForm, JudgeSettingsForm
from .models import Judge, JudgeJob, PairStatus
from .prompts import DEFAULT_PROMPT
from .services import (
    JudgeError,
    cancel_job,
    create_judge,
    pause_job,
    plan_job,
    resume_job,
    start_job,
    update_judge,
    version_history,
)

FAILURES_SHOWN = 200
# What a new version may change, as the judge page names it.
CHANGED = {
    "prompt": gettext_lazy("prompt"),
    "model": gettext_lazy("model"),
    "temperature": gettext_lazy("temperature"),
    "max_tokens": gettext_lazy("output limit"),
}


def _get_judge_for_user(
    request: HttpRequest, slug: str, judge_pk: int
) -> tuple[Judge, Project, Membership]:
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    return get_object_or_404(Judge, project=project, pk=judge_pk), project, membership


def _get_job_for_user(
    request: HttpRequest, slug: str, job_pk: int
) -> tuple[JudgeJob, Project, Membership]:
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    job = get_object_or_404(
        JudgeJob.objects.select_related("version__judge", "chunking"),
        pk=job_pk,
        version__judge__project=project,
    )
    return job, project, membership


def _get_project_for_reader(request: HttpRequest, slug: str) -> tuple[Project, Membership]:
    """Judges' grades are grades drawn from live labels: whoever reads those reads these
    (annotators label blind and see nothing of judges)."""
    project, membership = get_project_for_user(request, slug)
    if not reads_live_grades(membership):
        raise PermissionDenied(_("Annotators label blind: judges are not shown to them."))
    return project, membership


@login_required
@require_http_methods(["GET", "POST"])
def judge_list(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = _get_project_for_reader(request, slug)
    owner = membership.role == Role.OWNER
    form = None
    if owner:
        data = request.POST if request.method == "POST" else None
        form = JudgeSettingsForm(
            data, project=project, initial={"prompt": DEFAULT_PROMPT, "max_tokens": 200}
        )
        if request.method == "POST" and form.is_valid():
            fields = {
                k: v for k, v in form.cleaned_data.items() if k not in ("slug", "name", "prompt")
            }
            try:
                judge = create_judge(
                    project,
                    slug=form.cleaned_data["slug"],
                    name=form.cleaned_data["name"],
                    prompt=form.cleaned_data["prompt"],
                    **fields,
                )
            except JudgeError as error:
                form.add_error(None, shown(error.problem))
            else:
                return redirect("judges:detail", slug=project.slug, judge_pk=judge.pk)
    elif request.method == "POST":
        raise PermissionDenied(_("Only owners configure judges."))
    judges = project.judges.prefetch_related("versions")
    status = 400 if request.method == "POST" else 200
    context = {"project": project, "membership": membership, "judges": judges, "form": form}
    return TemplateResponse(request, "judges/judge_list.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
@answers_bad_parameters
def judge_detail(request: HttpRequest, slug: str, judge_pk: int) -> HttpResponse:
    judge, project, membership = _get_judge_for_user(request, slug, judge_pk)
    form = JudgeSettingsForm(request.POST or None, instance=judge, project=project)
    if request.method == "POST" and form.is_valid():
        before = judge.current.number if judge.current else 0
        try:
            version = update_judge(judge, **{k: v for k, v in form.cleaned_data.items()})
        except JudgeError as error:
            form.add_error(None, shown(error.problem))
        else:
            if version.number == before:
                messages.success(
                    request,
                    _(
                        "Saved. The prompt, model, temperature and output limit did not "
                        "change: still version %(n)d."
                    )
                    % {"n": version.number},
                )
            else:
                changed = version_history(judge)[-1].changed_fields
                messages.success(
                    request,
                    _("Saved as version %(n)d: changed %(what)s.")
                    % {"n": version.number, "what": ", ".join(str(CHANGED[f]) for f in changed)},
                )
            return redirect("judges:detail", slug=project.slug, judge_pk=judge.pk)
    judge.refresh_from_db()
    jobs = page_of(request, JudgeJob.objects.filter(version__judge=judge).select_related("version"))
    context = {
        "project": project,
        "membership": membership,
        "judge": judge,
        "form": form,
        "job_form": JobForm(project=project),
        "versions": version_history(judge),
        "jobs": jobs.object_list,
        "page": jobs,
    }
    return TemplateResponse(
        request, "judges/judge_detail.html", context, status=400 if form.errors else 200
    )


@login_required
@require_GET
@for_htmx("judges/partials/estimate.html")
def job_estimate(request: HttpRequest, slug: str, judge_pk: int) -> HttpResponse:
    """What a job would cost, before it starts (the job form asks on every change)."""
    judge, project, membership = _get_judge_for_user(request, slug, judge_pk)
    form = JobForm(request.GET, project=project)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad job options."))
    try:
        plan = plan_job(judge, **form.plan_options())
    except JudgeError as error:
        return TemplateResponse(
            request, "judges/partials/estimate.html", {"error": shown(error.problem)}, status=400
        )
    context = {
        "project": project,
        "membership": membership,
        "judge": judge,
        "plan": plan,
        "prompt_tokens": plan.prompt_tokens(),
    }
    return TemplateResponse(request, "judges/partials/estimate.html", context)


@login_required
@require_POST
def job_start(request: HttpRequest, slug: str, judge_pk: int) -> HttpResponse:
    judge, project, _membership = _get_judge_for_user(request, slug, judge_pk)
    form = JobForm(request.POST, project=project)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad job options."))
    try:
        plan = plan_job(judge, **form.plan_options())
    except JudgeError as error:
        return HttpResponseBadRequest(shown(error.problem))
    job = start_job(plan, created_by=request.user)
    return redirect("judges:job", slug=project.slug, job_pk=job.pk)


@login_required
@require_GET
@for_htmx("judges/partials/job_progress.html")
def job_status(request: HttpRequest, slug: str, job_pk: int) -> HttpResponse:
    job, project, membership = _get_job_for_user(request, slug, job_pk)
    counts = dict.fromkeys(PairStatus.values, 0)
    for status in job.pairs.values_list("status", flat=True):
        counts[status] += 1
    ended = job.n_pairs - counts[PairStatus.PENDING]
    context = {
        "project": project,
        "membership": membership,
        "job": job,
        "counts": counts,
        "percent": int(100 * ended / job.n_pairs) if job.n_pairs else 100,
        "failures": job.pairs.filter(status=PairStatus.FAILED).select_related(
            "query", "document", "chunk"
        )[:FAILURES_SHOWN],
    }
    return TemplateResponse(request, "judges/job.html", context)


@login_required
@require_POST
def job_cancel(request: HttpRequest, slug: str, job_pk: int) -> HttpResponse:
    job, project, _membership = _get_job_for_user(request, slug, job_pk)
    cancel_job(job)
    return redirect("judges:job", slug=project.slug, job_pk=job.pk)


@login_required
@require_POST
def job_pause(request: HttpRequest, slug: str, job_pk: int) -> HttpResponse:
    """Pause a job after the calls in flight (at once when its worker died)."""
    job, project, _membership = _get_job_for_user(request, slug, job_pk)
    pause_job(job)
    return redirect("judges:job", slug=project.slug, job_pk=job.pk)


@login_required
@require_POST
def job_resume(request: HttpRequest, slug: str, job_pk: int) -> HttpResponse:
    """Resume a cancelled job, or (``failed=1``) try its failed pairs again."""
    job, project, _membership = _get_job_for_user(request, slug, job_pk)
    try:
        resume_job(job, failed=request.POST.get("failed") == "1")
    except JudgeError as error:
        return HttpResponseBadRequest(shown(error.problem))
    return redirect("judges:job", slug=project.slug, job_pk=job.pk)


@login_required
@require_GET
@for_htmx("judges/partials/calibration_body.html", if_target="calibration-body")
def calibration(request: HttpRequest, slug: str) -> HttpResponse:
    """Any two sides (label sources or annotators) on the spans both graded."""
    project, membership = _get_project_for_reader(request, slug)
    form = CalibrationForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad calibration parameters."))
    choices = source_choices(project)
    chosen = form.values(choices)
    dimensions = list(QualityDimension.objects.filter(project=project))
    dimension = None
    if form.cleaned_data["dimension"]:
        dimension = next((d for d in dimensions if d.key == form.cleaned_data["dimension"]), None)
        if dimension is None:
            return HttpResponseBadRequest(_("This project has no such dimension."))
    result = None
    if chosen["b"]:
        try:
            if dimension is not None:
                result = calibrate_quality(project, dimension, chosen["a"], chosen["b"])
            else:
                result = calibrate(project, chosen["a"], chosen["b"])
        except SourcesError as error:
            return HttpResponseBadRequest(str(error))
    context = {
        "project": project,
        "membership": membership,
        "form": form,
        "choices": choices,
        "people": people(project),
        "chosen": chosen,
        "result": result,
        "grades": dimension.shown_labels if dimension else project.shown_grade_labels,
        "dimensions": dimensions,
        "dimension": dimension,
    }
    return TemplateResponse(request, "judges/calibration.html", context)
