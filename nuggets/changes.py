"""Writing nuggets: every create, edit, link, move, merge and delete is one call here that
writes the nugget and its history row(s) in one transaction."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max

from annotator.models import Document, Query
from annotator.problems import shown
from formats.errors import Problem, define, gettext_noop

from .models import (
    MAX_NUGGET_TEXT,
    Importance,
    Nugget,
    NuggetEvent,
    NuggetEvidence,
    NuggetHistory,
)

NO_TEXT = define("nuggets.no_text", gettext_noop("a nugget needs a text"))
TEXT_TOO_LONG = define(
    "nuggets.text_too_long", gettext_noop("a nugget's text is at most %(n)s characters")
)
BAD_IMPORTANCE = define(
    "nuggets.bad_importance", gettext_noop("importance must be vital or okay, not %(value)s")
)
OUTSIDE = define(
    "nuggets.outside",
    gettext_noop(
        "characters %(start)s–%(end)s are not in document %(doc_id)s (%(length)s characters)"
    ),
)
TEXT_DIFFERS = define(
    "nuggets.text_differs",
    gettext_noop(
        "the evidence text does not match characters %(start)s–%(end)s of document %(doc_id)s"
    ),
)
BAD_ID = define(
    "nuggets.bad_id", gettext_noop("a nugget id is 1–255 characters without spaces, not %(value)s")
)
ID_TAKEN = define(
    "nuggets.id_taken", gettext_noop("query %(qid)s already has a nugget %(nugget_id)s")
)
CHANGED = define(
    "nuggets.changed",
    gettext_noop(
        "this nugget was changed in another session (now version %(version)s); reload to see it"
    ),
)
MERGE_ACROSS = define(
    "nuggets.merge_across", gettext_noop("only nuggets of one query can be merged")
)


class NuggetRejected(ValueError):
    """A change that cannot be made; nothing was written. ``problem`` is data (a code and
    its values), said in the reader's language where it is shown (``message``)."""

    def __init__(self, problem: Problem, status: int = 400):
        self.problem, self.status = problem, status
        super().__init__(str(problem))

    def message(self) -> str:
        return shown(self.problem)


@dataclass(frozen=True)
class Span:
    """A span of evidence as a change names it (a document of the query's project)."""

    document: Document
    start: int
    end: int


def check_text(text: str) -> str:
    text = (text or "").strip()
    if not text:
        raise NuggetRejected(NO_TEXT())
    if len(text) > MAX_NUGGET_TEXT:
        raise NuggetRejected(TEXT_TOO_LONG(n=MAX_NUGGET_TEXT))
    return text


def check_importance(value: str) -> str:
    if value not in Importance.values:
        raise NuggetRejected(BAD_IMPORTANCE(value=repr(value)))
    return value


def check_span(document: Document, start: int, end: int, text: str | None = None) -> Span:
    """The span if ``0 ≤ start < end ≤ len(text)`` and, when ``text`` is given, the
    document's characters there are that text (a stale page cannot link the wrong
    characters: status 409)."""
    length = len(document.text)
    if not 0 <= start < end <= length:
        raise NuggetRejected(OUTSIDE(start=start, end=end, doc_id=document.doc_id, length=length))
    if text and document.text[start:end].replace("\x00", "\ufffd") != text:
        raise NuggetRejected(TEXT_DIFFERS(start=start, end=end, doc_id=document.doc_id), status=409)
    return Span(document, start, end)


def check_nugget_id(value: str) -> str:
    value = (value or "").strip()
    if not value or len(value) > 255 or re.search(r"\s", value):
        raise NuggetRejected(BAD_ID(value=repr(value)))
    return value


def snapshot(nugget: Nugget) -> dict:
    """The nugget as its history records it."""
    return {
        "id": nugget.nugget_id,
        "text": nugget.text,
        "importance": nugget.importance,
        "order": nugget.order,
        "evidence": [
            {"doc_id": doc_id, "start": start, "end": end}
            for doc_id, start, end in nugget.evidence.order_by(
                "document__doc_id", "start", "end"
            ).values_list("document__doc_id", "start", "end")
        ],
    }


def _log(nugget: Nugget, event: str, changed_by, old: dict, new: dict, **detail) -> NuggetHistory:
    return NuggetHistory.objects.create(
        subject=None if event in (NuggetEvent.DELETE, NuggetEvent.MERGE) else nugget,
        query_id=nugget.query_id,
        nugget_id=nugget.nugget_id,
        event=event,
        old=old,
        new=new,
        detail=detail,
        changed_by=changed_by,
    )


def _locked(nugget: Nugget, version: int | None) -> Nugget:
    """The nugget read for update; ``NuggetRejected`` (409) when ``version`` is given and
    it has changed since."""
    current = Nugget.objects.select_for_update().get(pk=nugget.pk)
    if version is not None and current.version != version:
        raise NuggetRejected(CHANGED(version=current.version), status=409)
    return current


def _bump(nugget: Nugget, *fields: str) -> None:
    nugget.version += 1
    nugget.save(update_fields=[*fields, "version", "updated_at"])


