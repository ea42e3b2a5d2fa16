"""Writing labels: every create/change/delete goes through here so history is complete."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from .models import (
    Chunk,
    Document,
    Granularity,
    Judgment,
    JudgmentEvent,
    JudgmentHistory,
    Query,
)


@dataclass(frozen=True)
class Evidence:
    """The unit a label is attached to: a span of a document, maybe a chunk."""

    granularity: str
    document: Document
    start: int
    end: int
    chunk: Chunk | None = None

    @classmethod
    def for_chunk(cls, chunk: Chunk) -> Evidence:
        return cls(Granularity.CHUNK, chunk.document, chunk.start, chunk.end, chunk)

    @classmethod
    def for_document(cls, document: Document) -> Evidence:
        return cls(Granularity.DOCUMENT, document, 0, len(document.text))

    @classmethod
    def for_page(cls, document: Document, number: int) -> Evidence:
        """Page ``number`` (1-based) of a document that has page boundaries."""
        spans = document.page_spans() if document.page_starts else []
        if not 1 <= number <= len(spans):
            raise ValueError(f"document {document.doc_id} has no page {number}")
        start, end = spans[number - 1]
        return cls(Granularity.PAGE, document, start, end)

    @classmethod
    def for_passage(cls, document: Document, start: int, end: int) -> Evidence:
        """Characters [start, end) of the document's text (code points, not bytes)."""
        if not 0 <= start < end <= len(document.text):
            raise ValueError(f"passage [{start}, {end}) is outside document {document.doc_id}")
        return cls(Granularity.PASSAGE, document, start, end)

    def lookup(self) -> dict:
        if self.granularity == Granularity.CHUNK:
            return {"granularity": Granularity.CHUNK, "chunk": self.chunk}
        return {
            "granularity": self.granularity,
            "document": self.document,
            "start": self.start,
            "end": self.end,
        }


def _history(judgment: Judgment, event: str, changed_by, old_grade, old_note) -> JudgmentHistory:
    return JudgmentHistory(
        judgment=judgment if event != JudgmentEvent.DELETE else None,
        query_id=judgment.query_id,
        annotator_id=judgment.annotator_id,
        changed_by=changed_by,
        event=event,
        granularity=judgment.granularity,
        document_id=judgment.document_id,
        start=judgment.start,
        end=judgment.end,
        chunk_id=judgment.chunk.chunk_id if judgment.chunk_id else "",
        old_grade=old_grade,
        new_grade=judgment.grade if event != JudgmentEvent.DELETE else None,
        old_note=old_note or "",
        new_note=judgment.note if event != JudgmentEvent.DELETE else "",
    )


def set_judgment(
    *,
    query: Query,
    annotator,
    evidence: Evidence,
    grade: int,
    note: str | None = None,
    changed_by=None,
) -> tuple[Judgment, bool]:
    """Create or update one label and log it; idempotent for a repeated identical grade.

    Returns (judgment, changed). Runs in its own transaction so the label is committed
    before the caller reports it as saved.
    """
    judgment, history = set_judgment_logged(
        query=query,
        annotator=annotator,
        evidence=evidence,
        grade=grade,
        note=note,
        changed_by=changed_by,
    )
    return judgment, history is not None


def set_judgment_logged(
    *,
    query: Query,
    annotator,
    evidence: Evidence,
    grade: int,
    note: str | None = None,
    changed_by=None,
) -> tuple[Judgment, JudgmentHistory | None]:
    """``set_judgment`` returning the history row it wrote (None when nothing changed)."""
    if grade not in (0, 1, 2, 3):
        raise ValueError(f"grade must be 0, 1, 2 or 3, not {grade!r}")
    changed_by = changed_by or annotator
    with transaction.atomic():
        judgment = (
            Judgment.objects.select_for_update()
            .filter(query=query, annotator=annotator, **evidence.lookup())
            .first()
        )
        if judgment is None:
            try:
                with transaction.atomic():
                    judgment = Judgment.objects.create(
                        query=query,
                        annotator=annotator,
                        granularity=evidence.granularity,
                        document=evidence.document,
                        start=evidence.start,
                        end=evidence.end,
                        chunk=evidence.chunk,
                        grade=grade,
                        note=note or "",
                    )
            except IntegrityError:
                # A concurrent request created it first: fall through to an update.
                judgment = Judgment.objects.select_for_update().get(
                    query=query, annotator=annotator, **evidence.lookup()
                )
            else:
                history = _history(judgment, JudgmentEvent.CREATE, changed_by, None, "")
                history.save()
                return judgment, history
        new_note = judgment.note if note is None else note
        if judgment.grade == grade and judgment.note == new_note:
            return judgment, None
        old_grade, old_note = judgment.grade, judgment.note
        judgment.grade, judgment.note = grade, new_note
        judgment.save(update_fields=["grade", "note", "updated_at"])
        history = _history(judgment, JudgmentEvent.UPDATE, changed_by, old_grade, old_note)
        history.save()
        return judgment, history


def delete_judgment(judgment: Judgment, *, changed_by) -> JudgmentHistory:
    """Remove a label, keeping its last state in history; returns that history row."""
    with transaction.atomic():
        history = _history(
            judgment, JudgmentEvent.DELETE, changed_by, judgment.grade, judgment.note
        )
        history.save()
        judgment.delete()
    return history


def bulk_create_judgments(judgments: Iterable[Judgment], *, changed_by, batch_size=2000) -> int:
    """Insert many new labels (imports) with one history row each; caller holds the transaction."""
    count = 0
    batch: list[Judgment] = []

    def flush() -> None:
        nonlocal count
        created = Judgment.objects.bulk_create(batch, batch_size=batch_size)
        if created and created[0].pk is None:
            # Backends without RETURNING for bulk inserts: reload ids by their unique key.
            raise RuntimeError("bulk_create did not return primary keys")
        JudgmentHistory.objects.bulk_create(
            [
                JudgmentHistory(
                    judgment=j,
                    query_id=j.query_id,
                    annotator_id=j.annotator_id,
                    changed_by=changed_by,
                    event=JudgmentEvent.CREATE,
                    granularity=j.granularity,
                    document_id=j.document_id,
                    start=j.start,
                    end=j.end,
                    chunk_id=j.chunk.chunk_id if j.chunk_id else "",
                    new_grade=j.grade,
                    new_note=j.note,
                )
                for j in created
            ],
            batch_size=batch_size,
        )
        count += len(created)
        batch.clear()

    for judgment in judgments:
        batch.append(judgment)
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return count
