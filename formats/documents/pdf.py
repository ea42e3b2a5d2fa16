"""PDF through PDFium (pypdfium2): text per page, page images, the boxes of characters.

The stored text of a page is PDFium's text of that page, cleaned (``extract.clean``):
``page_text`` also returns, for each character kept, its index in PDFium's text page,
so a span of the stored text finds its boxes on the page image.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

from ..errors import FileRejected, define, gettext_noop, of_file
from .extract import Deadline, Extracted, Limits, check_pages, clean, join_pages

ENCRYPTED = define(
    "pdf.encrypted",
    gettext_noop(
        "the PDF is encrypted (password-protected); save an unprotected copy and import that"
    ),
)
NOT_PDF = define("pdf.not_pdf", gettext_noop("not a readable PDF (corrupt or truncated)"))
NO_PAGES = define("pdf.no_pages", gettext_noop("the PDF has no pages"))
BAD_PAGE = define("pdf.bad_page", gettext_noop("the page cannot be read (corrupt PDF)"))
PAGE_TOO_LONG = define(
    "pdf.page_too_long", gettext_noop("more than %(limit)s characters of text, over the limit")
)
EMPTY_PAGES = define(
    "pdf.empty_pages",
    gettext_noop("no text on page(s) %(pages)s (images only? Assay does not OCR)"),
)
NOT_SHOWN = define(
    "pdf.not_shown",
    gettext_noop(
        "page(s) %(pages)s too narrow or too long to show as a picture (over %(ratio)s times "
        "as long as wide); their text is imported, their picture is not shown"
    ),
)
NO_TEXT_LAYER = define(
    "pdf.no_text_layer",
    gettext_noop(
        "no text layer on its %(n)s page (a scanned document?); Assay does not do OCR: "
        "run OCR first (for example ocrmypdf) and import the result"
    ),
    plural=gettext_noop(
        "no text layer on any of its %(n)s pages (a scanned document?); Assay does not do OCR: "
        "run OCR first (for example ocrmypdf) and import the result"
    ),
)

# What one page picture may cost, whatever the page's size: PDFium allocates 4 bytes per
# pixel before anything can be checked, so the scale is chosen to stay under both bounds.
MAX_RENDER_PIXELS = 16_000_000
MAX_RENDER_SIDE = 16_384
# A page longer than this many times its width (or wider than its height) is no page a
# person reads as a picture (a 1 × 300 pt page is a strip): it is not rendered at all.
MAX_ASPECT = 50

_DROP = {chr(c) for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]} | {
    "\ufffe",
    "\uffff",
}


def _open(path: Path, name: str):
    import pypdfium2 as pdfium  # only PDF imports load PDFium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as error:
        message = str(error).lower()
        if "password" in message:
            raise FileRejected([of_file(name, ENCRYPTED())]) from None
        raise FileRejected([of_file(name, NOT_PDF())]) from None


def _raw_text(textpage) -> str:
    return textpage.get_text_range()


def clean_with_index(raw: str) -> tuple[str, list[int]]:
    """``extract.clean`` of a PDFium page text and, per character kept, its raw index."""
    chars: list[str] = []
    index: list[int] = []
    n = len(raw)
    for i, char in enumerate(raw):
        if char == "\r":
            if i + 1 < n and raw[i + 1] == "\n":
                continue
            char = "\n"
        elif char == "\x02":
            char = "-"
        elif char in _DROP:
            continue
        chars.append(char)
        index.append(i)
    return "".join(chars), index


def page_text(textpage) -> str:
    return clean(_raw_text(textpage).replace("\x02", "-"))


def read(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    pdf = _open(path, name)
    try:
        count = len(pdf)
        check_pages(name, count, limits)
        if count == 0:
            raise FileRejected([of_file(name, NO_PAGES())])
        pages: list[str] = []
        unshown: list[int] = []
        total = 0
        for number in range(1, count + 1):
            deadline.check(number)
            try:
                page = pdf[number - 1]
                if render_scale(*page.get_size(), 1) is None:
                    unshown.append(number)
                textpage = page.get_textpage()
                text = page_text(textpage)
                textpage.close()
                page.close()
            except Exception:  # PDFium raises its own error type for a broken page
                raise FileRejected([of_file(name, BAD_PAGE(), page=number)]) from None
            total += len(text)
            if total > limits.max_chars:
                too_long = PAGE_TOO_LONG(limit=f"{limits.max_chars:,}")
                raise FileRejected([of_file(name, too_long, page=number)])
            pages.append(text)
            if number % 10 == 0:
                deadline.progress(number / count)
        info = pdf.get_metadata_dict(skip_empty=True)
    finally:
        pdf.close()
    empty = [n for n, text in enumerate(pages, 1) if not text.strip()]
    if len(empty) == count:
        raise FileRejected([of_file(name, NO_TEXT_LAYER(n=count))])
    warnings = []
    if empty:
        listed = ", ".join(map(str, empty[:20])) + (" …" if len(empty) > 20 else "")
        warnings.append(of_file(name, EMPTY_PAGES(pages=listed)))
    if unshown:
        listed = ", ".join(map(str, unshown[:20])) + (" …" if len(unshown) > 20 else "")
        warnings.append(of_file(name, NOT_SHOWN(pages=listed, ratio=MAX_ASPECT)))
    text, starts = join_pages(pages)
    title = info.get("Title", "").strip()
    if not title or title.lower() in ("untitled", "untitled document"):
        title = next((line.strip() for line in text.splitlines() if line.strip()), "")[:200]
    metadata = {
        key: info[source].strip()
        for key, source in (("producer", "Producer"), ("creator", "Creator"), ("author", "Author"))
        if info.get(source, "").strip()
    }
    if unshown:
        metadata["pages_not_drawn"] = unshown
    return Extracted(text, starts, title, metadata, warnings)


def page_size(path: Path, number: int) -> tuple[float, float]:
    """Width and height of page ``number`` (1-based) in PDF points."""
    pdf = _open(path, path.name)
    try:
        return tuple(pdf[number - 1].get_size())
    finally:
        pdf.close()


def render_scale(width_pt: float, height_pt: float, width_px: int) -> float | None:
    """The scale that draws a page ``width_px`` wide, lowered until the picture holds at
    most ``MAX_RENDER_PIXELS`` pixels and ``MAX_RENDER_SIDE`` on either side; None for a
    page that is not to be drawn (no area, or more than ``MAX_ASPECT`` times as long as wide)."""
    if not (width_pt > 0 and height_pt > 0) or not math.isfinite(width_pt * height_pt):
        return None
    if max(width_pt, height_pt) > MAX_ASPECT * min(width_pt, height_pt):
        return None
    return min(
        width_px / width_pt,
        MAX_RENDER_SIDE / max(width_pt, height_pt),
        math.sqrt(MAX_RENDER_PIXELS / (width_pt * height_pt)),
    )


def render_page(path: Path, number: int, width: int) -> bytes | None:
    """Page ``number`` (1-based) as a PNG ``width`` pixels wide (narrower when the page is
    so long that the picture would pass the bounds), or None for a page not to be drawn."""
    pdf = _open(path, path.name)
    try:
        page = pdf[number - 1]
        scale = render_scale(*page.get_size(), width)
        if scale is None:
            return None
        bitmap = page.render(scale=scale, rev_byteorder=True, may_draw_forms=True)
        pixels = bitmap.to_numpy()
    finally:
        pdf.close()
    return png(pixels[:, :, :3])


def png(pixels) -> bytes:
    """An RGB image (height × width × 3, uint8) as PNG bytes."""
    height, width = pixels.shape[:2]
    rows = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 6))
        + chunk(b"IEND", b"")
    )


def char_boxes(path: Path, number: int, start: int, end: int) -> list[list[float]]:
    """Boxes covering characters [start, end) of page ``number``'s stored text, one per line,
    as [left, top, right, bottom] shares of the page (top-left origin)."""
    pdf = _open(path, path.name)
    try:
        page = pdf[number - 1]
        width, height = page.get_size()
        textpage = page.get_textpage()
        raw = _raw_text(textpage)
        _, index = clean_with_index(raw)
        start, end = max(0, start), min(end, len(index))
        if start >= end or len(raw) != textpage.count_chars():
            return []
        first, last = index[start], index[end - 1]
        count = textpage.count_rects(first, last - first + 1)
        boxes = []
        for i in range(count):
            left, bottom, right, top = textpage.get_rect(i)
            boxes.append(
                [
                    round(left / width, 5),
                    round(1 - top / height, 5),
                    round(right / width, 5),
                    round(1 - bottom / height, 5),
                ]
            )
        return boxes
    finally:
        pdf.close()
