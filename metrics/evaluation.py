"""Evaluating stored runs against gold grades at a level, with the numeric engine.

The gold side comes from ``gold.units`` (live labels under the default consensus, or a
frozen gold set); the run side is the run ranked at the same level by
``metrics.rankings`` (the one ranking every reader takes). Unit codes follow the units'
ids in byte order, so ties are broken exactly as trec_eval breaks them on the exported
files; the dashboard and ``manage.py evaluate`` on the exported qrels and run give the
same numbers (tested).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from urllib.parse import urlencode

import numpy as np

from annotator.models import Project, Query
from gold.models import GoldSet
from gold.units import UnitGrades, Units, gold_unit_grades
from numerics.mapping import MappingPolicy
from numerics.measures import RunIndex, evaluate_index, index_run
from numerics.significance import bootstrap_cis

from .models import Run
from .rankings import LevelMismatch, cache, can_evaluate, lookup, ranked_run, unit_codes

__all__ = ["LevelMismatch", "can_evaluate", "lookup"]  # where the views meet them

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


@dataclass
class Gold:
    """Gold grades of one level, ready for the engine."""

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
        """Unit index → code whose order is the unit ids' byte order (trec_eval's)."""
        return unit_codes(self.units)

    @property
    def description(self) -> dict:
        return {
            "gold": f"{self.gold_set.name} v{self.gold_set.version}" if self.gold_set else "live",
            **self.grades.policy,
        }


def indexed_run(run: Run, gold: Gold) -> RunIndex:
    """The run at the gold's level, indexed by (query pk, unit code); cached."""
    key = ("index", run.pk, run.n_results, run.created_at, gold.units.fingerprint)

    def compute() -> RunIndex:
        ranked = ranked_run(run, gold.units)
        return index_run(
            ranked.row_query, gold.code[ranked.item], ranked.score, n_items=gold.code.size
        )

    return cache.get(key, compute)


def load_gold(
    project: Project,
    level: str,
    *,
    gold_set: GoldSet | None = None,
    mapping: MappingPolicy | None = None,
) -> Gold:
    grades = gold_unit_grades(project, level, gold_set=gold_set, mapping=mapping)
    return Gold(grades, gold_set, project.relevance_threshold)


@dataclass(frozen=True)
class EvaluationSetting:
    """What runs are measured against: gold grades at a level, a cutoff k and the measures."""

    gold: Gold
    k: int
    mapping: MappingPolicy
    measures: list[tuple[str, str]]  # (engine name, column label), as ``dashboard_measures``

    @property
    def level(self) -> str:
        return self.gold.units.level

    @property
    def names(self) -> list[str]:
        return [name for name, _label in self.measures]

    @property
    def judged(self) -> str:
        return f"Judged@{self.k}"

    @property
    def query_string(self) -> str:
        """The setting as URL parameters (what ``DashboardForm`` reads back)."""
        gold_set = self.gold.gold_set
        return urlencode(
            {
                "gold": gold_set.pk if gold_set else "live",
                "level": self.level,
                "k": self.k,
                "mapping": str(self.mapping),
            }
        )

    def measure(self, requested: str) -> tuple[str, str]:
        """(engine name, label) of a measure named either way; nDCG@k otherwise."""
        for name, label in self.measures:
            if requested in (name, label):
                return name, label
        return self.measures[6]


def evaluation_setting(
    project: Project,
    *,
    level: str,
    k: int = 10,
    gold_set: GoldSet | None = None,
    mapping: MappingPolicy | None = None,
) -> EvaluationSetting:
    """The setting of the dashboards and the API: gold grades loaded at ``level``."""
    mapping = mapping or MappingPolicy.parse("any_overlap")
    gold = load_gold(project, level, gold_set=gold_set, mapping=mapping)
    return EvaluationSetting(gold, k, mapping, dashboard_measures(k))


@dataclass
class RunScores:
    run: Run
    gold: Gold
    values: dict[str, np.ndarray]  # per gold query, keyed by measure name

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


def evaluate_run(run: Run, gold: Gold, measures: list[str]) -> RunScores:
    values = evaluate_index(
        indexed_run(run, gold),
        qrel_query=gold.grades.query,
        qrel_item=gold.code[gold.grades.unit],
        qrel_grade=gold.grades.grade,
        query_keys=gold.query_pks,
        measures=measures,
        rel_default=gold.threshold,
    )
    return RunScores(run=run, gold=gold, values=values)


def dashboard_measures(k: int) -> list[tuple[str, str]]:
    """(engine name, column label) of the dashboard's measures at cutoff k."""
    return [
        (name.format(k=k), label.replace("k", str(k)) if "@k" in label else label)
        for name, label in DASHBOARD_MEASURES
    ]


def run_lines(run: Run, gold: Gold) -> list[str]:
    """The run as TREC lines at the gold's level, in its ranking (what ``evaluate`` reads)."""
    ranked = ranked_run(run, gold.units)
    qids = dict(Query.objects.filter(project=run.project).values_list("pk", "qid"))
    query_pk = ranked.row_query
    rank = np.arange(query_pk.size) - np.repeat(ranked.bounds[:-1], np.diff(ranked.bounds)) + 1
    tag = run.name.replace(" ", "_") or "run"
    return [
        f"{qids[int(q)]} Q0 {gold.units.ids[int(u)]} {int(r)} {float(s)!r} {tag}"
        for q, u, s, r in zip(query_pk, ranked.item, ranked.score, rank, strict=True)
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
