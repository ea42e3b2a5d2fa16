"""What a label is on: a unit of evidence (a chunk, a page, a passage or a whole
document), named by a label form or by an existing label."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _

from .models import Chunk, Document, Granularity, Judgment, Query


@dataclass(frozen=True)
class Evidence:
    """The unit a label is attached to: a span of a document, maybe a chunk."""

    granularity: str
    document: Document
    start: int
    end: int
    chunk: Chunk | None = None

    def span_fields(self) -> dict:
        """The span as an ``EvidenceSpan``'s keyword arguments."""
        return {
            "granularity": self.granularity,
            "document": self.document,
            "start": self.start,
            "end": self.end,
        }

    @classmethod
    def for_chunk(cls, chunk: Chunk) -> Evidence:
        return cls(Granularity.CHUNK, chunk.document, chunk.start, chunk.end, chunk)

    @classmethod
    def of_label(cls, judgment: Judgment) -> Evidence:
        """The evidence an existing label is attached to."""
        return cls(
            judgment.granularity, judgment.document, judgment.start, judgment.end, judgment.chunk
        )

    @classmethod
    def for_document(cls, document: Document) -> Evidence:
        return cls(Granularity.DOCUMENT, document, 0, len(document.text))

    @classmethod
    def for_page(cls, document: Document, number: int) -> Evidence:
        """Page ``number`` (1-based) of a document that has page boundaries."""
        spans = document.page_spans() if document.page_starts else []  # page-less: no page
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


class EvidenceError(ValueError):
    """A label form names evidence that cannot be labelled; ``status`` is the HTTP answer."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def own_label(query: Query, annotator, pk: int | None) -> Judgment | None:
    """One of the annotator's own labels on this query (anybody else's is not found)."""
    return (
        Judgment.objects.of(query, annotator)
        .select_related("document", "chunk")
        .defer("document__text", "document__metadata")
        .filter(pk=pk)
        .first()
    )


def evidence_named(*, query: Query, annotator, data: dict) -> Evidence:
    """The evidence a label form names: an own label, a chunk, a page, a passage or a document.

    ``data`` holds ``judgment``, or ``chunk``, or ``document`` with ``granularity`` (and
    ``page``, or ``start``/``end`` with the selected ``text``). Objects outside the query's
    project are not found (status 404); a selection that no longer matches the document's
    text is a conflict (409), so a stale page cannot label the wrong characters.
    """
    project_id = query.project_id
    if data.get("judgment"):
        judgment = own_label(query, annotator, data["judgment"])
        if judgment is None:
            raise EvidenceError("No such label", 404)
        return Evidence.of_label(judgment)
    if data.get("chunk"):
        chunk = (
            Chunk.objects.select_related("document")
            .defer("document__text", "document__metadata")
            .filter(pk=data["chunk"])
            .first()
        )
        if chunk is None or chunk.document.project_id != project_id:
            raise EvidenceError("No such chunk", 404)
        return Evidence.for_chunk(chunk)
    document = Document.objects.filter(pk=data.get("document"), project_id=project_id).first()
    if document is None:
        raise EvidenceError("No such document", 404)
    granularity = data.get("granularity")
    if granularity == Granularity.DOCUMENT:
        return Evidence.for_document(document)
    if granularity == Granularity.PAGE:
        if not data.get("page"):
            raise EvidenceError(_("Which page?"))
        try:
            return Evidence.for_page(document, data["page"])
        except ValueError:
            raise EvidenceError(_("That part is not in the document.")) from None
    start, end = data.get("start"), data.get("end")
    if start is None or end is None:
        raise EvidenceError(_("Select some text first."))
    try:
        evidence = Evidence.for_passage(document, start, end)
    except ValueError:
        raise EvidenceError(_("That part is not in the document.")) from None
    expected = data.get("text")
    if expected and expected != document.text[start:end].replace("\x00", "\ufffd"):
        raise EvidenceError(
            _("The selection does not match the document's text; reload the page."), 409
        )
    return evidence
