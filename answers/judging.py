"""Writing answer judgements: every create, change, undo and removal goes through
``change_judgment``, which keeps each change in ``AnswerJudgmentHistory``.

A judgement is one annotator's value of one target of an answer, on its aspect's scale
(``numerics.answers``): a nugget's support (0 not, 1 partial, 2 support), a citation's
support (0 none, 1 partial, 2 full), whether an uncited sentence needs a citation (0 no,
1 yes) or the answer's CRAG grade (0 incorrect … 3 perfect). As for labels, a screen
sends the version of the judgement it showed; a save against a judgement changed since
(another tab, another person's device) is refused with ``JudgmentConflict`` and nothing is
written. Undo names the screen's action id and puts back the value before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction

from .models import (
    TOP_VALUE,
    Answer,
    AnswerJudgment,
    AnswerJudgmentHistory,
    Aspect,
    Citation,
    JudgmentEvent,
    Sentence,
)

# The version a screen saw of a judgement: NO_JUDGMENT when there was none, else the
# time of its last change.
NO_JUDGMENT = "none"


def judgment_version(updated_at: datetime | None) -> str:
    return NO_JUDGMENT if updated_at is None else updated_at.isoformat()


class JudgmentRefused(ValueError):
    """The target is not the answer's, the value not on the aspect's scale."""


class JudgmentConflict(Exception):
    """The judgement changed since the screen showed it; nothing saved. ``judgment`` is
    the judgement as it is now (None when there is none)."""

    def __init__(self, judgment: AnswerJudgment | None):
        super().__init__("the judgement changed since it was shown")
        self.judgment = judgment


class NothingToUndo(Exception):
    """The action named for undo logged no change of this annotator."""


@dataclass(frozen=True)
class Target:
    """What is judged: an aspect of an answer and, except for the CRAG grade, the nugget,
    citation or (uncited) sentence."""

    aspect: str
    pk: int | None = None

    def fields(self) -> dict:
        field = {
            Aspect.NUGGET: "nugget_id",
            Aspect.SUPPORT: "citation_id",
            Aspect.NEEDS_CITATION: "sentence_id",
            Aspect.CRAG: None,
        }[Aspect(self.aspect)]
        values = {"nugget_id": None, "citation_id": None, "sentence_id": None}
        if field:
            values[field] = self.pk
        return {"aspect": self.aspect, **values}


@dataclass(frozen=True)
class JudgmentChange:
    """What one call of ``change_judgment`` (or ``undo_judgment``) did."""

    target: Target
    judgment: AnswerJudgment | None  # after the change; None once removed
    history: AnswerJudgmentHistory | None  # None when nothing changed
    undone: int | None = None


def check_target(answer: Answer, target: Target, value: int | None) -> None:
    """``JudgmentRefused`` unless the target is one of the answer's and the value on scale."""
    try:
        aspect = Aspect(target.aspect)
    except ValueError:
        raise JudgmentRefused(f"no aspect {target.aspect!r}") from None
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= TOP_VALUE[aspect]
    ):
        raise JudgmentRefused(f"{aspect.value} takes 0–{TOP_VALUE[aspect]}, not {value!r}")
    if aspect == Aspect.CRAG:
        if target.pk is not None:
            raise JudgmentRefused("the answer grade has no target")
        return
    if aspect == Aspect.NUGGET:
        ok = answer.query.nuggets.filter(pk=target.pk).exists()
    elif aspect == Aspect.SUPPORT:
        ok = Citation.objects.filter(pk=target.pk, answer=answer).exists()
    else:  # a sentence without citation
        ok = Sentence.objects.filter(pk=target.pk, answer=answer, citations__isnull=True).exists()
    if not ok:
        raise JudgmentRefused(f"no such {aspect.value} target {target.pk!r} in this answer")


def _current(answer: Answer, annotator, target: Target) -> AnswerJudgment | None:
    return (
        AnswerJudgment.objects.select_for_update()
        .filter(answer=answer, annotator=annotator, **target.fields())
        .first()
    )


def _check_version(judgment, expected: str | None, value, note) -> None:
    if expected is None:
        return
    if judgment_version(judgment.updated_at if judgment else None) == expected:
        return
    if value is None and judgment is None:
        return
    if judgment is not None and judgment.value == value and note in (None, judgment.note):
        return  # the other session saved what this one asks for
    raise JudgmentConflict(judgment)


