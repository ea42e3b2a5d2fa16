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

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from annotator.models import Chunk, Project, Query
from gold.models import GoldSet
from gold.units import DOCUMENTS, PAGES, UnitGrades, Units, gold_unit_grades
from numerics.mapping import MappingPolicy
from numerics.measures import evaluate_arrays
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


class LevelMismatch(ValueError):
    pass


def lookup(sorted_keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``values`` in ``sorted_keys`` and whether each is present there."""
    if sorted_keys.size == 0:
        return np.zeros(values.size, dtype=np.int64), np.zeros(values.size, dtype=bool)
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
        order = np.argsort(np.array([s.encode() for s in self.units.ids], dtype=object))
        code = np.empty(order.size, dtype=np.int64)
        code[order] = np.arange(order.size)
        return code

    def arrays(self):
        query = np.searchsorted(self.query_pks, self.grades.query)
        return query, self.code[self.grades.unit], self.grades.grade

    @property
    def description(self) -> dict:
        return {
            "gold": f"{self.gold_set.name} v{self.gold_set.version}" if self.gold_set else "live",
            **self.grades.policy,
        }


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
        result = bootstrap_cis(np.array([self.values[n] for n in names]), n_resamples=2000)
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
    query_pk, unit, score = run_at_level(run, gold.units)
    position_safe, known = lookup(gold.query_pks, query_pk)
    qrel_query, qrel_item, qrel_grade = gold.arrays()
    run_query, run_code, run_score = position_safe[known], gold.code[unit[known]], score[known]
    values = evaluate_arrays(
        run_query,
        run_code,
        run_score,
        qrel_query,
        qrel_item,
        qrel_grade,
        gold.query_pks.size,
        measures,
        rel_default=gold.threshold,
        ranked=in_rank_order(run_query, run_code, run_score),
    )
    return RunScores(
        run=run,
        gold=gold,
        values=values,
        n_results=int(known.sum()),
        covered_queries=int(np.unique(position_safe[known]).size),
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
