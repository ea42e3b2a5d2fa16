"""The answer judging screen and its saves: one answer at a time, blind to the run.

Who labels judges answers (owners, adjudicators, annotators). A save names the aspect,
the target, the value and the version the screen showed; ``answers.judging`` writes it
(409 with the judgement as it is now when another session changed it since). Undo names
the screen's action id.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotator.access import can_label, get_project_for_user
from annotator.models import Query, Role

from . import adjudication, screen
from .forms import AdjudicationForm, JudgmentForm, UndoForm
from .judging import (
    JudgmentConflict,
    JudgmentRefused,
    NothingToUndo,
    change_judgment,
    judgment_version,
    undo_judgment,
)
from .models import Answer
from .presenting import ASPECT_LABELS

CHOICES_OF = {
    "nugget": "nugget_choices",
    "support": "support_choices",
    "needs_citation": "needs_choices",
    "crag": "crag_choices",
}


def _member(request, slug):
    project, membership = get_project_for_user(request, slug)
    if not can_label(membership):
        raise PermissionDenied(_("Viewers do not judge answers."))
    return project, membership


def _answer(project, pk: int) -> Answer:
    return get_object_or_404(
        Answer.objects.select_related("query", "run"),
        pk=pk,
        run__project=project,
        run__archived_at__isnull=True,
    )


@login_required
@require_GET
def judge(request: HttpRequest, slug: str):
    """The next answer this person has not graded, or (``?answer=``) the one named."""
    project, membership = _member(request, slug)
    chosen = request.GET.get("answer", "")
    pk = int(chosen) if chosen.isdigit() else screen.next_answer(project, request.user)
    if pk is None:
        return TemplateResponse(
            request, "answers/judge_done.html", {"project": project, "membership": membership}
        )
    answer = _answer(project, pk)
    return TemplateResponse(
        request,
        "answers/judge.html",
        {
            "project": project,
            "membership": membership,
            "progress": screen.progress(project, request.user, answer.pk),
            **screen.CHOICES,
            **screen.screen(answer, request.user),
        },
    )


@login_required
@require_GET
def judge_side(request: HttpRequest, slug: str):
    """The answers of every active run to one query side by side, a column each, blind
    to the run and in this person's order: the first query with an answer the person
    has not graded, or (``?query=<id>``) the one named. Saves and undo go to each
    answer's own ``judge_save`` and ``judge_undo``, as on the one-at-a-time screen."""
    project, membership = _member(request, slug)
    chosen = request.GET.get("query", "").strip()
    if chosen and not (chosen.isascii() and chosen.isdigit() and len(chosen) <= 15):
        return HttpResponseBadRequest(_("Bad query parameter."))
    pk = int(chosen) if chosen else screen.next_side_by_side_query(project, request.user)
    if pk is None:
        return TemplateResponse(
            request, "answers/judge_done.html", {"project": project, "membership": membership}
        )
    query = get_object_or_404(Query, pk=pk, project=project)
    side = screen.side_by_side(project, request.user, query)
    return TemplateResponse(
        request,
        "answers/judge_side.html",
        {
            "project": project,
            "membership": membership,
            "side": side,
            "query": query,
            **screen.CHOICES,
        },
    )


def _state(judgment) -> dict:
    return {
        "value": None if judgment is None else judgment.value,
        "version": judgment_version(judgment.updated_at if judgment else None),
    }


@login_required
@require_POST
def save(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    project, _membership = _member(request, slug)
    answer = _answer(project, pk)
    form = JudgmentForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"error": _("That judgement cannot be saved.")}, status=400)
    data = form.cleaned_data
    try:
        change = change_judgment(
            answer=answer,
            annotator=request.user,
            target=data["target"],
            value=data["value"],
            version=data["version"],
            action_id=data["action"],
        )
    except JudgmentRefused:
        return JsonResponse({"error": _("That judgement cannot be saved.")}, status=400)
    except JudgmentConflict as conflict:
        return JsonResponse(
            {
                "error": _(
                    "Another session changed this judgement since this page showed it: "
                    "it now shows what is saved. Judge it again if you still disagree."
                ),
                **_state(conflict.judgment),
            },
            status=409,
        )
    return JsonResponse({"saved": _("Saved"), **_state(change.judgment)})


@login_required
@require_POST
def undo(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    project, _membership = _member(request, slug)
    answer = _answer(project, pk)
    form = UndoForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"error": _("Nothing to undo.")}, status=400)
    try:
        change = undo_judgment(
            answer=answer, user=request.user, action_id=form.cleaned_data["action"]
        )
    except NothingToUndo:
        return JsonResponse({"error": _("Nothing to undo.")}, status=404)
    except JudgmentConflict as conflict:
        return JsonResponse(
            {
                "error": _(
                    "Another session changed this judgement since: nothing undone. "
                    "The page shows what is saved."
                ),
                **_state(conflict.judgment),
            },
            status=409,
        )
    target = change.target
    return JsonResponse(
        {
            "saved": _("Undone"),
            "aspect": target.aspect,
            "target": target.pk,
            **_state(change.judgment),
        }
    )


@login_required
@require_GET
def disputes(request: HttpRequest, slug: str):
    """Targets people judged differently, each with a form for the lead's final value
    (``?open=1``: only those without one yet)."""
    project, membership = get_project_for_user(request, slug, Role.OWNER, Role.ADJUDICATOR)
    only_open = request.GET.get("open") == "1"
    return TemplateResponse(
        request,
        "answers/disputes.html",
        {
            "project": project,
            "membership": membership,
            "disputes": [
                {
                    "dispute": d,
                    "what": adjudication.describe(d),
                    "aspect": ASPECT_LABELS[d.target.aspect],
                    "values": sorted(d.values.items()),
                    "choices": screen.CHOICES[CHOICES_OF[d.target.aspect]],
                }
                for d in adjudication.disputes(project, include_settled=not only_open)
            ],
            "only_open": only_open,
        },
    )


@login_required
@require_POST
def adjudicate(request: HttpRequest, slug: str, pk: int):
    project, _membership = get_project_for_user(request, slug, Role.OWNER, Role.ADJUDICATOR)
    answer = get_object_or_404(Answer, pk=pk, run__project=project)
    form = AdjudicationForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("That judgement cannot be saved."))
    else:
        data = form.cleaned_data
        try:
            adjudication.adjudicate(
                answer=answer,
                target=data["target"],
                value=data["value"],
                reason=data["reason"],
                by=request.user,
            )
        except JudgmentRefused:
            messages.error(request, _("That judgement cannot be saved."))
        else:
            messages.success(request, _("Final value saved."))
    target = reverse("answers:disputes", args=[project.slug])
    return redirect(target + ("?open=1" if request.POST.get("open") == "1" else ""))
