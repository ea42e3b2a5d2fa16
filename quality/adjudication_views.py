"""Disputed quality grades: the leads' page of sources people graded differently, and the
final grade they set (owners and adjudicators only, each change kept in history)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotator.access import get_project_for_user
from annotator.models import Role

from .adjudication import adjudicate_quality, quality_disputes
from .adjudication_forms import FinalGradeForm
from .models import QualityDimension


def _lead(request: HttpRequest, slug: str):
    """Final grades are the leads' (owners and adjudicators), as relevance adjudication."""
    return get_project_for_user(request, slug, Role.OWNER, Role.ADJUDICATOR)


@login_required
@require_GET
def disputes(request: HttpRequest, slug: str) -> HttpResponse:
    """Sources people graded differently, per dimension, each with a form for the lead's
    final grade (``?dimension=<key>``: one dimension; ``?open=1``: only those without a
    final grade)."""
    project, membership = _lead(request, slug)
    dimensions = list(QualityDimension.objects.filter(project=project))
    wanted = request.GET.get("dimension") or ""
    if wanted and wanted not in {d.key for d in dimensions}:
        return HttpResponseBadRequest(_("This project has no such dimension."))
    only_open = request.GET.get("open") == "1"
    chosen = [d for d in dimensions if not wanted or d.key == wanted]
    groups = [
        {"dimension": d, "disputes": quality_disputes(d, include_settled=not only_open)}
        for d in chosen
    ]
    context = {
        "project": project,
        "membership": membership,
        "dimensions": dimensions,
        "groups": groups,
        "wanted": wanted,
        "only_open": only_open,
    }
    return TemplateResponse(request, "quality/disputes.html", context)


@login_required
@require_POST
def adjudicate(request: HttpRequest, slug: str) -> HttpResponse:
    """Set, change or clear one source's final grade (kept in history)."""
    project, _membership = _lead(request, slug)
    form = FinalGradeForm(request.POST, project=project)
    if not form.is_valid():
        return HttpResponseBadRequest(
            _("Bad final grade: %(errors)s") % {"errors": form.errors.as_text()}
        )
    data = form.cleaned_data
    adjudicate_quality(
        dimension=data["dimension"],
        source=data["source"],
        grade=data["grade"],
        reason=data["reason"],
        by=request.user,
    )
    messages.success(
        request, _("Final grade saved.") if data["grade"] is not None else _("Final grade cleared.")
    )
    query = {"dimension": data["dimension"].key}
    if data["open"]:
        query["open"] = "1"
    return redirect(reverse("quality:disputes", args=[slug]) + "?" + urlencode(query))
