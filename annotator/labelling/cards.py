"""Presenters of the labelling screens: candidate cards, evidence rows, document results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db.models import F, QuerySet
from django.db.models.functions import Length, Substr

from numerics.mapping import map_pairs
from numerics.spans import SpanArrays, page_of

from ..access import sees_all_labels
from ..labels import NO_LABEL, kept_notes, label_version
from ..models import Chunk, Document, Granularity, Judgment, KeptNote, Query
from ..screen_parts import card_parts
from ..search import highlight
from ..suggestions import Suggestion, suggestions
from .pieces import cover, describe

if TYPE_CHECKING:
    from .screen import Screen

EXCERPT_CHARS = 300
HEAD_CHARS = 4000  # of a document's text, searched for a snippet


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ------------------------------------------------------------------ candidate cards


@dataclass
class Card:
    """One chunk as the annotator sees it, with the annotator's grade and note."""

    chunk_pk: int
    chunk_id: str
    document_pk: int
    doc_id: str
    title: str
    start: int
    end: int
    page: int | None
    text: str
    doc_length: int = 0
    judgment_pk: int | None = None
    grade: int | None = None
    note: str = ""
    others: list[tuple[str, int, str]] = field(default_factory=list)  # name, grade, note
    pieces: list[tuple[str, bool]] | None = None  # search-hit highlighting
    suggestion: Suggestion | None = None  # post-edit mode: a judge's grade and reason
    folded: list[str] = field(default_factory=list)  # ids of candidates shown by this card
    covered_grade: int | None = None  # the best grade of the annotator's other labels on it
    covered_by: str = ""  # which label that is
    version: str = NO_LABEL  # of the annotator's label, sent back with a save
    # Parts of the text an earlier card shows: (start, end, that card's position).
    repeats: list[tuple[int, int, int]] = field(default_factory=list)
    # What the apps above draw in the card (``screen_parts``: the source's quality grade).
    extras: list = field(default_factory=list)

    @property
    def judged(self) -> bool:
        return self.grade is not None or self.covered_grade is not None

    @property
    def parts(self) -> list[tuple[str, int | None]]:
        """The text in pieces: (text, None) shown here, (text, position) shown by an
        earlier card; empty when no part is repeated."""
        if not self.repeats:
            return []
        pieces: list[tuple[str, int | None]] = []
        at = self.start
        for start, end, position in self.repeats:
            if start > at:
                pieces.append((self.text[at - self.start : start - self.start], None))
            pieces.append((self.text[start - self.start : end - self.start], position))
            at = end
        if at < self.end:
            pieces.append((self.text[at - self.start :], None))
        return pieces


