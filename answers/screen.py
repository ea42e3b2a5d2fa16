"""The answer judging screen: which answer a person judges next, and what the screen shows.

Blind to the system: the screen never names the run, and answers come in an order of
their own for each person — grouped by query (answers to one query one after another, so
they are judged side by side), the runs shuffled within each query by a hash of the
person and the answer (stable across visits, different for each person). The next answer
is the first in that order the person has not given a CRAG grade (the answer's last
step on the screen).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .judging import judgment_version
from .models import Answer, AnswerJudgment, AnswerRun, Aspect

# Each aspect's buttons: (value, key, level), in the order shown.
CHOICES = {
    "nugget_choices": [(2, "s", "support"), (1, "p", "partial"), (0, "n", "not")],
    "support_choices": [(2, "f", "full"), (1, "p", "partial"), (0, "n", "none")],
    "needs_choices": [(1, "y", "yes"), (0, "n", "no")],
    "crag_choices": [
        (3, "1", "perfect"),
        (2, "2", "acceptable"),
        (1, "3", "missing"),
        (0, "4", "incorrect"),
    ],
}
CONTEXT = 120  # characters of the document shown on each side of a cited span
CITED_MAX = 600


def _shuffle_key(user_pk: int, answer_pk: int) -> str:
    return hashlib.blake2b(f"{user_pk}:{answer_pk}".encode(), digest_size=8).hexdigest()


def judging_order(project, user) -> list[int]:
    """The answers of the project's active runs, in this person's order (answer pks)."""
    runs = AnswerRun.objects.filter(project=project).active()
    rows = Answer.objects.filter(run__in=runs).values_list("pk", "query__qid")
    return [pk for pk, _qid in sorted(rows, key=lambda r: (r[1], _shuffle_key(user.pk, r[0])))]


def next_answer(project, user) -> int | None:
    """The first answer in the person's order without their CRAG grade."""
    order = judging_order(project, user)
    graded = set(
        AnswerJudgment.objects.filter(
            annotator=user, aspect=Aspect.CRAG, answer_id__in=order
        ).values_list("answer_id", flat=True)
    )
    return next((pk for pk in order if pk not in graded), None)


@dataclass(frozen=True)
class Progress:
    position: int  # 1-based place of the answer in the order
    total: int
    graded: int
    following: int | None  # the answer after this one, if any


def progress(project, user, answer_pk: int) -> Progress:
    order = judging_order(project, user)
    graded = AnswerJudgment.objects.filter(
        annotator=user, aspect=Aspect.CRAG, answer_id__in=order
    ).count()
    at = order.index(answer_pk) if answer_pk in order else -1
    following = order[at + 1] if 0 <= at < len(order) - 1 else None
    return Progress(at + 1, len(order), graded, following)


def _cited(document_text: str, start: int, end: int) -> dict:
    """The cited span with a little of its document around it."""
    shown_end = min(end, start + CITED_MAX)
    return {
        "before": document_text[max(0, start - CONTEXT) : start],
        "text": document_text[start:shown_end],
        "after": document_text[shown_end : shown_end + CONTEXT],
        "cut": shown_end < end,
    }


def screen(answer: Answer, user) -> dict:
    """Everything the screen shows of one answer, with this person's judgements and their
    versions (sent back with each save)."""
    mine = {
        (j.aspect, j.nugget_id or j.citation_id or j.sentence_id): j
        for j in AnswerJudgment.objects.filter(answer=answer, annotator=user)
    }

    def state(aspect: str, pk: int | None) -> dict:
        found = mine.get((aspect, pk))
        return {
            "value": None if found is None else found.value,
            "version": judgment_version(found.updated_at if found else None),
        }

    nuggets = [
        {
            "pk": n.pk,
            "id": n.nugget_id,
            "text": n.text,
            "vital": n.vital,
            **state(Aspect.NUGGET, n.pk),
        }
        for n in answer.query.nuggets.order_by("order", "pk")
    ]
    sentences = []
    for sentence in answer.sentences.order_by("number").prefetch_related("citations__document"):
        citations = [
            {
                "pk": c.pk,
                "number": c.number,
                "doc_id": c.document.doc_id,
                "title": c.document.title,
                **_cited(c.document.text, c.start, c.end),
                **state(Aspect.SUPPORT, c.pk),
            }
            for c in sentence.citations.all()
        ]
        sentences.append(
            {
                "pk": sentence.pk,
                "number": sentence.number,
                "text": sentence.text,
                "citations": citations,
                **(state(Aspect.NEEDS_CITATION, sentence.pk) if not citations else {}),
            }
        )
    return {
        "answer": answer,
        "query": answer.query,
        "nuggets": nuggets,
        "sentences": sentences,
        "crag": state(Aspect.CRAG, None),
    }


# Side by side: the answers of several runs to one query, one column each.
COLUMN_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def side_by_side_queries(project, user) -> list[int]:
    """The queries answered by the project's active runs (query pks), in the person's
    order of answers (by qid)."""
    order = judging_order(project, user)
    query_of = dict(Answer.objects.filter(pk__in=order).values_list("pk", "query_id"))
    return list(dict.fromkeys(query_of[pk] for pk in order))


def next_side_by_side_query(project, user) -> int | None:
    """The first query some of whose answers lack the person's CRAG grade."""
    pending = next_answer(project, user)
    if pending is None:
        return None
    return Answer.objects.filter(pk=pending).values_list("query_id", flat=True).first()


@dataclass(frozen=True)
class SideBySide:
    """One query's answers for one person: ``columns`` (each a ``screen`` dict with its
    column name, A, B …) in the person's shuffled order — never naming the run;
    ``position`` (1-based) of the query among ``total``; ``following`` the next query."""

    query: object
    columns: list[dict]
    position: int
    total: int
    following: int | None


def side_by_side(project, user, query) -> SideBySide:
    """The answers of the active runs to ``query`` as this person judges them side by side,
    in the order of ``judging_order`` (a stable shuffle per person and answer)."""
    answers = {
        a.pk: a
        for a in Answer.objects.filter(
            query=query, run__project=project, run__archived_at__isnull=True
        ).select_related("query", "run")
    }
    ordered = sorted(answers, key=lambda pk: _shuffle_key(user.pk, pk))
    columns = [
        {"name": COLUMN_NAMES[i % len(COLUMN_NAMES)], **screen(answers[pk], user)}
        for i, pk in enumerate(ordered)
    ]
    queries = side_by_side_queries(project, user)
    at = queries.index(query.pk) if query.pk in queries else -1
    following = queries[at + 1] if 0 <= at < len(queries) - 1 else None
    return SideBySide(query, columns, at + 1, len(queries), following)