def _add_spans(nugget: Nugget, spans: Iterable[Span]) -> int:
    known = set(nugget.evidence.values_list("document_id", "start", "end"))
    new = []
    for span in spans:
        key = (span.document.pk, span.start, span.end)
        if key not in known:
            known.add(key)
            new.append(
                NuggetEvidence(
                    nugget=nugget, document=span.document, start=span.start, end=span.end
                )
            )
    NuggetEvidence.objects.bulk_create(new)
    return len(new)


def next_nugget_id(query: Query) -> str:
    """``n1``, ``n2``, … : the first ``n<number>`` the query has not used (deleted ids
    included, as history names them)."""
    used = set(query.nuggets.values_list("nugget_id", flat=True))
    used |= set(query.nugget_history.values_list("nugget_id", flat=True))
    number = len(used) + 1
    while f"n{number}" in used:
        number += 1
    return f"n{number}"


def create_nugget(
    query: Query,
    *,
    text: str,
    importance: str,
    evidence: Iterable[Span] = (),
    changed_by,
    nugget_id: str | None = None,
    author=None,
) -> Nugget:
    """A new nugget at the end of the query's list, with its evidence; logged."""
    text, importance = check_text(text), check_importance(importance)
    evidence = [check_span(s.document, s.start, s.end) for s in evidence]
    with transaction.atomic():
        Query.objects.select_for_update().filter(pk=query.pk).first()  # one writer per query
        nugget_id = check_nugget_id(nugget_id) if nugget_id else next_nugget_id(query)
        if query.nuggets.filter(nugget_id=nugget_id).exists():
            raise NuggetRejected(ID_TAKEN(qid=query.qid, nugget_id=nugget_id))
        last = query.nuggets.aggregate(m=Max("order"))["m"]
        nugget = Nugget.objects.create(
            query=query,
            nugget_id=nugget_id,
            text=text,
            importance=importance,
            order=0 if last is None else last + 1,
            author=author if author is not None else changed_by,
        )
        _add_spans(nugget, evidence)
        _log(nugget, NuggetEvent.CREATE, changed_by, {}, snapshot(nugget))
    return nugget


def edit_nugget(
    nugget: Nugget,
    *,
    changed_by,
    text: str | None = None,
    importance: str | None = None,
    add: Iterable[Span] = (),
    remove: Iterable[int] = (),
    version: int | None = None,
) -> Nugget:
    """Change the text or importance, link spans (``add``) or unlink evidence rows by pk
    (``remove``); one history row for the whole change, none when nothing changed."""
    text = None if text is None else check_text(text)
    importance = None if importance is None else check_importance(importance)
    add = [check_span(s.document, s.start, s.end) for s in add]
    with transaction.atomic():
        nugget = _locked(nugget, version)
        old = snapshot(nugget)
        if text is not None:
            nugget.text = text
        if importance is not None:
            nugget.importance = importance
        _add_spans(nugget, add)
        nugget.evidence.filter(pk__in=list(remove)).delete()
        new = snapshot(nugget)
        if new == old:
            return nugget
        _bump(nugget, "text", "importance")
        _log(nugget, NuggetEvent.UPDATE, changed_by, old, new)
    return nugget


def move_nugget(nugget: Nugget, position: int, *, changed_by, version: int | None = None) -> Nugget:
    """Put the nugget at 0-based ``position`` of its query's list (clamped); every nugget
    whose place changes gets a history row."""
    with transaction.atomic():
        nugget = _locked(nugget, version)
        ordered = list(
            Nugget.objects.select_for_update().filter(query_id=nugget.query_id).ordered()
        )
        ordered = [n for n in ordered if n.pk != nugget.pk]
        position = max(0, min(position, len(ordered)))
        ordered.insert(position, nugget)
        for index, item in enumerate(ordered):
            if item.order != index:
                old = snapshot(item)
                item.order = index
                _bump(item, "order")
                _log(item, NuggetEvent.MOVE, changed_by, old, snapshot(item))
    return nugget


def merge_nuggets(
    target: Nugget, others: Iterable[Nugget], *, changed_by, version: int | None = None
) -> Nugget:
    """Fold ``others`` into ``target``: it gains their evidence (and becomes vital if any
    of them was), they are removed, each with a history row naming the target."""
    with transaction.atomic():
        target = _locked(target, version)
        others = [
            Nugget.objects.select_for_update().get(pk=o.pk) for o in others if o.pk != target.pk
        ]
        if any(o.query_id != target.query_id for o in others):
            raise NuggetRejected(MERGE_ACROSS())
        if not others:
            return target
        old = snapshot(target)
        spans = [
            Span(Document(pk=document), start, end)
            for o in others
            for document, start, end in o.evidence.values_list("document_id", "start", "end")
        ]
        _add_spans(target, spans)
        if any(o.vital for o in others):
            target.importance = Importance.VITAL
        for other in others:
            _log(
                other,
                NuggetEvent.MERGE,
                changed_by,
                snapshot(other),
                {},
                into=target.nugget_id,
            )
            other.delete()
        _bump(target, "importance")
        _log(
            target,
            NuggetEvent.UPDATE,
            changed_by,
            old,
            snapshot(target),
            merged=[o.nugget_id for o in others],
        )
    return target


def delete_nugget(nugget: Nugget, *, changed_by, version: int | None = None) -> None:
    with transaction.atomic():
        nugget = _locked(nugget, version)
        _log(nugget, NuggetEvent.DELETE, changed_by, snapshot(nugget), {})
        nugget.delete()
