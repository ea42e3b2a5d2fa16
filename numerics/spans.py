"""Spans of a document's text: half-open [start, end) code-point offsets, and its pages."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, order=True)
class Span:
    """Characters [start, end) of one document (by its database key)."""

    document: int
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"span [{self.start}, {self.end}) is not ordered")

    def __len__(self) -> int:
        return self.end - self.start

    def overlaps(self, other: Span) -> bool:
        return self.document == other.document and self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class SpanArrays:
    """Many spans at once: parallel int64 arrays of document key, start and end.

    Built from anything array-like (lists, columns of a query); the arrays are flattened
    and must have one length.
    """

    document: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __post_init__(self) -> None:
        for name in ("document", "start", "end"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64).ravel())
        if not self.document.size == self.start.size == self.end.size:
            raise ValueError("document, start and end must have the same length")

    def __len__(self) -> int:
        return self.document.size


def page_spans(page_starts: Sequence[int], length: int) -> list[tuple[int, int]]:
    """(start, end) of every page; a document without page boundaries is one page.

    Page i spans [page_starts[i], page_starts[i+1]) and the last page runs to ``length``.
    """
    starts = list(page_starts) or [0]
    return list(zip(starts, [*starts[1:], length], strict=True))


def page_of(page_starts: Sequence[int], offset: int) -> int | None:
    """1-based number of the page holding ``offset``; None for a document without pages."""
    if not page_starts:
        return None
    return bisect.bisect_right(page_starts, offset)
