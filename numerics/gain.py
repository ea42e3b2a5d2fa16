"""Gain rules: how a source-quality grade enters the gain of a relevance grade.

A result's gain is its relevance grade (0–3) unless the evaluation setting names a rule
over one quality dimension (a grade 0..m of the document or its site):

- ``none``: gain = relevance (the default; every number as without quality).
- ``weight:<dimension>:w0,w1,...,wm``: gain = relevance × weight[quality], the weighted
  combination of relevance and source quality that human-assessment guidelines describe
  (Google's Search Quality Rater Guidelines rate a result's "Needs Met" and its page's
  "Page Quality" and combine both). Weights are whole numbers ≥ 0, so the combined grades
  are integers and a qrels file (trec_eval reads integer relevance) holds them exactly.
- ``minimum:<dimension>:q``: a result whose quality is below q counts as non-relevant
  (gain 0); otherwise gain = relevance.

A document whose quality is not judged keeps its relevance grade (weight 1, never below
the minimum): the rule judges what was judged and leaves the rest as the relevance
grades say. Binary measures count a result relevant when its gain reaches the project's
relevance threshold, as for relevance grades. No Django here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

NONE = "none"
WEIGHT = "weight"
MINIMUM = "minimum"
KINDS = (NONE, WEIGHT, MINIMUM)
MAX_WEIGHT = 100
UNJUDGED = -1  # a quality array's value where the source is not judged
_KEY = r"[a-z0-9][a-z0-9_-]{0,39}"
_WEIGHT = re.compile(rf"weight:({_KEY}):([0-9]{{1,3}}(?:,[0-9]{{1,3}}){{1,9}})")
_MINIMUM = re.compile(rf"minimum:({_KEY}):([0-9])")


@dataclass(frozen=True)
class GainRule:
    """One gain rule (see the module's docstring); ``str()`` is its text form."""

    kind: str = NONE
    dimension: str = ""
    weights: tuple[int, ...] = ()
    minimum: int = 0

    @classmethod
    def parse(cls, text: str | None) -> GainRule:
        """The rule a text names (``none``, ``weight:key:0,1,2,3``, ``minimum:key:2``);
        empty is ``none``; ``ValueError`` naming the forms otherwise."""
        text = (text or "").strip()
        if text in ("", NONE):
            return cls()
        found = _WEIGHT.fullmatch(text)
        if found:
            weights = tuple(int(w) for w in found.group(2).split(","))
            if max(weights) > MAX_WEIGHT:
                raise ValueError(f"a weight is at most {MAX_WEIGHT}")
            return cls(WEIGHT, found.group(1), weights)
        found = _MINIMUM.fullmatch(text)
        if found:
            return cls(MINIMUM, found.group(1), minimum=int(found.group(2)))
        raise ValueError(
            f"unknown gain rule {text!r}: use none, weight:<dimension>:w0,w1,… "
            "or minimum:<dimension>:q"
        )

    def __str__(self) -> str:
        if self.kind == WEIGHT:
            return f"weight:{self.dimension}:{','.join(map(str, self.weights))}"
        if self.kind == MINIMUM:
            return f"minimum:{self.dimension}:{self.minimum}"
        return NONE

    @property
    def is_none(self) -> bool:
        return self.kind == NONE

    def check_scale(self, max_grade: int) -> None:
        """``ValueError`` unless the rule fits a dimension graded 0..``max_grade``."""
        if self.kind == WEIGHT and len(self.weights) != max_grade + 1:
            raise ValueError(
                f"{self.dimension} is graded 0–{max_grade}: give {max_grade + 1} weights"
            )
        if self.kind == MINIMUM and self.minimum > max_grade:
            raise ValueError(f"{self.dimension} is graded 0–{max_grade}")

    def apply(self, relevance: np.ndarray, quality: np.ndarray) -> np.ndarray:
        """The gains of results with these relevance grades and quality grades
        (``UNJUDGED`` where the quality is not judged); parallel integer arrays."""
        relevance = np.asarray(relevance, dtype=np.int64)
        quality = np.asarray(quality, dtype=np.int64)
        if self.kind == WEIGHT:
            table = np.array([*self.weights, 1], dtype=np.int64)  # index -1: unjudged
            return relevance * table[quality]
        if self.kind == MINIMUM:
            below = (quality != UNJUDGED) & (quality < self.minimum)
            return np.where(below, 0, relevance)
        return relevance.copy()


def majority(source: np.ndarray, grade: np.ndarray, n: int) -> np.ndarray:
    """Per item 0..n-1, the most frequent grade among its graders (a tie goes to the
    higher grade, as ``numerics.consensus``'s majority); ``UNJUDGED`` where none."""
    source = np.asarray(source, dtype=np.int64)
    grade = np.asarray(grade, dtype=np.int64)
    out = np.full(n, UNJUDGED, dtype=np.int64)
    if not source.size:
        return out
    width = int(grade.max()) + 1
    counts = np.bincount(source * width + grade, minlength=n * width).reshape(n, width)
    judged = counts.sum(axis=1) > 0
    best = width - 1 - np.argmax(counts[:, ::-1], axis=1)
    out[judged] = best[judged]
    return out
