"""Originals of imported document files and their page images, kept in the file store.

An original is stored once per project under its SHA-256 (so an unchanged re-import
writes nothing); a PDF page image is rendered on first request and stored beside it.
Names are the file store's (``originals/<project>/<sha256><suffix>``): a folder by
default, object storage shared by several machines when configured (``file_store``).
Who may read them is the views' business (``access``); this module only finds files.
"""

from __future__ import annotations

from pathlib import Path

from django.urls import reverse

from formats.documents import char_boxes, page_size, render_page, render_scale

from . import file_store
from .models import Document

PAGE_WIDTHS = (600, 900, 1200)
DEFAULT_WIDTH = 900


def stored_name(project_id: int, sha256: str, file_name: str) -> str:
    return f"originals/{project_id}/{sha256}{Path(file_name).suffix.lower()[:10]}"


def original_name(document: Document) -> str | None:
    """The file store's name of the original of a document imported from a file (None
    for other documents, or when the file is not there)."""
    sha = document.metadata.get("sha256") if isinstance(document.metadata, dict) else None
    name = document.metadata.get("file_name", "") if sha else ""
    if not sha or not isinstance(sha, str) or not sha.isalnum():
        return None
    stored = stored_name(document.project_id, sha, name)
    return stored if file_store.exists(stored) else None


def original_path(document: Document) -> Path | None:
    """The original on this machine's disk (fetched from object storage once), for the
    readers that need a path."""
    stored = original_name(document)
    return file_store.local_copy(stored) if stored else None


def store(project_id: int, sha256: str, file_name: str, source: Path) -> str | None:
    """Put ``source`` into the file store; returns its name, or None if it was there."""
    target = stored_name(project_id, sha256, file_name)
    if file_store.exists(target):
        return None
    return file_store.put(target, source)


def is_pdf(document: Document) -> bool:
    return (
        isinstance(document.metadata, dict)
        and document.metadata.get("media_type") == "application/pdf"
        and bool(document.page_starts)
    )


def page_image(document: Document, number: int, width: int = DEFAULT_WIDTH) -> str | None:
    """The file store's name of the PNG of page ``number`` of a PDF document, rendered
    once and stored beside the original."""
    if not is_pdf(document) or width not in PAGE_WIDTHS:
        return None
    if not 1 <= number <= len(document.page_starts):
        return None
    original = original_name(document)
    if original is None:
        return None
    stem = original.rsplit(".", 1)[0] if "." in original.rsplit("/", 1)[-1] else original
    image = f"{stem}.pages/{number}-{width}.png"
    if not file_store.exists(image):
        picture = render_page(file_store.local_copy(original), number, width)
        if picture is None:  # a strip of a page, not drawn (see ``render_scale``)
            return None
        file_store.put_bytes(image, picture)
    return image


def span_boxes(document: Document, start: int, end: int) -> list[dict]:
    """Where characters [start, end) of the document's text lie on its page images:
    ``{"page": n, "boxes": [[left, top, right, bottom], …]}`` (shares of the page) per page."""
    original = original_path(document)
    if original is None or not is_pdf(document):
        return []
    spans = document.page_spans()
    found = []
    for number, (page_start, page_end) in enumerate(spans, 1):
        if page_end <= start or page_start >= end:
            continue
        boxes = char_boxes(
            original, number, max(start, page_start) - page_start, min(end, page_end) - page_start
        )
        if boxes:
            found.append({"page": number, "boxes": boxes})
    return found


def page_picture(document: Document, number: int, marks=()) -> dict | None:
    """What a page view needs to show page ``number`` as it looks: the image's URL, the URL
    that finds a selection's boxes, and the boxes of ``marks`` (labels with ``start``,
    ``end`` and ``grade``) on this page, as percentages. None when there is no image."""
    original = original_path(document)
    if not is_pdf(document) or original is None or not 1 <= number <= len(document.page_starts):
        return None
    if "extraction" in document.metadata:  # imported since the pages not drawn are listed
        if number in (document.metadata.get("pages_not_drawn") or []):
            return None  # a strip of a page: its text is shown, no picture
    elif render_scale(*page_size(original, number), DEFAULT_WIDTH) is None:
        return None
    args = [document.project.slug, document.pk]
    highlights = []
    for mark in marks:
        for found in span_boxes(document, mark.start, mark.end):
            if found["page"] == number:
                highlights += [_percent(box, mark.grade) for box in found["boxes"]]
    return {
        "number": number,
        "src": reverse("annotator:document_page_image", args=[*args, number])
        + f"?width={DEFAULT_WIDTH}",
        "boxes_url": reverse("annotator:document_span_boxes", args=args),
        "highlights": highlights,
    }


def _percent(box: list[float], grade: int) -> dict:
    left, top, right, bottom = box
    return {
        "grade": grade,
        "left": round(100 * left, 3),
        "top": round(100 * top, 3),
        "width": round(100 * (right - left), 3),
        "height": round(100 * (bottom - top), 3),
    }
