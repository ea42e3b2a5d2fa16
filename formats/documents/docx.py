"""Word .docx: everything a reader sees, once, in reading order (python-docx opens the
package; the text is read from its XML).

Paragraphs and headings; text in content controls (``w:sdt``) and text boxes (once: the
fallback copy Word keeps for old readers is skipped); tables row by row, cells separated
by tabs with empty cells kept, a table inside a cell written after the row that holds it;
footnotes and endnotes after the body; headers and footers only when asked. Explicit page
breaks (a page-break run or "page break before") start a new page.
"""

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
TOO_DEEP = define(
    "docx.too_deep", gettext_noop("tables or content controls nested too deeply to read")
)

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_HEADING_STYLES = ("heading", "title")
# Elements that only wrap content: their content is read as if they were not there.
_WRAPPERS = {f"{W}sdt", f"{W}sdtContent", f"{W}customXml", f"{W}smartTag", f"{MC}AlternateContent"}
# Never text a reader sees: a content control's settings, deleted text, field codes, the
# fallback copy of a text box, the marks of footnotes.
_SKIPPED = {f"{W}sdtPr", f"{W}sdtEndPr", f"{W}del", f"{W}instrText", f"{MC}Fallback", f"{W}rPr"}
_NOTE_PARTS = ("/footnotes", "/endnotes")
_HEADER_PARTS = ("/header", "/footer")


def _open(path: Path, name: str):
    import docx  # only Word imports load python-docx

    if not zipfile.is_zipfile(path):
        raise FileRejected([of_file(name, NOT_DOCX())])
    try:
        return docx.Document(str(path))
    except Exception:  # python-docx raises several types for a broken package
        raise FileRejected([of_file(name, BAD_DOCX())]) from None


class _Pages:
    """The text read so far, page by page; each block a line."""

    def __init__(self) -> None:
        self.pages: list[list[str]] = [[]]

    def line(self, text: str) -> None:
        self.pages[-1].append(text)

    def new_page(self) -> None:
        if any(line.strip() for line in self.pages[-1]):
            self.pages.append([])


def _children(element, tags: tuple[str, ...]):
    """The children of ``element`` with one of ``tags``, looking through wrappers."""
    for child in element:
        if child.tag in tags:
            yield child
        elif child.tag in _WRAPPERS or child.tag == f"{MC}Choice":
            yield from _children(child, tags)


def _paragraph(element, out: _Pages, breaks: bool = True) -> None:
    """The paragraph's text as one line (soft line breaks kept); text boxes anchored in it
    follow it as their own blocks."""
    properties = element.find(f"{W}pPr")
    if breaks and properties is not None and properties.find(f"{W}pageBreakBefore") is not None:
        out.new_page()
    parts: list[str] = []
    boxes = []
    stack = list(reversed(list(element)))
    while stack:
        node = stack.pop()
        tag = node.tag
        if tag in _SKIPPED or tag == f"{W}pPr":
            continue
        if tag == f"{W}txbxContent":
            boxes.append(node)
            continue
        if tag == f"{W}t":
            parts.append(node.text or "")
        elif tag in (f"{W}tab", f"{W}ptab"):
            parts.append("\t")
        elif tag == f"{W}noBreakHyphen":
            parts.append("-")
        elif tag in (f"{W}br", f"{W}cr"):
            if breaks and node.get(f"{W}type") == "page":
                out.line("".join(parts))
                parts = []
                out.new_page()
            else:
                parts.append("\n")
        else:
            stack.extend(reversed(list(node)))
    out.line("".join(parts))
    for box in boxes:
        _blocks(box, out, breaks=False)


def _cell(cell, nested: list) -> str:
    """A cell's text (its paragraphs joined by spaces); tables inside it go to ``nested``."""
    texts = []
    for block in _children(cell, (f"{W}p", f"{W}tbl")):
        if block.tag == f"{W}tbl":
            nested.append(block)
            continue
        lines = _Pages()
        _paragraph(block, lines, breaks=False)
        texts.append(" ".join(" ".join(lines.pages[0]).split()))
    return " ".join(t for t in texts if t)


def _table(table, out: _Pages) -> None:
    for row in _children(table, (f"{W}tr",)):
        nested: list = []
        cells = [_cell(cell, nested) for cell in _children(row, (f"{W}tc",))]
        if any(cells):
            out.line("\t".join(cells))
        for inner in nested:
            _table(inner, out)


def _blocks(container, out: _Pages, breaks: bool = True, deadline: Deadline | None = None):
    for block in _children(container, (f"{W}p", f"{W}tbl")):
        if deadline is not None:
            deadline.check()
        if block.tag == f"{W}p":
            _paragraph(block, out, breaks)
        else:
            _table(block, out)


def _parts(document, kinds: tuple[str, ...]):
    """The package's parts of those kinds (footnotes, headers …), parsed, in order."""
    from lxml import etree

    seen = set()
    for rel in document.part.rels.values():
        if rel.is_external or not rel.reltype.endswith(kinds):
            continue
        part = rel.target_part
        if part.partname in seen:
            continue
        seen.add(part.partname)
        yield etree.fromstring(part.blob)


def _notes(root, out: _Pages) -> None:
    for note in root:
        if note.get(f"{W}type") in (None, "normal"):
            _blocks(note, out, breaks=False)


def _title(body) -> str:
    for element in _children(body, (f"{W}p",)):
        style = element.find(f"{W}pPr/{W}pStyle")
        value = (style.get(f"{W}val") or "").lower() if style is not None else ""
        if value.startswith(_HEADING_STYLES):
            lines = _Pages()
            _paragraph(element, lines, breaks=False)
            if text := " ".join(" ".join(lines.pages[0]).split()):
                return text
    return ""


def read(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    document = _open(path, name)
    body = document.element.body
    out = _Pages()
    try:
        _blocks(body, out, deadline=deadline)
        check_pages(name, len(out.pages), limits)
        for root in _parts(document, _NOTE_PARTS):
            _notes(root, out)
    except RecursionError:
        raise FileRejected([of_file(name, TOO_DEEP())]) from None
    if deadline.options.docx_headers:
        shown: set[str] = set()
        for root in _parts(document, _HEADER_PARTS):
            lines = _Pages()
            _blocks(root, lines, breaks=False)
            text = "\n".join(line for line in lines.pages[0] if line.strip())
            if text and text not in shown:  # the same header on every kind of page once
                shown.add(text)
                out.line(text)
    texts = [
        clean("\n".join(line.rstrip() for line in page if line.strip())).strip("\n")
        for page in out.pages
    ]
    if len(texts) > 1 and not texts[-1].strip():
        texts.pop()  # a break at the very end opens no page
    core = document.core_properties
    with zipfile.ZipFile(path) as package:  # without this part python-docx makes one up
        has_properties = "docProps/core.xml" in package.namelist()
    title = (has_properties and (core.title or "").strip()) or _title(body)
    if len(texts) == 1:
        text, starts = texts[0], []
    else:
        text, starts = join_pages(texts)
    metadata = {"author": core.author} if has_properties and core.author else {}
    return Extracted(text, starts, title, metadata)
