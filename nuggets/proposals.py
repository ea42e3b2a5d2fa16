"""Nuggets proposed by an LLM judge (the AutoNuggetizer idea), pending until a lead decides.

For a query, the prompt sends numbered passages — the relevant evidence people labelled
(grade ≥ the project's relevance threshold; labels of imported assessors and LLM judges
are not people's) — and asks for nuggets that cite them by number. A proposal's evidence
is the spans of the passages it cites, exactly as they were sent: offsets come from the
passages, never from the model, and a proposal citing a number that was not sent is
refused. A lead accepts a proposal (it becomes a nugget), edits it first, or rejects it;
each decision is kept in the nuggets' history.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from annotator.models import Document, Judgment, Query
from formats.errors import Problem, define, gettext_noop

from .changes import NuggetRejected, Span, check_importance, check_text, create_nugget
from .models import (
    MAX_NUGGET_TEXT,
    Importance,
    NuggetEvent,
    NuggetHistory,
    NuggetProposal,
    ProposalStatus,
)

MAX_PASSAGES = 20  # passages one prompt sends
PASSAGE_CHARS = 1500  # a longer span is sent (and cited) as its first characters
DEFAULT_MAX_NUGGETS = 8

NOT_JSON = define("proposals.not_json", gettext_noop("the answer is not one JSON object"))
NO_LIST = define("proposals.no_list", gettext_noop('the answer has no "nuggets" list'))
BAD_ITEM = define(
    "proposals.bad_item",
    gettext_noop("nugget %(n)s needs a text, an importance (vital or okay) and its passages"),
)
UNSENT = define(
    "proposals.unsent",
    gettext_noop("nugget %(n)s cites passage %(passage)s, which was not sent"),
)
TOO_MANY = define(
    "proposals.too_many", gettext_noop("nugget %(n)s is beyond the %(max)s asked for")
)
DECIDED = define(
    "proposals.decided", gettext_noop("this proposal was already decided (%(status)s)")
)
NO_PASSAGES = define(
    "proposals.no_passages",
    gettext_noop("query %(qid)s has no relevant evidence labelled by people to send"),
)


@dataclass(frozen=True)
class Passage:
    """A numbered passage of a prompt: the span sent, and its text."""

    number: int
    document_pk: int
    doc_id: str
    start: int
    end: int
    text: str


def passages_for(query: Query, *, limit: int = MAX_PASSAGES) -> list[Passage]:
    """The query's relevant evidence labelled by people, best grades first, each span once
    (cut to ``PASSAGE_CHARS``), numbered from 1."""
    threshold = query.project.relevance_threshold
    labels = (
        Judgment.objects.by_people(query.project)
        .filter(query=query, grade__gte=threshold)
        .order_by("-grade", "document_id", "start", "end")
        .values_list("document_id", "start", "end")
    )
    spans = list(dict.fromkeys((d, s, min(e, s + PASSAGE_CHARS)) for d, s, e in labels))
    spans = [span for span in spans if span[2] > span[1]][:limit]
    documents = {
        d.pk: d
        for d in Document.objects.filter(pk__in={d for d, _s, _e in spans}).only("doc_id", "text")
    }
    return [
        Passage(number, d, documents[d].doc_id, s, e, documents[d].text[s:e])
        for number, (d, s, e) in enumerate(spans, start=1)
    ]


def proposal_prompt(query: Query, passages: list[Passage], max_nuggets: int) -> str:
    """The prompt: the question, the numbered passages, the answer's one JSON form."""
    numbered = "\n".join(f"[{p.number}] {p.text}" for p in passages)
    return (
        "You write the nuggets of a question: the facts a good answer to it must contain.\n"
        f"Question: {query.text}\n\n"
        f"Passages:\n{numbered}\n\n"
        f"Write at most {max_nuggets} nuggets. Each is one short fact, in the language of the "
        'question, stated by the passages. Mark it "vital" if an answer without it fails '
        'the question, else "okay". Cite the passages that state it by their numbers.\n'
        'Answer with one JSON object only: {"nuggets": [{"text": "...", "importance": '
        '"vital", "passages": [1, 2]}]}'
    )


@dataclass(frozen=True)
class Proposed:
    text: str
    importance: str
    passages: tuple[int, ...]


@dataclass
class ReadAnswer:
    """What an answer proposes, and each proposal refused with why."""

    proposed: list[Proposed] = field(default_factory=list)
    refused: list[Problem] = field(default_factory=list)


class UnreadableAnswer(ValueError):
    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem


