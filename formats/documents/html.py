"""HTML as a reader sees it, through selectolax (the Lexbor engine).

Never text: scripts, styles, anything hidden (``hidden``, ``aria-hidden="true"``,
``display:none``, ``visibility:hidden``), form controls (buttons, inputs, selects and
their options, labels) and permalink marks (Sphinx's "¶"). Main content (the default):
the page's ``<main>`` (or ``role="main"``, else its only ``<article>``, else its body)
without the page's chrome: navigation, banners, asides, footers, search — by element,
by ARIA role, or by a class naming them (``nav``, ``sidebar``, ``breadcrumb`` …).
``whole_page`` keeps the chrome. Headings, paragraphs, list items, table rows and
definition terms are lines (a blank line between paragraphs, none between items);
table cells are separated by tabs, empty cells kept; ``<pre>`` keeps its line breaks.
The title is the ``<title>``, else the first ``<h1>``.
"""

from __future__ import annotations

import re
from pathlib import Path

from .extract import Deadline, Extracted, Limits, clean, decode

NEVER_TEXT = (
    "script,style,noscript,template,svg,math,iframe,object,embed,canvas,head,button,select,"
    "option,optgroup,input,textarea,datalist,label,dialog:not([open]),meter,progress,"
    "[hidden],[aria-hidden=true],a.headerlink,a.anchor-link,a.anchorjs-link,a.copiable-link,"
    "a.copiable-anchor"
)
CHROME = (
    "nav,aside,footer,[role=navigation],[role=banner],[role=contentinfo],"
    "[role=complementary],[role=search],.sphinxsidebar,.related,.nav-panel,.navbar,"
    ".breadcrumb,.breadcrumbs,.sidebar,.skip-link,.menu,.navigation,.site-header,"
    ".site-footer,div.header,div.footer"
)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_-]+)""", re.IGNORECASE)
# How far apart the lines of two blocks are: a blank line between paragraphs, a line
# break between the items of a list, the rows of a table, the terms of a definition list.
PARAGRAPHS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol", "dl",
    "figure", "figcaption", "section", "article", "main", "header", "footer", "nav", "aside",
    "address", "hr", "details", "summary", "fieldset", "body",
}  # fmt: skip
ITEMS = {"li", "tr", "dt", "dd", "div", "br", "caption", "legend", "form"}
_LAYOUT_INSIDE = "table,ul,ol,dl,h1,h2,h3,h4,h5,h6,pre,blockquote"


class _Lines:
    """Text pieces gathered into lines; ``gap`` asks for a break before the next line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.pieces: list[str] = []
        self.pending = 0

    def gap(self, size: int) -> None:
        self.flush()
        self.pending = max(self.pending, size)

    def add(self, text: str) -> None:
        self.pieces.append(text)

    def flush(self) -> None:
        line = " ".join("".join(self.pieces).split())
        self.pieces = []
        if line:
            self.verbatim(line)

    def verbatim(self, text: str) -> None:
        if self.lines:
            self.lines.append("\n" * max(self.pending, 1))
        self.lines.append(text)
        self.pending = 0

    def text(self) -> str:
        self.flush()
        return "".join(self.lines)


def _hidden_by_style(node) -> bool:
    style = node.attributes.get("style")
    return bool(style) and bool(_HIDDEN_STYLE.search(style))


def _strip(root, selector: str) -> None:
    for node in root.css(selector):
        node.decompose()


def _cell_text(cell) -> str:
    return " ".join(cell.text(separator=" ").split())


def _is_layout(table) -> bool:
    """A table used to lay a page out (blocks in its cells), not to hold data."""
    return any(cell.css_first(_LAYOUT_INSIDE) is not None for cell in table.css("td,th"))


def _rows(table):
    """The table's own rows (not those of tables inside it)."""
    for part in table.iter():
        if part.tag == "tr":
            yield part
        elif part.tag in ("thead", "tbody", "tfoot"):
            yield from (row for row in part.iter() if row.tag == "tr")


def _walk(root, out: _Lines, deadline: Deadline) -> None:
    stack: list = [(root, False)]
    seen = 0
    while stack:
        node, leaving = stack.pop()
        tag = node.tag
        if leaving:
            if tag in PARAGRAPHS or tag in ITEMS:
                out.gap(2 if tag in PARAGRAPHS else 1)
            elif tag in ("td", "th"):
                out.add(" ")
            continue
        if tag == "-text":
            out.add(node.text_content or "")
            continue
        if tag in ("-comment", "!doctype"):
            continue  # (hidden elements were removed before the walk)
        seen += 1
        if seen % 5000 == 0:
            deadline.check()
        if tag == "br":
            out.gap(1)
            continue
        if tag in PARAGRAPHS or tag in ITEMS:
            out.gap(2 if tag in PARAGRAPHS else 1)
        if tag == "pre":
            text = node.text(deep=True, separator="").strip("\n")
            if text.strip():
                out.verbatim("\n".join(line.rstrip() for line in text.split("\n")))
            out.gap(2)
            continue
        if tag == "table" and not _is_layout(node):
            for row in _rows(node):
                cells = [_cell_text(c) for c in row.iter() if c.tag in ("td", "th")]
                if any(cells):
                    out.gap(1)
                    out.verbatim("\t".join(cells))
            out.gap(2)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(node.iter(include_text=True))))


def read(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    with path.open("rb") as handle:
        data = handle.read(limits.max_bytes + 1)
    declared = _CHARSET.search(data[:4096])
    # Undeclared and not UTF-8: windows-1252, as browsers read such a page.
    text, title = html_text(
        decode(data, name, declared.group(1).decode() if declared else "cp1252"),
        whole_page=deadline.options.html_whole_page,
        deadline=deadline,
    )
    return Extracted(text, [], title, {})


def html_text(markup: str, *, whole_page: bool = False, deadline: Deadline | None = None):
    """The text a reader sees in ``markup`` and the page's title."""
    from selectolax.lexbor import LexborHTMLParser  # only HTML imports load the parser

    deadline = deadline or Deadline("", float("inf"))
    tree = LexborHTMLParser(markup)
    title_node = tree.css_first("title") or tree.css_first("h1")
    title = " ".join(title_node.text(separator=" ").split()) if title_node is not None else ""
    body = tree.body
    if body is None:
        return "", title
    _strip(body, NEVER_TEXT)
    for node in body.css("[style]"):
        if _hidden_by_style(node):
            node.decompose()
    deadline.check()
    roots = [body]
    if not whole_page:
        roots = _outermost(body.css("main,[role=main]")) or body.css("article")[:1] or [body]
        for root in roots:
            _strip(root, CHROME)
            for node in root.css("header"):
                if not _within_tag(node, ("article", "section")):
                    node.decompose()  # the page's banner; an article's header is its title
    out = _Lines()
    for root in roots:
        _walk(root, out, deadline)
        out.gap(2)
    return re.sub(r"\n{3,}", "\n\n", clean(out.text())).strip("\n"), title


def _outermost(nodes: list) -> list:
    """The nodes that are not inside another of them (a ``<main>`` in a ``role=main``)."""
    ids = {node.mem_id for node in nodes}
    kept = []
    for node in nodes:
        parent = node.parent
        while parent is not None and parent.mem_id not in ids:
            parent = parent.parent
        if parent is None:
            kept.append(node)
    return kept


def _within_tag(node, tags: tuple[str, ...]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in tags:
            return True
        parent = parent.parent
    return False
