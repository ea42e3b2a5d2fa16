"""Spans of a document's text: half-open [start, end) code-point offsets, and its pages."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

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


def fold_overlapping(document, start, end, threshold: float) -> np.ndarray:
    """Fold spans that show the same text into one: the index of each span's representative.

    Two spans of one document are the same piece of text when one lies inside the other, or
    when they share at least ``threshold`` (in (0, 1]) of the shorter one's characters. The
    longest spans become representatives first (ties: the earlier index); every other span
    joins the first representative it folds into, else becomes one itself. So no two
    representatives fold into each other, and each span folds into its representative.
    """
    if not 0 < threshold <= 1:
        raise ValueError("the fold threshold is a share in (0, 1]")
    spans = SpanArrays(document, start, end)
    num, den = Fraction(repr(threshold)).limit_denominator(1_000_000).as_integer_ratio()
    length = spans.end - spans.start
    order = np.lexsort((np.arange(len(spans)), -length))
    representative = np.arange(len(spans))
    chosen: dict[int, list[int]] = {}
    for index in order.tolist():
        doc, a, b = int(spans.document[index]), int(spans.start[index]), int(spans.end[index])
        for rep in chosen.get(doc, ()):
            ra, rb = int(spans.start[rep]), int(spans.end[rep])
            overlap = min(b, rb) - max(a, ra)
            inside = ra <= a and b <= rb
            if inside or (overlap > 0 and overlap * den >= num * min(b - a, rb - ra)):
                representative[index] = rep
                break
        else:
            chosen.setdefault(doc, []).append(index)
    return representative