def read_answer(text: str, n_passages: int, max_nuggets: int) -> ReadAnswer:
    """The proposals of an answer; ``UnreadableAnswer`` when it is not the JSON asked for.
    A proposal citing a passage that was not sent (or none), without a text or an
    importance, or beyond ``max_nuggets``, is refused — never guessed."""
    try:
        answer = json.loads(text)
    except (TypeError, ValueError):
        raise UnreadableAnswer(NOT_JSON()) from None
    if not isinstance(answer, dict):
        raise UnreadableAnswer(NOT_JSON())
    items = answer.get("nuggets")
    if not isinstance(items, list):
        raise UnreadableAnswer(NO_LIST())
    found = ReadAnswer()
    for n, item in enumerate(items, start=1):
        if len(found.proposed) >= max_nuggets:
            found.refused.append(TOO_MANY(n=n, max=max_nuggets))
            continue
        ok = isinstance(item, dict)
        text_value = item.get("text") if ok else None
        importance = item.get("importance") if ok else None
        cited = item.get("passages") if ok else None
        if (
            not isinstance(text_value, str)
            or not text_value.strip()
            or len(text_value.strip()) > MAX_NUGGET_TEXT
            or importance not in Importance.values
            or not isinstance(cited, list)
            or not cited
            or not all(isinstance(c, int) and not isinstance(c, bool) for c in cited)
        ):
            found.refused.append(BAD_ITEM(n=n))
            continue
        unsent = [c for c in cited if not 1 <= c <= n_passages]
        if unsent:
            found.refused.append(UNSENT(n=n, passage=unsent[0]))
            continue
        found.proposed.append(Proposed(text_value.strip(), importance, tuple(dict.fromkeys(cited))))
    return found


def store(
    query: Query, passages: list[Passage], answer: ReadAnswer, *, judge_version=None, job_id=None
) -> list[NuggetProposal]:
    """The answer's proposals, pending, each with the spans of the passages it cites."""
    by_number = {p.number: p for p in passages}
    return NuggetProposal.objects.bulk_create(
        [
            NuggetProposal(
                query=query,
                judge_version=judge_version,
                job_id=job_id,
                text=item.text,
                importance=item.importance,
                evidence=[
                    {
                        "doc_id": by_number[n].doc_id,
                        "start": by_number[n].start,
                        "end": by_number[n].end,
                        "passage": n,
                    }
                    for n in item.passages
                ],
            )
            for item in answer.proposed
        ]
    )


def _snapshot(proposal: NuggetProposal) -> dict:
    return {
        "text": proposal.text,
        "importance": proposal.importance,
        "evidence": [{k: e[k] for k in ("doc_id", "start", "end")} for e in proposal.evidence],
        "judge": str(proposal.judge_version) if proposal.judge_version_id else "",
    }


def decide(
    proposal: NuggetProposal,
    action: str,
    *,
    by,
    text: str | None = None,
    importance: str | None = None,
) -> NuggetProposal:
    """``accept`` (a nugget as proposed), ``edit`` (accepted with ``text``/``importance``)
    or ``reject``; the decision and, when accepted, the new nugget are kept in history."""
    with transaction.atomic():
        proposal = NuggetProposal.objects.select_for_update().get(pk=proposal.pk)
        if proposal.status != ProposalStatus.PENDING:
            raise NuggetRejected(DECIDED(status=proposal.status), status=409)
        if action == "reject":
            NuggetHistory.objects.create(
                query_id=proposal.query_id,
                nugget_id=f"proposal-{proposal.pk}",
                event=NuggetEvent.REJECT,
                old=_snapshot(proposal),
                detail={"proposal": proposal.pk},
                changed_by=by,
            )
            proposal.status = ProposalStatus.REJECTED
        else:
            edited = action == "edit"
            final_text = check_text(text) if edited and text else proposal.text
            final_importance = (
                check_importance(importance) if edited and importance else proposal.importance
            )
            names = {e["doc_id"] for e in proposal.evidence}
            documents = {
                d.doc_id: d
                for d in Document.objects.filter(project=proposal.query.project, doc_id__in=names)
            }
            spans = [
                Span(documents[e["doc_id"]], e["start"], e["end"])
                for e in proposal.evidence
                if e["doc_id"] in documents
            ]
            nugget = create_nugget(
                proposal.query,
                text=final_text,
                importance=final_importance,
                evidence=spans,
                changed_by=by,
            )
            NuggetHistory.objects.create(
                subject=nugget,
                query_id=proposal.query_id,
                nugget_id=nugget.nugget_id,
                event=NuggetEvent.ACCEPT,
                old=_snapshot(proposal),
                new={"text": final_text, "importance": final_importance},
                detail={"proposal": proposal.pk, "edited": edited},
                changed_by=by,
            )
            proposal.status = ProposalStatus.EDITED if edited else ProposalStatus.ACCEPTED
            proposal.nugget = nugget
        proposal.decided_by, proposal.decided_at = by, timezone.now()
        proposal.save(update_fields=["status", "decided_by", "decided_at", "nugget"])
    return proposal