def chunk_cards(
    screen: Screen, chunk_pks: list[int], folded: dict[int, list[int]] | None = None
) -> list[Card]:
    """Cards for these chunks, in this order; chunks outside the project are dropped.

    Each card says what covers it (``pieces.cover``); ``folded`` names, per card, the pool
    candidates it stands for (``pieces.fold_pool``)."""
    if not chunk_pks:
        return []
    # Filter by primary key only and check the project in Python: with a project filter
    # SQLite starts from the project's documents, which is slow for a large project.
    rows = (
        Chunk.objects.filter(pk__in=chunk_pks)
        .annotate(
            body=Substr("document__text", F("start") + 1, F("end") - F("start")),
            doc_length=Length("document__text"),
        )
        .values(
            "pk",
            "document__project_id",
            "chunk_id",
            "start",
            "end",
            "document_id",
            "document__doc_id",
            "document__title",
            "document__page_starts",
            "body",
            "doc_length",
        )
    )
    by_pk = {
        r["pk"]: Card(
            chunk_pk=r["pk"],
            chunk_id=r["chunk_id"],
            document_pk=r["document_id"],
            doc_id=r["document__doc_id"],
            title=r["document__title"],
            start=r["start"],
            end=r["end"],
            page=page_of(r["document__page_starts"] or [], r["start"]),
            text=r["body"] or "",
            doc_length=r["doc_length"] or 0,
        )
        for r in rows
        if r["document__project_id"] == screen.project.pk
    }
    chunk_labels = Judgment.objects.filter(granularity=Granularity.CHUNK, chunk_id__in=list(by_pk))
    mine = chunk_labels.of(screen.query, screen.user).values_list(
        "chunk_id", "pk", "grade", "note", "updated_at"
    )
    for chunk_pk, judgment_pk, grade, note, updated_at in mine:
        card = by_pk[chunk_pk]
        card.judgment_pk, card.grade, card.note = judgment_pk, grade, note
        card.version = label_version(updated_at)
    ungraded = [card for card in by_pk.values() if card.grade is None]
    kept = kept_notes(screen.query, screen.user) if ungraded and screen.can_label else {}
    for card in ungraded:
        card.note = kept.get((card.document_pk, card.start, card.end), "")
    if screen.sees_all:
        others = (
            chunk_labels.visible_to(screen.membership)
            .filter(query=screen.query)
            .exclude(annotator=screen.user)
            .order_by("annotator__username")
            .values_list("chunk_id", "annotator__username", "grade", "note")
        )
        # The note travels with the grade: an LLM judge's reason beside its grade.
        for chunk_pk, username, grade, note in others:
            by_pk[chunk_pk].others.append((username, grade, note))
    if screen.can_label:
        for chunk_pk, suggestion in suggestions(screen.project, screen.query, list(by_pk)).items():
            if chunk_pk in by_pk:
                by_pk[chunk_pk].suggestion = suggestion
    cards = [by_pk[pk] for pk in chunk_pks if pk in by_pk]
    # The chunks folded into a card besides its own (most cards have none: no query).
    members = [m for c in cards for m in folded.get(c.chunk_pk, [])[1:]] if folded else []
    if members:
        ids = dict(Chunk.objects.filter(pk__in=members).values_list("pk", "chunk_id"))
        for card in cards:
            card.folded = [ids[m] for m in folded.get(card.chunk_pk, [])[1:] if m in ids]
    # Only an ungraded card shows what covers it (a graded one shows its own grade).
    cover(screen, [card for card in cards if card.grade is None])
    drawn = card_parts(screen, [card.document_pk for card in cards])
    for card in cards:
        card.extras = drawn.get(card.document_pk, [])
    return cards


# ------------------------------------------------------------------ evidence rows


@dataclass
class EvidenceRow:
    """One label in a list of evidence: its span, excerpt, grade and whose it is."""

    judgment_pk: int
    granularity: str
    granularity_label: str
    document_pk: int
    doc_id: str
    title: str
    start: int
    end: int
    page: int | None
    excerpt: str
    grade: int
    note: str
    chunk_pk: int | None
    chunk_id: str
    annotator: str
    own: bool
    version: str = NO_LABEL  # sent back with a save (labels.label_version)


def evidence_rows(judgments: QuerySet[Judgment], *, own: bool = False) -> list[EvidenceRow]:
    """Rows for these labels, in the queryset's order; ``own`` ones get grade controls."""
    labels = dict(Granularity.choices)
    rows = judgments.annotate(
        body=Substr("document__text", F("start") + 1, min(EXCERPT_CHARS, 2000))
    ).values(
        "pk",
        "granularity",
        "document_id",
        "document__doc_id",
        "document__title",
        "document__page_starts",
        "start",
        "end",
        "grade",
        "note",
        "chunk_id",
        "chunk__chunk_id",
        "annotator__username",
        "body",
        "updated_at",
    )
    result = []
    for r in rows:
        length = r["end"] - r["start"]
        body = r["body"] or ""
        result.append(
            EvidenceRow(
                judgment_pk=r["pk"],
                granularity=r["granularity"],
                granularity_label=str(labels.get(r["granularity"], r["granularity"])),
                document_pk=r["document_id"],
                doc_id=r["document__doc_id"],
                title=r["document__title"],
                start=r["start"],
                end=r["end"],
                page=page_of(r["document__page_starts"] or [], r["start"]),
                excerpt=excerpt(body[:length] + ("…" if length > len(body) else "")),
                grade=r["grade"],
                note=r["note"],
                chunk_pk=r["chunk_id"],
                chunk_id=r["chunk__chunk_id"] or "",
                annotator=r["annotator__username"],
                own=own,
                version=label_version(r["updated_at"]),
            )
        )
    return result


def own_evidence(query: Query, user, *, exclude_chunks: set[int]) -> list[EvidenceRow]:
    """The user's labels on this query, without the labels of these chunks."""
    judgments = (
        Judgment.objects.of(query, user)
        .exclude(chunk_id__in=exclude_chunks)
        .order_by("document_id", "start", "granularity")
    )
    return evidence_rows(judgments, own=True)


