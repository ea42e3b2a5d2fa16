"""Judges grading a quality dimension from the owner's quality settings page: a section
there (registered by judges, which quality never imports), its cost estimate and the
button that starts the job (owners only)."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from annotator.access import get_project_for_user
from annotator.models import Role
from annotator.problems import shown
from quality.models import QualityDimension
from web.fields import MAX_WHOLE

from .models import Judge
from .quality_jobs import (
    SCOPES,
    dimension_prompt,
    graded_by_people,
    plan_quality,
    unit_count,
)
from .quality_jobs import start_quality as start_quality_job
from .services import JudgeError


class QualityJobForm(forms.Form):
    judge = forms.IntegerField(min_value=1, max_value=MAX_WHOLE)
    dimension = forms.SlugField(max_length=40)
    scope = forms.ChoiceField(
        choices=[
            ("all", gettext_lazy("Every document or site")),
            ("people", gettext_lazy("Those people graded (for calibration)")),
        ],
        required=False,
    )
    max_units = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)
    prompt = forms.CharField(max_length=20_000, required=False)

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project

    def clean(self) -> dict:
        data = super().clean()
        data["judge"] = Judge.objects.filter(project=self.project, pk=data.get("judge")).first()
        data["dimension"] = QualityDimension.objects.filter(
            project=self.project, key=data.get("dimension")
        ).first()
        if data["judge"] is None or data["dimension"] is None:
            raise forms.ValidationError(_("Choose a judge and a dimension of this project."))
        data["scope"] = data.get("scope") or SCOPES[0]
        return data

    def plan(self):
        data = self.cleaned_data
        return plan_quality(
            data["judge"],
            data["dimension"],
            scope=data["scope"],
            max_units=data["max_units"],
            prompt=data["prompt"] if data["prompt"].strip() else None,
        )


def quality_settings_section(*, project, membership) -> dict | None:
    """Per dimension: its units, those people graded, its prompt, and a form to have a
    judge grade it; None for non-owners or a project without dimensions."""
    if membership.role != Role.OWNER:
        return None
    dimensions = list(QualityDimension.objects.filter(project=project))
    if not dimensions:
        return None
    judges = [j for j in project.judges.prefetch_related("versions") if j.current is not None]
    return {
        "project": project,
        "judges": judges,
        "scopes": QualityJobForm.base_fields["scope"].choices,
        "rows": [
            {
                "dimension": d,
                "units": unit_count(d),
                "people": len(graded_by_people(d)),
                "prompt": dimension_prompt(d),
            }
            for d in dimensions
        ],
    }


def _owner_plan(request: HttpRequest, slug: str, data):
    """The project, the owner's membership and the job's plan from the options sent, or a
    400 response saying what is wrong with them."""
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    form = QualityJobForm(data, project=project)
    if not form.is_valid():
        return project, membership, HttpResponseBadRequest(_("Bad job options."))
    try:
        return project, membership, form.plan()
    except JudgeError as error:
        return project, membership, HttpResponseBadRequest(shown(error.problem))


@login_required
@require_GET
def quality_estimate(request: HttpRequest, slug: str) -> HttpResponse:
    """What a quality job would cost with the prompt as edited, before it starts (nothing
    is kept)."""
    project, membership, plan = _owner_plan(request, slug, request.GET)
    if isinstance(plan, HttpResponse):
        return plan
    context = {"project": project, "membership": membership, "plan": plan}
    context["prompt_tokens"] = plan.prompt_tokens()
    return TemplateResponse(request, "judges/partials/quality_estimate.html", context)


@login_required
@require_POST
def quality_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Keep the dimension's prompt as sent and start the judge's quality job."""
    project, _membership, plan = _owner_plan(request, slug, request.POST)
    if isinstance(plan, HttpResponse):
        return plan
    if not plan.units:
        return HttpResponseBadRequest(_("Nothing to grade: this version graded every unit."))
    job = start_quality_job(plan, created_by=request.user)
    return redirect("judges:job", slug=project.slug, job_pk=job.pk)
