"""Runs measured on nuggets in a dashboard setting: nugget recall (all, vital) and ndeval's
diversity measures at the setting's level and cutoff, per query and as means with 95 %
intervals, and which nuggets a run covers at which rank (the drill-down).

The nuggets are those behind the setting's gold — the live ones, or a frozen gold set's —
and a unit covers a nugget when one of its spans reaches the unit under the setting's
mapping (``nuggets.coverage``). The run is ranked at the level as every measure takes it
(``metrics.rankings.ranked_run``), so ``manage.py evaluate --nuggets`` on the exported run
and nuggets gives the same numbers (tested). Queries without nuggets are left out and
counted; a query the run does not retrieve for scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from django.db.models import Count, Max

from annotator.models import Project
from metrics.evaluation import EvaluationSetting
from metrics.models import Run
from metrics.rankings import cache, ranked_run, run_version, unit_codes
from numerics.nuggets import evaluate_nuggets, ranks_within
from numerics.significance import bootstrap_cis

from .coverage import Coverage, coverage
from .models import Nugget, NuggetHistory
from .sources import NuggetRows, nugget_rows

RESAMPLES = 1000  # as the dashboard's intervals


def nugget_measures(k: int) -> list[str]:
    """The measures the dashboards show at cutoff k."""
    return [
        f"NuggetRecall@{k}",
        f"NuggetRecall(vital)@{k}",
        f"StRecall@{k}",
        f"alpha_nDCG@{k}",
        f"ERR_IA@{k}",
    ]


@dataclass
class NuggetScores:
    """One run's per-query values over the queries that have nuggets (NaN where a measure
    leaves a query out: NuggetRecall(vital) on a query without vital nuggets)."""

    run: Run
    level: str
    query_pks: np.ndarray
    values: dict[str, np.ndarray]

    @property
    def nbytes(self) -> int:
        """What the per-process cache counts this by."""
        return self.query_pks.nbytes + sum(v.nbytes for v in self.values.values())

    def counted(self, name: str) -> int:
        return int(np.isfinite(self.values[name]).sum())

    def mean(self, name: str) -> float | None:
        values = self.values[name]
        kept = values[np.isfinite(values)]
        return float(kept.mean()) if kept.size else None

    @cached_property
    def intervals(self) -> dict[str, tuple[float, float] | None]:
        found = {}
        for name, values in self.values.items():
            kept = values[np.isfinite(values)]
            result = bootstrap_cis(kept, n_resamples=RESAMPLES) if kept.size else None
            found[name] = None if result is None else (float(result[0][0]), float(result[1][0]))
        return found


@dataclass
class NuggetSetting:
    """The nuggets behind an ``EvaluationSetting``: its gold's nuggets, mapped onto each
    level as runs need it (kept per level for one page)."""

    project: Project
    setting: EvaluationSetting
    rows: NuggetRows
    # What identifies these nuggets in the per-process cache: a gold set never changes;
    # every change of live nuggets adds a history row, and what removes nuggets or spans
    # without one (a query or document deleted) changes their counts.
    revision: tuple = ()

    @classmethod
    def of(cls, project: Project, setting: EvaluationSetting) -> NuggetSetting:
        gold_set = setting.gold.gold_set
        if gold_set is not None:
            revision = ("gold", gold_set.pk)
        else:
            last = NuggetHistory.objects.filter(query__project=project).aggregate(m=Max("id"))
            counts = Nugget.objects.in_project(project).aggregate(
                n=Count("pk", distinct=True), e=Count("evidence")
            )
            revision = ("live", project.pk, last["m"], counts["n"], counts["e"])
        rows = cache.get(("nuggets", *revision), lambda: nugget_rows(project, gold_set))
        return cls(project, setting, rows, revision)

    @property
    def n_queries(self) -> int:
        """Queries that have nuggets."""
        return int(self.rows.query_pks.size)

    @property
    def n_vital_queries(self) -> int:
        return int(np.unique(self.rows.query[self.rows.vital]).size)

    def coverage_for(self, run: Run) -> Coverage:
        units = self.setting.gold_for(run).units
        mapping = self.setting.mapping
        key = ("nugget-coverage", *self.revision, units.fingerprint, str(mapping))
        return cache.get(key, lambda: coverage(self.rows, units, mapping))

    def scores(self, run: Run, measures: list[str] | None = None) -> NuggetScores:
        """The run's values (kept per process: runs never change, nor do these nuggets)."""
        measures = list(measures or nugget_measures(self.setting.k))
        units = self.setting.gold_for(run).units
        key = (
            "nugget-scores",
            *self.revision,
            *run_version(run),
            units.fingerprint,
            str(self.setting.mapping),
            tuple(measures),
        )
        return cache.get(key, lambda: self._scores(run, measures))

    def _scores(self, run: Run, measures: list[str]) -> NuggetScores:
        covered = self.coverage_for(run)
        units = covered.units
        subtopics, query_pks = covered.subtopics(unit_codes(units))
        ranked = ranked_run(run, units)
        row_query = ranked.row_query
        if query_pks.size and row_query.size:
            index = np.minimum(np.searchsorted(query_pks, row_query), query_pks.size - 1)
            keep = query_pks[index] == row_query
        else:
            index = np.zeros(row_query.size, dtype=np.int64)
            keep = np.zeros(row_query.size, dtype=bool)
        rank = ranks_within(row_query)
        values = evaluate_nuggets(
            subtopics,
            index[keep],
            unit_codes(units)[ranked.item[keep]],
            rank[keep],
            measures,
        )
        return NuggetScores(run, units.level, query_pks, values)

    def covered_ranks(self, run: Run, query_pk: int, depth: int) -> list[dict]:
        """Each nugget of the query with the ranks (≤ ``depth``) of the run's units that
        cover it, best first, and the ids of those units."""
        covered = self.coverage_for(run)
        ranked = ranked_run(run, covered.units)
        rows = ranked.rows(query_pk)
        items = ranked.item[rows][:depth].tolist()
        rank_of = {unit: rank for rank, unit in enumerate(items, start=1)}
        found = []
        for index in self.rows.of_query(query_pk).tolist():
            units = covered.unit[covered.nugget == index].tolist()
            hits = sorted((rank_of[u], str(covered.units.ids[u])) for u in units if u in rank_of)
            found.append(
                {
                    "nugget_id": self.rows.nugget_id[index],
                    "text": self.rows.text[index],
                    "vital": bool(self.rows.vital[index]),
                    "n_spans": int((self.rows.ev_nugget == index).sum()),
                    "n_units": len(units),
                    "hits": [{"rank": r, "unit": u} for r, u in hits],
                    "first": hits[0][0] if hits else None,
                }
            )
        return found
