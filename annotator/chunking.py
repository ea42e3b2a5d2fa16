"""Chunking a project's documents: fixed-size sliding windows over a language-neutral
token unit, pages respected or not.

A *token* is either one CJK character (Chinese has no spaces, so each Han character
counts as one unit) or a maximal run of other non-space characters (a word with its
attached punctuation in English). A chunking of size S and overlap O takes windows of
S tokens starting every S - O tokens; a chunk's span runs from its first token's start
to its last token's end, so chunks never start or end inside a word and the document
text between them is exactly the chunk text.
"""

from __future__ import annotations

import re
from itertools import pairwise

import numpy as np

from .importing import ImportResult, import_chunks
from .models import Project

_CJK = (
    "\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0002fa1f"
)
TOKEN_RE = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")


def token_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets (half-open) of every token of ``text``."""
    spans = np.fromiter(
        (offset for match in TOKEN_RE.finditer(text) for offset in match.span()),
        dtype=np.int64,
    )
    return spans[0::2], spans[1::2]


def window_spans(
    text: str, size: int, overlap: int, *, page_starts: list[int] | None = None
) -> list[tuple[int, int]]:
    """Half-open character spans of the sliding windows of ``size`` tokens.

    Windows start every ``size - overlap`` tokens; the last window is the first one that
    reaches the final token, so the whole text is covered and no window is a strict
    suffix of the previous one. A text without tokens yields no chunk. With
    ``page_starts`` (a document's page offsets) each page is windowed on its own, so no
    chunk crosses a page break and page and chunk evidence line up.
    """
    if size < 1 or not 0 <= overlap < size:
        raise ValueError("need size >= 1 and 0 <= overlap < size")
    if page_starts:
        bounds = [*page_starts, len(text)]
        return [
            (first + start, first + end)
            for first, last in pairwise(bounds)
            for start, end in window_spans(text[first:last], size, overlap)
        ]
    starts, ends = token_spans(text)
    n_tokens = len(starts)
    if n_tokens == 0:
        return []
    stride = size - overlap
    last_first = max(0, n_tokens - size)
    first = np.arange(0, last_first + 1, stride)
    if first[-1] != last_first:
        first = np.append(first, last_first)
    last = np.minimum(first + size, n_tokens) - 1
    return list(zip(starts[first].tolist(), ends[last].tolist(), strict=True))


def chunking_name(size: int, overlap: int, *, by_page: bool = False) -> str:
    return f"tokens-{size}-{overlap}" + ("-pages" if by_page else "")


def create_window_chunking(
    project: Project,
    *,
    size: int,
    overlap: int,
    by_page: bool = False,
    name: str | None = None,
) -> ImportResult:
    """A new chunking of every document in windows of ``size`` tokens; with ``by_page`` no
    chunk crosses a page break (documents without pages are windowed whole). All or
    nothing, through the same path as an imported chunking."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError("need size >= 1 and 0 <= overlap < size")
    parameters = {"size": size, "overlap": overlap, "unit": "token", "by_page": by_page}

    def rows():
        number = 0
        documents = project.documents.values_list("doc_id", "text", "page_starts")
        for doc_id, text, page_starts in documents.iterator():
            pages = page_starts if by_page else None
            for index, (start, end) in enumerate(
                window_spans(text, size, overlap, page_starts=pages)
            ):
                number += 1
                yield (
                    number,
                    {"chunk_id": f"{doc_id}#{index}", "doc_id": doc_id, "start": start, "end": end},
                )

    return import_chunks(
        project,
        rows(),
        chunking=name or chunking_name(size, overlap, by_page=by_page),
        parameters=parameters,
    )
