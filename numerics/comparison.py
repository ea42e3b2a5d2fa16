"""Runs against a baseline on several measures: the one comparison behind ``manage.py
compare``, the web comparison page, the API's compare and the CI gate. Numpy only.

Every caller hands per-query values over the same queries; ``compare`` first puts the
queries in one canonical order — their ids in byte order (trec_eval's ``strcmp``) — so
that the seeded randomization test (``SEED``) gives the same p-values from files, pages
and the API for the same data. Each run gets the paired randomization and t-tests
against the baseline, the 95 % bootstrap interval of the mean difference and its wins,
ties and losses; Holm's correction runs over the runs compared, separately per measure
(``significance.against_baseline``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .significance import BaselineTest, against_baseline

SEED = 0  # of the randomization test and the bootstrap, everywhere


@dataclass(frozen=True)
class Versus(BaselineTest):
    """One run against the baseline on one measure: the tests, and the run (what the
    caller compares: a stored run, or a file's ``RunFile``)."""

    run: Any = None

    @classmethod
    def of(cls, run, test: BaselineTest) -> Versus:
        return cls(**{f.name: getattr(test, f.name) for f in fields(test)}, run=run)


@dataclass(frozen=True)
class MeasureComparison:
    """Every run against the baseline on one measure; ``baseline_mean`` over the queries."""

    name: str
    baseline_mean: float
    rows: list[Versus]


@dataclass(frozen=True)
class Comparison:
    """Runs against ``baseline`` on ``measures``, over ``qids`` (canonical order)."""

    baseline: Any
    others: list[Any]
    qids: list[str]
    alpha: float
    measures: list[MeasureComparison]
    values: dict[str, np.ndarray]  # measure -> (runs, queries): the baseline first

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    def measure(self, name: str) -> MeasureComparison:
        return next(m for m in self.measures if m.name == name)

    def differences(self, run, name: str) -> np.ndarray:
        """Per-query ``run − baseline`` on measure ``name`` (queries in ``qids`` order)."""
        values = self.values[name]
        return values[1 + self.others.index(run)] - values[0]


def canonical_order(qids: list[str]) -> np.ndarray:
    """The positions of ``qids`` in byte order of their UTF-8 text."""
    return np.array(sorted(range(len(qids)), key=lambda i: qids[i].encode()), dtype=np.int64)


def compare(
    qids: list[str],
    baseline,
    others: list,
    values: list[dict[str, np.ndarray]],
    names: list[str],
    *,
    alpha: float = 0.05,
) -> Comparison:
    """``values[0]`` (the baseline's) and ``values[1:]`` (``others``'), each a measure →
    per-query array over ``qids``; the queries are put in canonical order first."""
    order = canonical_order(qids)
    ordered = {n: np.array([v[n][order] for v in values], dtype=np.float64) for n in names}
    measures = []
    for name in names:
        table = ordered[name]
        tests = against_baseline(table[0], list(table[1:]), alpha=alpha, seed=SEED)
        mean = float(table[0].mean()) if table.shape[1] else 0.0
        rows = [Versus.of(run, test) for run, test in zip(others, tests, strict=True)]
        measures.append(MeasureComparison(name, mean, rows))
    return Comparison(
        baseline=baseline,
        others=list(others),
        qids=[qids[i] for i in order.tolist()],
        alpha=alpha,
        measures=measures,
        values=ordered,
    )
