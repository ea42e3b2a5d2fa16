"""Plain text and Markdown: kept as written (so spans match the source); the first heading
or first line is the title."""

from __future__ import annotations

import re
from pathlib import Path

from .extract import Deadline, Extracted, Limits, clean, decode

_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_SETEXT = re.compile(r"^(\S.*)\n {0,3}(=+|-+)[ \t]*$", re.MULTILINE)


def _read(path: Path, name: str, limits: Limits) -> str:
    with path.open("rb") as handle:
        data = handle.read(limits.max_chars * 4 + 4)
    return clean(decode(data, name))


def read_text(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    text = _read(path, name, limits)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    title = first if len(first) <= 200 else ""
    return Extracted(text, [], title, {})


def read_markdown(path: Path, name: str, limits: Limits, deadline: Deadline) -> Extracted:
    text = _read(path, name, limits)
    headings = [m for m in (_ATX.search(text), _SETEXT.search(text)) if m]
    first = min(headings, key=lambda m: m.start()) if headings else None
    return Extracted(text, [], first.group(1).strip() if first else "", {})
