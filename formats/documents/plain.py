"""Plain text, kept as written; Markdown as the text a reader of the rendered page sees,
through markdown-it-py (CommonMark with tables and strikethrough): headings, paragraphs,
list items, table rows (cells separated by tabs) and code as lines without their markup,
links as their text, images as their alt text, raw HTML through the HTML reader. The
first heading (else the first line) is the title."""

from __future__ import annotations

import re
from pathlib import Path

from .extract import Deadline, Extracted, Limits, clean, decode


def _read(path: Path, name: str, limits: Limits) -> str:
    with path.open("rb") as handle:
        data = handle.read(limits.max_chars * 4 + 4)
    return clean(decode(data, name))


def _first_line(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= 200 else ""


def read_text(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    text = _read(path, name, limits)
    return Extracted(text, [], _first_line(text), {})


def read_markdown(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    text, title = markdown_text(_read(path, name, limits), deadline)
    return Extracted(text, [], title or _first_line(text), {})


_BLOCK_GAP = {
    "paragraph": 2, "heading": 2, "blockquote": 2, "bullet_list": 2, "ordered_list": 2,
    "table": 2, "list_item": 1, "tr": 1,
}  # fmt: skip


def _inline(token) -> str:
    """The text of an inline token: markup dropped, images as their alt text."""
    parts: list[str] = []
    for child in token.children or []:
        kind = child.type
        if kind in ("text", "code_inline", "image"):  # an image's content is its alt text
            parts.append(child.content)
        elif kind == "softbreak":
            parts.append(" ")
        elif kind == "hardbreak" or (kind == "html_inline" and child.content[:3].lower() == "<br"):
            parts.append("\n")
    return "".join(parts)


def markdown_text(source: str, deadline: Deadline | None = None) -> tuple[str, str]:
    """The text a reader of the rendered Markdown sees, and its first heading."""
    from markdown_it import MarkdownIt  # only Markdown imports load the parser

    from .html import html_text

    parser = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    tokens = parser.parse(source)
    if deadline is not None:
        deadline.check()
    blocks: list[tuple[int, str]] = []  # (lines before it: 1 or 2, text)
    pending = 2
    title = ""
    heading = False
    row: list[str] | None = None
    for token in tokens:
        kind = token.type
        if kind.endswith("_open") or kind.endswith("_close"):
            base = kind.rsplit("_", 1)[0]
            if base == "heading":
                heading = kind == "heading_open"
            if base == "tr":
                if kind == "tr_open":
                    row = []
                else:
                    blocks.append((pending or 1, "\t".join(row or [])))
                    row, pending = None, 0
            gap = _BLOCK_GAP.get(base, 0)
            if (base == "paragraph" and token.hidden) or (base.endswith("list") and token.level):
                gap = 1  # a tight list's item, a list inside a list
            pending = max(pending, gap)
            continue
        if kind == "inline":
            text = _inline(token)
            if row is not None:
                row.append(" ".join(text.split()))
                continue
            text = "\n".join(" ".join(line.split()) for line in text.split("\n"))
            if text.strip():
                blocks.append((pending or 1, text))
                pending = 0
                if heading and not title:
                    title = text.strip()
        elif kind in ("fence", "code_block"):
            blocks.append((max(pending, 2), token.content.rstrip("\n")))
            pending = 2
        elif kind == "html_block":
            text, _ = html_text(token.content, whole_page=True)
            if text:
                blocks.append((max(pending, 2), text))
                pending = 2
        elif kind == "hr":
            pending = 2
    out = []
    for gap, text in blocks:
        if out:
            out.append("\n" * gap)
        out.append(text)
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip("\n"), title
