"""A document's text as the document view shows it: parts (pages or windows), marked segments."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from numerics.spans import page_spans

WINDOW_CHARS = 5000  # documents without pages are shown in parts of about this size


@dataclass
class Mark:
    """A label drawn over the text: its span, grade and (own labels) its id."""

    start: int
    end: int
    grade: int
    judgment_pk: int | None = None


def view_spans(document_text: str, page_starts: list[int]) -> list[tuple[int, int]]:
    """The parts a document is shown in: its pages, or windows of about WINDOW_CHARS."""
    n = len(document_text)
    if page_starts:
        return page_spans(page_starts, n)
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n or not spans:
        end = min(start + WINDOW_CHARS, n)
        if end < n:
            cut = document_text.rfind("\n", start + WINDOW_CHARS // 2, end)
            if cut != -1:
                end = cut + 1
        spans.append((start, end))
        if end >= n:
            break
        start = end
    return spans


def part_of(spans: list[tuple[int, int]], offset: int) -> int:
    """1-based number of the part holding ``offset`` (the last part if it is past the end)."""
    return next((i + 1 for i, (a, b) in enumerate(spans) if a <= offset < b), len(spans))


def render_segments(
    text: str, start: int, end: int, marks: list[Mark], focus: tuple[int, int] | None = None
) -> SafeString:
    """Page text as spans, each carrying its exact character offset in ``data-start``.

    Spans are cut wherever evidence (or the focused chunk) begins or ends, so the browser
    can turn a selection back into offsets by counting code points from a span's start.
    No whitespace is added between spans: the page's text nodes are exactly the text.
    The focused chunk's spans sit in one wrapper (with its own ``data-start``), so it is
    drawn as one box rather than a box around every line; a chunk that begins or ends
    inside a line is marked along its text instead, so that no line is broken.
    """
    bounds = {start, end}
    inside = []
    for mark in marks:
        a, b = max(mark.start, start), min(mark.end, end)
        if a < b:
            inside.append((a, b, mark))
            bounds.update((a, b))
    if focus is not None:
        fa, fb = max(focus[0], start), min(focus[1], end)
        focus = (fa, fb) if fa < fb else None
        if focus is not None:
            bounds.update(focus)
    points = sorted(bounds)
    html: list[str] = []
    for a, b in itertools.pairwise(points):
        covering = [m for (ma, mb, m) in inside if ma <= a and mb >= b]
        classes = ["seg"]
        attrs = f' data-start="{a}"'
        if covering:
            best = max(m.grade for m in covering)
            classes += ["hl", f"g{best}"]
            ids = " ".join(str(m.judgment_pk) for m in covering if m.judgment_pk)
            attrs += f' data-judgments="{ids}"'
        if focus is not None and a == focus[0]:
            whole_lines = (a == 0 or text[a - 1] == "\n") and (
                focus[1] == len(text) or text[focus[1] - 1] == "\n"
            )
            shape = "focus-lines" if whole_lines else "focus-run"
            html.append(f'<span class="focus {shape}" data-start="{a}">')
        body = escape(text[a:b]).replace("\r", "&#13;").replace("\x00", "\ufffd")
        html.append(f'<span class="{" ".join(classes)}"{attrs}>{body}</span>')
        if focus is not None and b == focus[1]:
            html.append("</span>")
    return mark_safe("".join(html))  # noqa: S308 - every text piece is escaped above
