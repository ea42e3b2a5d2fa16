"""A small PDF writer for the demo: text pages in the standard Courier and Helvetica fonts.

Only what the demo needs: paragraphs wrapped to the page (Courier has one width for every
character, so wrapping is exact), headings in Helvetica-Bold, a title in the document
information. The text must be Windows-1252 (other characters become "?"). Enough to
build real, multi-page PDFs at run time without a PDF library.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

PAGE_WIDTH, PAGE_HEIGHT = 595, 842  # A4 in points
MARGIN = 72
BODY_SIZE, HEADING_SIZE, LEADING = 11, 13, 15
COLUMNS = int((PAGE_WIDTH - 2 * MARGIN) / (0.6 * BODY_SIZE))  # Courier: 600/1000 em each
LINES_PER_PAGE = int((PAGE_HEIGHT - 2 * MARGIN) / LEADING)


@dataclass(frozen=True)
class Line:
    text: str
    heading: bool = False


def layout(blocks: list[tuple[str, bool]]) -> list[list[Line]]:
    """Paragraphs ``(text, is_heading)`` wrapped into lines and cut into pages; a heading
    never ends a page."""
    lines: list[Line] = []
    for text, heading in blocks:
        if lines:
            lines.append(Line(""))
        if heading:
            lines.append(Line(text, heading=True))
        else:
            parts = textwrap.wrap(text, COLUMNS, break_on_hyphens=False)
            lines += [Line(part) for part in parts or [""]]
    pages: list[list[Line]] = [[]]
    for line in lines:
        page = pages[-1]
        if len(page) >= LINES_PER_PAGE or (line.heading and len(page) >= LINES_PER_PAGE - 3):
            pages.append([])
            if not line.text:
                continue
        pages[-1].append(line)
    return [[line for line in page] for page in pages if any(line.text for line in page)]


def _string(text: str) -> bytes:
    data = text.encode("cp1252", errors="replace")
    return b"(" + data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _content(page: list[Line]) -> bytes:
    parts = [b"BT", f"{LEADING} TL {MARGIN} {PAGE_HEIGHT - MARGIN} Td".encode()]
    for line in page:
        if line.text:
            font = f"/F2 {HEADING_SIZE}" if line.heading else f"/F1 {BODY_SIZE}"
            parts.append(f"{font} Tf".encode() + b" " + _string(line.text) + b" Tj")
        parts.append(b"T*")
    parts.append(b"ET")
    return b"\n".join(parts)


def write_pdf(path: Path, pages: list[list[Line]], *, title: str) -> Path:
    """Write ``pages`` (from ``layout``) as a PDF at ``path``."""
    objects: list[bytes] = []  # object n is objects[n - 1]

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in once the page tree's number is known
    tree = add(b"")
    courier = add(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>"
    )
    bold = add(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
    )
    info = add(b"<< /Title " + _string(title) + b" /Producer (Assay demo) >>")
    kids = []
    for page in pages:
        stream = _content(page)
        contents = add(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
        kids.append(
            add(
                f"<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] "
                f"/Resources << /Font << /F1 {courier} 0 R /F2 {bold} 0 R >> >> "
                f"/Contents {contents} 0 R >>".encode()
            )
        )
    objects[catalog - 1] = f"<< /Type /Catalog /Pages {tree} 0 R >>".encode()
    refs = " ".join(f"{kid} 0 R" for kid in kids)
    objects[tree - 1] = f"<< /Type /Pages /Kids [{refs}] /Count {len(kids)} >>".encode()
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root {catalog} 0 R /Info {info} 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n"
    ).encode()
    path.write_bytes(bytes(out))
    return path


def text_blocks(text: str) -> list[tuple[str, bool]]:
    """Paragraphs of a plain-text file (blank-line separated); a short line without a
    full stop is a heading."""
    blocks = []
    for paragraph in text.split("\n\n"):
        paragraph = " ".join(paragraph.split())
        if paragraph:
            heading = len(paragraph) < 60 and not paragraph.endswith((".", ";", ":", ","))
            blocks.append((paragraph, heading))
    return blocks
