"""Evaluating stored runs against gold grades at a level, with the numeric engine.

The gold side comes from ``gold.units`` (live labels under the default consensus, or a
frozen gold set); the run side is the stored result arrays, mapped onto the same units:

- a chunk run at its own chunking's level: chunk → unit directly;
- a chunk run at document (or page) level: each chunk stands for its document (or the
  page holding its first character), and a document's score is its best chunk's score —
  the usual way to judge a chunk retriever by the documents it surfaces;
- a document run at document level.

Unit codes follow the units' id string order, so ties are broken exactly as trec_eval
breaks them on the exported files; the dashboard and ``manage.py evaluate`` on the
exported qrels and run give the same numbers (tested).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from django.conf import settings

from annotator.models import Chunk, Project, Query
from gold.models import GoldSet
from gold.units import DOCUMENTS, PAGES, UnitGrades, Units, gold_unit_grades
from numerics.mapping import MappingPolicy
from numerics.measures import RunIndex, evaluate_index, index_run
from numerics.significance import bootstrap_cis

from .models import Run, RunLevel

DASHBOARD_MEASURES = [
    ("Hit@{k}", "Hit@k"),
    ("P@{k}", "P@k"),
    ("R@{k}", "R@k"),
    ("F1@{k}", "F1@k"),
    ("MRR@{k}", "MRR@k"),
    ("MAP", "MAP"),
    ("nDCG@{k}", "nDCG@k"),
    ("Rprec", "R-precision"),
]
LOW_COVERAGE = 0.8  # Judged@k below this earns a warning
# Percentile bootstrap intervals on the dashboard: 1,000 resamples (Efron & Tibshirani
# 1993 advise at least that many for percentile intervals), drawn once per query count.
DASHBOARD_RESAMPLES = 1000


class LevelMismatch(ValueError):
    pass


def lookup(sorted_keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``values`` in ``sorted_keys`` (unique) and whether each is present.

    Database ids are nearly contiguous, so when their span is small a dense table maps
    each id to its position in one gather (much faster than a binary search per value).
    """
    values = np.asarray(values, dtype=np.int64)
    if sorted_keys.size == 0:
        return np.zeros(values.size, dtype=np.int64), np.zeros(values.size, dtype=bool)
    low, high = int(sorted_keys[0]), int(sorted_keys[-1])
    if high - low <= 8 * sorted_keys.size + 1024:
        table = np.full(high - low + 2, -1, dtype=np.int64)  # last slot: out of range
        table[sorted_keys - low] = np.arange(sorted_keys.size)
        offset = values - low
        offset[(offset < 0) | (offset > high - low)] = high - low + 1
        position = table[offset]
        known = position >= 0
        return np.where(known, position, 0), known
    position = np.minimum(np.searchsorted(sorted_keys, values), sorted_keys.size - 1)
    return position, sorted_keys[position] == values


@dataclass
class Gold:
    """Gold grades of one level, ready for the engine."""

    project: Project
    grades: UnitGrades
    gold_set: GoldSet | None
    threshold: int

    @property
    def units(self) -> Units:
        return self.grades.units

    @cached_property
    def query_pks(self) -> np.ndarray:
        return np.unique(self.grades.query)

    @cached_property
    def qids(self) -> list[str]:
        names = dict(Query.objects.filter(pk__in=self.query_pks.tolist()).values_list("pk", "qid"))
        return [names[int(pk)] for pk in self.query_pks]

    @cached_property
    def code(self) -> np.ndarray:
        """Unit index → code whose order is the unit ids' string order (trec_eval's)."""
        return _cache.get(("code", self.units.fingerprint), lambda: unit_codes(self.units))

    def arrays(self):
        query = np.searchsorted(self.query_pks, self.grades.query)
        return query, self.code[self.grades.unit], self.grades.grade

    @property
    def description(self) -> dict:
        return {
            "gold": f"{self.gold_set.name} v{self.gold_set.version}" if self.gold_set else "live",
            **self.grades.policy,
        }


def unit_codes(units: Units) -> np.ndarray:
    order = np.argsort(np.array([s.encode() for s in units.ids], dtype=object))
    code = np.empty(order.size, dtype=np.int64)
    code[order] = np.arange(order.size)
    code.flags.writeable = False
    return code


class ArrayCache:
    """A small per-process LRU cache of derived arrays, bounded by their total bytes.

    Runs never change once imported and units are keyed by their fingerprint, so what is
    cached here is never stale; it spares each dashboard refresh the decompression,
    lifting and ranking of every run (the part that does not depend on the labels).
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key, compute):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
        value = compute()
        size = _nbytes(value)
        with self._lock:
            if key not in self._items and size <= self.max_bytes:
                self._items[key] = (value, size)
                self._bytes += size
                while self._bytes > self.max_bytes:
                    _old, (_value, old_size) = self._items.popitem(last=False)
                    self._bytes -= old_size
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


def _nbytes(value) -> int:
    return value.nbytes if isinstance(value, np.ndarray | RunIndex) else 0


_cache = ArrayCache(settings.ASSAY_RUN_CACHE_BYTES)


def indexed_run(run: Run, gold: Gold) -> RunIndex:
    """The run at the gold's level, ranked and indexed by (query pk, unit code); cached."""
    key = ("run", run.pk, run.n_results, run.created_at, gold.units.fingerprint)

    def compute() -> RunIndex:
        query_pk, unit, score = run_at_level(run, gold.units)
        return index_run(query_pk, gold.code[unit], score, n_items=gold.code.size)

    return _cache.get(key, compute)