def _log(judgment, event, changed_by, old_value, old_note, action_id) -> AnswerJudgmentHistory:
    removed = event == JudgmentEvent.DELETE
    return AnswerJudgmentHistory.objects.create(
        judgment=None if removed else judgment,
        answer_id=judgment.answer_id,
        aspect=judgment.aspect,
        nugget_id=judgment.nugget_id,
        nugget_key=judgment.nugget.nugget_id if judgment.nugget_id else "",
        citation_id=judgment.citation_id,
        sentence_id=judgment.sentence_id,
        annotator_id=judgment.annotator_id,
        changed_by=changed_by,
        event=event,
        old_value=old_value,
        new_value=None if removed else judgment.value,
        old_note=old_note or "",
        new_note="" if removed else judgment.note,
        action_id=action_id,
    )


def change_judgment(
    *,
    answer: Answer,
    annotator,
    target: Target,
    value: int | None,
    note: str | None = None,
    changed_by=None,
    version: str | None = None,
    action_id: str = "",
) -> JudgmentChange:
    """Create, change or (``value=None``) remove one judgement: the one way one changes.

    In one transaction: the judgement and its history row. A repeated identical value and
    note changes nothing and logs nothing; ``note=None`` keeps the note. ``version`` is
    the judgement's version as the screen showed it (``judgment_version``): when it changed
    since, ``JudgmentConflict`` is raised and nothing is written; without it (imports,
    judges) the change is made whatever the state."""
    check_target(answer, target, value)
    changed_by = changed_by or annotator
    with transaction.atomic():
        judgment = _current(answer, annotator, target)
        _check_version(judgment, version, value, note)
        if value is None:
            if judgment is None:
                return JudgmentChange(target, None, None)
            history = _log(
                judgment, JudgmentEvent.DELETE, changed_by, judgment.value, judgment.note, action_id
            )
            judgment.delete()
            return JudgmentChange(target, None, history)
        if judgment is None:
            try:
                with transaction.atomic():
                    judgment = AnswerJudgment.objects.create(
                        answer=answer,
                        annotator=annotator,
                        value=value,
                        note=note or "",
                        **target.fields(),
                    )
            except IntegrityError:  # a concurrent request created it first
                judgment = _current(answer, annotator, target)
                _check_version(judgment, version, value, note)
            else:
                history = _log(judgment, JudgmentEvent.CREATE, changed_by, None, "", action_id)
                return JudgmentChange(target, judgment, history)
        new_note = judgment.note if note is None else note
        if judgment.value == value and judgment.note == new_note:
            return JudgmentChange(target, judgment, None)
        old_value, old_note = judgment.value, judgment.note
        judgment.value, judgment.note = value, new_note
        judgment.save(update_fields=["value", "note", "updated_at"])
        history = _log(judgment, JudgmentEvent.UPDATE, changed_by, old_value, old_note, action_id)
        return JudgmentChange(target, judgment, history)


def _target_of(history: AnswerJudgmentHistory) -> Target:
    field = {
        Aspect.NUGGET: history.nugget_id,
        Aspect.SUPPORT: history.citation_id,
        Aspect.NEEDS_CITATION: history.sentence_id,
        Aspect.CRAG: None,
    }[Aspect(history.aspect)]
    return Target(history.aspect, field)


def undo_judgment(*, answer: Answer, user, action_id: str) -> JudgmentChange:
    """Put back the value before the user's own change made by ``action_id`` (itself a
    logged change). ``NothingToUndo`` when that action logged no change on this answer;
    ``JudgmentConflict`` (nothing written) when the judgement no longer holds what that
    change made — another session changed it since."""
    history = (
        AnswerJudgmentHistory.objects.filter(
            answer=answer, annotator=user, changed_by=user, action_id=action_id
        )
        .order_by("-pk")
        .first()
        if action_id
        else None
    )
    if history is None:
        raise NothingToUndo(action_id)
    target = _target_of(history)
    if target.aspect != Aspect.CRAG and target.pk is None:
        raise NothingToUndo(action_id)  # the nugget, citation or sentence is gone
    with transaction.atomic():
        current = _current(answer, user, target)
        made = (history.new_value, history.new_note) if history.new_value is not None else None
        now = (current.value, current.note) if current is not None else None
        if now != made:
            raise JudgmentConflict(current)
        change = change_judgment(
            answer=answer,
            annotator=user,
            target=target,
            value=history.old_value,
            note=history.old_note if history.old_value is not None else None,
        )
    return JudgmentChange(target, change.judgment, change.history, undone=history.pk)
