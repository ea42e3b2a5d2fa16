"""Word .docx through python-docx: paragraphs and tables in body order; explicit page
breaks (a page-break run or "page break before") start a new page."""

from __future__ import annotations

import zipfile
from pathlib import Path

from ..errors import FileRejected, define, gettext_noop, of_file
from .extract import Deadline, Extracted, Limits, check_pages, clean, join_pages

NOT_DOCX = define(
    "docx.not_docx",
    gettext_noop(
        "not a Word .docx file (corrupt, password-protected, or an old .doc; "
        "save it as .docx without a password)"
    ),
)
BAD_DOCX = define("docx.bad_docx", gettext_noop("not a readable Word .docx file (corrupt)"))

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLES = ("heading", "title")


def _open(path: Path, name: str):
    import docx  # only Word imports load python-docx

    if not zipfile.is_zipfile(path):
        raise FileRejected([of_file(name, NOT_DOCX())])
    try:
        return docx.Document(str(path))
    except Exception:  # python-docx raises several types for a broken package
        raise FileRejected([of_file(name, BAD_DOCX())]) from None


def _paragraph(element, pages: list[list[str]]) -> None:
    """Append the paragraph's text to the current page, opening pages at page breaks."""
    properties = element.find(f"{W}pPr")
    breaks_before = properties is not None and properties.find(f"{W}pageBreakBefore") is not None
    if breaks_before and "".join(pages[-1]).strip():
        pages.append([])
    for node in element.iter(f"{W}t", f"{W}tab", f"{W}br", f"{W}cr"):
        if node.tag == f"{W}t":
            pages[-1].append(node.text or "")
        elif node.tag == f"{W}tab":
            pages[-1].append("\t")
        elif node.tag == f"{W}br" and node.get(f"{W}type") == "page":
            pages.append([])
        else:
            pages[-1].append("\n")
    pages[-1].append("\n")


def read(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    document = _open(path, name)
    pages: list[list[str]] = [[]]
    title = ""
    for element in document.element.body.iterchildren():
        deadline.check()
        if element.tag == f"{W}p":
            _paragraph(element, pages)
            if not title:
                style = element.find(f"{W}pPr/{W}pStyle")
                value = (style.get(f"{W}val") or "").lower() if style is not None else ""
                if value.startswith(_HEADING_STYLES):
                    title = "".join(t.text or "" for t in element.iter(f"{W}t"))
        elif element.tag == f"{W}tbl":
            for row in element.iter(f"{W}tr"):
                cells = ["".join(t.text or "" for t in cell.iter(f"{W}t")) for cell in row]
                pages[-1].append("\t".join(c for c in cells if c) + "\n")
        check_pages(name, len(pages), limits)
    texts = [clean("".join(parts)).strip("\n") for parts in pages]
    if len(texts) > 1 and not texts[-1].strip():
        texts.pop()  # a break at the very end opens no page
    core = document.core_properties
    title = (core.title or "").strip() or title.strip()
    if len(texts) == 1:
        text, starts = texts[0], []
    else:
        text, starts = join_pages(texts)
    metadata = {"author": core.author} if core.author else {}
    return Extracted(text, starts, title, metadata)
