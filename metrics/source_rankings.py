"""Judge against people where it matters: the run rankings two sets of label sources give.

Every active run is measured twice on one measure, once against the grades of the labels
of sources ``a`` (say ``people,assessors``) and once against those of ``b`` (say
``judge:gpt-mini``), each gold over its own judged queries as trec_eval does. Then:
Kendall's τ-b and τ_AP (``numerics.rank_correlation``; τ_AP of b's ordering against a's)
between the two orderings of the runs, the pairs of runs whose order flips, and the
Pearson and Spearman correlations of the per-query values on the queries both golds judge
(over every (run, query), and per run).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from annotator.models import Project
from numerics.measures.trec_eval import expand_measures
from numerics.rank_correlation import kendall_tau, pearson, spearman, tau_ap

from .evaluation import OWN, EvaluationSetting, default_level, evaluate_run, evaluation_setting
from .models import Run


@dataclass
class SourceRankings:
    a: list[str]
    b: list[str]
    measure: str
    level: str
    k: int
    runs: list[dict] = field(default_factory=list)  # name, id, a, b, rank_a, rank_b
    tau: float | None = None
    tau_ap: float | None = None
    flips: list[dict] = field(default_factory=list)  # {"above", "below"} under a
    pearson: float | None = None
    spearman: float | None = None
    queries: int = 0  # queries both golds judge (the per-query correlations' items)

    def as_json(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "sources": {"a": self.a, "b": self.b},
            "measure": self.measure,
            "level": self.level,
            "k": self.k,
            "tau": self.tau,
            "tau_ap": self.tau_ap,
            "flips": self.flips,
            "per_query": {
                "queries": self.queries,
                "pearson": self.pearson,
                "spearman": self.spearman,
            },
            "runs": self.runs,
        }


def _ranks(values: list[float]) -> list[int]:
    """1 for the best; ties share the better rank."""
    return [1 + sum(other > value for other in values) for value in values]


def compare_sources(
    project: Project,
    a,
    b,
    measure: str,
    *,
    level: str | None = None,
    k: int = 10,
    mapping=None,
) -> SourceRankings:
    """Runs ranked by ``measure`` under the labels of sources ``a`` and of ``b`` (texts,
    tokens or ``Sources``). ``ValueError`` for an unknown measure; ``SourcesError`` (a
    ValueError) for sources the project does not have."""
    (measure,) = expand_measures(measure)  # one per-query column, either vocabulary
    level = level or default_level(project)
    settings: list[EvaluationSetting] = [
        evaluation_setting(
            project, level=level, k=k, mapping=mapping, measures=[measure], sources=side
        )
        for side in (a, b)
    ]
    first, second = settings
    result = SourceRankings(first.source_names, second.source_names, measure, level, k)
    runs = [
        r
        for r in Run.objects.filter(project=project)
        .active()
        .select_related("chunking")
        .without_results()
        if first.can_evaluate(r)
    ]
    runs.sort(key=lambda r: r.name)
    all_a, all_b = [], []
    for run in runs:
        gold_a, gold_b = first.gold_for(run), second.gold_for(run)
        scores_a = evaluate_run(run, gold_a, [measure])
        scores_b = evaluate_run(run, gold_b, [measure])
        common = np.intersect1d(gold_a.query_pks, gold_b.query_pks)
        x = scores_a.values[measure][np.searchsorted(gold_a.query_pks, common)]
        y = scores_b.values[measure][np.searchsorted(gold_b.query_pks, common)]
        all_a.append(x)
        all_b.append(y)
        result.queries = max(result.queries, int(common.size))
        result.runs.append(
            {
                "id": run.pk,
                "name": run.name,
                "a": scores_a.mean(measure),
                "b": scores_b.mean(measure),
                "pearson": pearson(x, y),
                "spearman": spearman(x, y),
            }
        )
    means_a = [r["a"] for r in result.runs]
    means_b = [r["b"] for r in result.runs]
    for row, rank_a, rank_b in zip(result.runs, _ranks(means_a), _ranks(means_b), strict=True):
        row["rank_a"], row["rank_b"] = rank_a, rank_b
    result.tau = kendall_tau(means_a, means_b)
    result.tau_ap = tau_ap(means_a, means_b)
    for i, one in enumerate(result.runs):
        for other in result.runs[i + 1 :]:
            if (one["a"] - other["a"]) * (one["b"] - other["b"]) < 0:
                above, below = (one, other) if one["a"] > other["a"] else (other, one)
                result.flips.append({"above": above["name"], "below": below["name"]})
    if all_a:
        pooled_a, pooled_b = np.concatenate(all_a), np.concatenate(all_b)
        result.pearson, result.spearman = pearson(pooled_a, pooled_b), spearman(pooled_a, pooled_b)
    return result


__all__ = ["OWN", "SourceRankings", "compare_sources"]
