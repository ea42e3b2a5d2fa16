"""HTML through selectolax (the Lexbor engine): visible text with block elements on their
own lines, scripts and styles dropped; the <title> (else the first <h1>) is the title."""

from __future__ import annotations

import re
from pathlib import Path

from .extract import Deadline, Extracted, Limits, clean, decode

BLOCKS = (
    "address,article,aside,blockquote,br,dd,div,dl,dt,fieldset,figcaption,figure,footer,"
    "form,h1,h2,h3,h4,h5,h6,header,hr,li,main,nav,ol,p,pre,section,table,tr,ul"
)
HIDDEN = ["script", "style", "noscript", "template", "svg", "iframe", "object", "head"]
_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_-]+)""", re.IGNORECASE)
_BREAK, _CELL = "\ue000", "\ue001"  # private-use characters


def read(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    from selectolax.lexbor import LexborHTMLParser  # only HTML imports load the parser

    with path.open("rb") as handle:
        data = handle.read(limits.max_bytes + 1)
    declared = _CHARSET.search(data[:4096])
    tree = LexborHTMLParser(decode(data, name, declared.group(1).decode() if declared else None))
    deadline.check()
    title_node = tree.css_first("title") or tree.css_first("h1")
    title = title_node.text(separator=" ") if title_node is not None else ""
    body = tree.body
    if body is None:
        return Extracted("", [], title, {})
    for tag in HIDDEN:
        for node in body.css(tag):
            node.decompose()
    # Markers that survive whitespace folding: a block break, a table cell.
    for node in body.css(BLOCKS):
        node.insert_before(_BREAK)
        node.insert_after(_BREAK)
    for node in body.css("td,th"):
        node.insert_before(_CELL)
    deadline.check()
    blocks = body.text(separator="").split(_BREAK)
    lines = [" ".join(block.split()).replace(_CELL, "\t").strip("\t ") for block in blocks]
    text = re.sub(r"\n{3,}", "\n\n", clean("\n".join(lines))).strip("\n")
    return Extracted(text, [], title, {})