def load_gold(
    project: Project,
    level: str,
    *,
    gold_set: GoldSet | None = None,
    mapping: MappingPolicy | None = None,
) -> Gold:
    grades = gold_unit_grades(project, level, gold_set=gold_set, mapping=mapping)
    return Gold(project, grades, gold_set, project.relevance_threshold)


def can_evaluate(run: Run, level: str) -> bool:
    if run.level == RunLevel.DOCUMENT:
        return level == DOCUMENTS
    return level in (DOCUMENTS, PAGES) or (run.chunking is not None and run.chunking.name == level)


def run_at_level(run: Run, units: Units) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query pk, unit index, score) of a run at the units' level (see the module doc)."""
    query, item, score = run.get_results()
    level = units.level
    if not can_evaluate(run, level):
        raise LevelMismatch(f"run {run.name!r} cannot be evaluated at level {level!r}")
    if run.level == RunLevel.DOCUMENT or (run.chunking and run.chunking.name == level):
        position, known = lookup(units.pk, item)  # units are ordered by pk
        return query[known], position[known], score[known]
    chunks = np.array(
        list(
            Chunk.objects.filter(chunking=run.chunking)
            .order_by("pk")
            .values_list("pk", "document_id", "start")
        ),
        dtype=np.int64,
    ).reshape(-1, 3)
    row = np.searchsorted(chunks[:, 0], item)
    document, start = chunks[row, 1], chunks[row, 2]
    if level == DOCUMENTS:
        unit = np.searchsorted(units.pk, document)
    else:  # the page holding the chunk's first character
        key_units = units.document * (2**31) + units.start
        unit = np.searchsorted(key_units, document * (2**31) + start, side="right") - 1
    # One row per (query, unit): the best score among its chunks.
    order = np.lexsort((-score, unit, query))
    query, unit, score = query[order], unit[order], score[order]
    first = np.r_[True, (query[1:] != query[:-1]) | (unit[1:] != unit[:-1])]
    return query[first], unit[first], score[first]


@dataclass
class RunScores:
    run: Run
    gold: Gold
    values: dict[str, np.ndarray]  # per gold query, keyed by measure name
    n_results: int
    covered_queries: int
    extra: dict = field(default_factory=dict)

    def mean(self, measure: str) -> float:
        values = self.values[measure]
        return float(values.mean()) if values.size else 0.0

    @cached_property
    def intervals(self) -> dict[str, tuple[float, float]]:
        """95 % bootstrap intervals of every measure's mean, from one set of resamples."""
        names = list(self.values)
        matrix = np.array([self.values[n] for n in names])
        result = bootstrap_cis(matrix, n_resamples=DASHBOARD_RESAMPLES)
        if result is None:
            return {}
        return {n: (float(lo), float(hi)) for n, lo, hi in zip(names, *result, strict=True)}

    def interval(self, measure: str) -> tuple[float, float] | None:
        return self.intervals.get(measure)


def in_rank_order(query: np.ndarray, code: np.ndarray, score: np.ndarray) -> bool:
    """Whether rows already follow the engine's ranking (stored runs usually do)."""
    dq, ds, dc = np.diff(query), np.diff(score), np.diff(code)
    return bool(np.all((dq > 0) | ((dq == 0) & ((ds < 0) | ((ds == 0) & (dc < 0))))))


def evaluate_run(run: Run, gold: Gold, measures: list[str]) -> RunScores:
    index = indexed_run(run, gold)
    values = evaluate_index(
        index,
        qrel_query=gold.grades.query,
        qrel_item=gold.code[gold.grades.unit],
        qrel_grade=gold.grades.grade,
        query_keys=gold.query_pks,
        measures=measures,
        rel_default=gold.threshold,
    )
    _position, known = lookup(gold.query_pks, index.query)
    return RunScores(
        run=run,
        gold=gold,
        values=values,
        n_results=int(index.count[known].sum()),
        covered_queries=int(known.sum()),
    )


def dashboard_measures(k: int) -> list[tuple[str, str]]:
    """(engine name, column label) of the dashboard's measures at cutoff k."""
    return [
        (name.format(k=k), label.replace("k", str(k)) if "@k" in label else label)
        for name, label in DASHBOARD_MEASURES
    ]


def run_lines(run: Run, gold: Gold) -> list[str]:
    """The run as TREC lines at the gold's level (what ``evaluate`` reads back)."""
    query_pk, unit, score = run_at_level(run, gold.units)
    qids = dict(Query.objects.filter(project=run.project).values_list("pk", "qid"))
    order = np.lexsort((-gold.code[unit], -score, query_pk))
    query_pk, unit, score = query_pk[order], unit[order], score[order]
    first = np.searchsorted(query_pk, query_pk)
    rank = np.arange(query_pk.size) - first + 1
    tag = run.name.replace(" ", "_") or "run"
    return [
        f"{qids[int(q)]} Q0 {gold.units.ids[int(u)]} {int(r)} {float(s)!r} {tag}"
        for q, u, s, r in zip(query_pk, unit, score, rank, strict=True)
    ]


def qrels_lines(gold: Gold) -> list[str]:
    rows = sorted(
        (gold.qids[q], str(gold.units.ids[u]), int(g))
        for q, u, g in zip(
            np.searchsorted(gold.query_pks, gold.grades.query).tolist(),
            gold.grades.unit.tolist(),
            gold.grades.grade.tolist(),
            strict=True,
        )
    )
    return [f"{q} 0 {u} {g}" for q, u, g in rows]
