"""Leads settle disputed answer judgements: the targets people judged differently, and the
one writer of adjudications (each kept in ``AnswerAdjudicationHistory``). The measures
take a lead's value before the annotators' (``numerics.answers.combine_values``)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from annotator.models import Membership

from .judging import Target, check_target
from .models import (
    Answer,
    AnswerAdjudication,
    AnswerAdjudicationHistory,
    AnswerJudgment,
    Aspect,
    Citation,
    Sentence,
)


@dataclass(frozen=True)
class Dispute:
    answer: Answer
    target: Target
    values: dict[str, int]  # username → value
    adjudicated: int | None
    reason: str = ""  # the lead's reason for the final value
    adjudicator: str = ""  # who set it


def _key(row) -> tuple:
    return (row.answer_id, row.aspect, row.nugget_id or row.citation_id or row.sentence_id)


def disputes(project, *, include_settled: bool = True) -> list[Dispute]:
    """Targets two or more people judged with different values (people only), by answer."""
    pseudo = Membership.objects.filter(project=project, is_pseudo=True).values("user_id")
    judged: dict[tuple, dict[str, int]] = {}
    for row in (
        AnswerJudgment.objects.filter(answer__run__project=project)
        .exclude(annotator_id__in=pseudo)
        .select_related("annotator")
        .order_by("answer_id", "aspect", "id")
    ):
        judged.setdefault(_key(row), {})[row.annotator.username] = row.value
    settled = {
        _key(a): a
        for a in AnswerAdjudication.objects.filter(answer__run__project=project).select_related(
            "adjudicator"
        )
    }
    keys = [k for k, v in judged.items() if len(v) >= 2 and len(set(v.values())) > 1]
    if not include_settled:
        keys = [k for k in keys if k not in settled]
    answers = Answer.objects.select_related("query").in_bulk({k[0] for k in keys})
    found = []
    for k in keys:
        final = settled.get(k)
        found.append(
            Dispute(
                answers[k[0]],
                Target(k[1], k[2]),
                judged[k],
                final.value if final else None,
                final.reason if final else "",
                final.adjudicator.username if final else "",
            )
        )
    return found


def adjudicate(*, answer: Answer, target: Target, value: int | None, reason: str, by) -> None:
    """Set (``value=None``: remove) the final value of one target, logged in history."""
    check_target(answer, target, value)
    with transaction.atomic():
        current = (
            AnswerAdjudication.objects.select_for_update()
            .filter(answer=answer, **target.fields())
            .first()
        )
        old = current.value if current else None
        if value is None:
            if current is None:
                return
            current.delete()
            current = None
        elif current is None:
            current = AnswerAdjudication.objects.create(
                answer=answer, value=value, reason=reason, adjudicator=by, **target.fields()
            )
        else:
            if current.value == value and current.reason == reason:
                return
            current.value, current.reason, current.adjudicator = value, reason, by
            current.save(update_fields=["value", "reason", "adjudicator", "updated_at"])
        AnswerAdjudicationHistory.objects.create(
            adjudication=current,
            answer=answer,
            aspect=target.aspect,
            target=target.pk,
            old_value=old,
            new_value=value,
            reason=reason,
            changed_by=by,
        )


def describe(dispute: Dispute) -> str:
    """What the target is, in a line: the nugget, the cited sentence and document, the
    uncited sentence, or the answer."""
    aspect, pk = dispute.target.aspect, dispute.target.pk
    if aspect == Aspect.NUGGET:
        nugget = dispute.answer.query.nuggets.filter(pk=pk).first()
        return f"{nugget.nugget_id}: {nugget.text}" if nugget else ""
    if aspect == Aspect.SUPPORT:
        citation = Citation.objects.select_related("sentence", "document").get(pk=pk)
        return f"{citation.sentence.text} [{citation.document.doc_id}]"
    if aspect == Aspect.NEEDS_CITATION:
        return Sentence.objects.get(pk=pk).text
    return dispute.answer.text