def own_row(query: Query, user, judgment_pk: int) -> EvidenceRow | None:
    """The row of one of the user's own labels on this query, or None."""
    rows = evidence_rows(Judgment.objects.of(query, user).filter(pk=judgment_pk), own=True)
    return rows[0] if rows else None


# ------------------------------------------------------------------ document results


def snippet(text: str, terms: list[str], width: int = 240) -> str:
    """About ``width`` characters of ``text`` around the first search hit."""
    lower = text.lower()
    hits = [lower.find(t.lower()) for t in terms if t and lower.find(t.lower()) >= 0]
    centre = min(hits) if hits else 0
    start = max(0, centre - width // 3)
    piece = text[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def document_results(screen: Screen, doc_pks: list[int], terms: list[str] = ()) -> list[dict]:
    """Whole documents to grade, in this order, with the user's document-level grade."""
    terms = list(terms)
    docs = {
        d["pk"]: d
        for d in Document.objects.filter(pk__in=doc_pks, project=screen.project)
        .annotate(head=Substr("text", 1, HEAD_CHARS))
        .values("pk", "doc_id", "title", "head")
    }
    labels = {
        document: (grade, updated_at)
        for document, grade, updated_at in Judgment.objects.of(screen.query, screen.user)
        .filter(granularity=Granularity.DOCUMENT, document_id__in=list(docs))
        .values_list("document_id", "grade", "updated_at")
    }
    results = []
    for pk in doc_pks:
        if pk not in docs:
            continue
        d = docs[pk]
        results.append(
            {
                "pk": pk,
                "doc_id": d["doc_id"],
                "title": d["title"],
                "title_pieces": highlight(d["title"], terms),
                "pieces": highlight(snippet(d["head"] or "", terms), terms),
                "grade": labels[pk][0] if pk in labels else None,
                "version": label_version(labels[pk][1] if pk in labels else None),
            }
        )
    return results


# ------------------------------------------------------------------ kept notes


@dataclass
class KeptNoteRow:
    """A note kept on evidence nobody graded directly, and the labels that cover it."""

    annotator: str
    document_pk: int
    doc_id: str
    chunk_id: str
    start: int
    end: int
    text: str
    covered_by: list[tuple[str, int]] = field(default_factory=list)  # (label named, grade)


def kept_note_rows(query: Query, membership) -> list[KeptNoteRow]:
    """Notes kept without a grade on this query — every annotator's for leads, one's own for
    the others — each with the annotator's labels that reach its span under the project's
    mapping (a card noted, then covered by a passage: the note is not lost to the lead)."""
    notes = KeptNote.objects.filter(query=query).select_related("annotator", "document", "chunk")
    if not sees_all_labels(membership):
        notes = notes.filter(annotator_id=membership.user_id)
    notes = notes.defer("document__text", "document__metadata")
    notes = list(notes.order_by("annotator__username", "document_id", "start"))
    rows = []
    labels = list(
        Judgment.objects.filter(query=query, annotator_id__in={n.annotator_id for n in notes})
        .order_by("pk")
        .values_list(
            "annotator_id",
            "granularity",
            "document_id",
            "start",
            "end",
            "grade",
            "chunk__chunk_id",
            "document__page_starts",
        )
    )
    policy = query.project.mapping_policy()
    for note in notes:
        own = [row for row in labels if row[0] == note.annotator_id]
        covering: list[tuple[str, int]] = []
        if own:
            label, _unit = map_pairs(
                SpanArrays(*zip(*((r[2], r[3], r[4]) for r in own), strict=True)),
                SpanArrays([note.document_id], [note.start], [note.end]),
                policy=policy,
            )
            for index in sorted(set(label.tolist())):
                _a, granularity, _d, start, end, grade, chunk_id, pages = own[index]
                covering.append((describe(granularity, start, end, pages, chunk_id or ""), grade))
        rows.append(
            KeptNoteRow(
                annotator=note.annotator.get_username(),
                document_pk=note.document_id,
                doc_id=note.document.doc_id,
                chunk_id=note.chunk.chunk_id if note.chunk_id else "",
                start=note.start,
                end=note.end,
                text=note.text,
                covered_by=covering,
            )
        )
    return rows
