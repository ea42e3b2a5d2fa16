"""Answer runs against a baseline: the one comparison behind the answer comparison page,
the API's ``answers/compare/`` and ``answers/<id>/gate/`` and ``answer_metrics --baseline``.

The runs are chosen as retrieval runs are (``metrics.compared``): the baseline (the first
run when none is named), then each other run once; at least two. Each answer measure is
compared over the queries every run answered *and* where every run's value of that
measure is defined (an answer whose judgements are incomplete, or whose denominator is 0,
has none: ``numerics.answers``) — so each measure has its own number of queries. Within
those, the comparison is ``numerics.comparison.compare`` (queries in canonical order, the
same seed: paired randomization and t-tests, the bootstrap interval of Δ, wins / ties /
losses, Holm's correction over the runs compared, per measure) and the CI gate's rule is
``metrics.gate.gate``: answer runs and retrieval runs are compared and gated alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from api.metrics_views import compared_json
from metrics.access import MAX_ID
from metrics.gate import GateResult, check_json
from numerics.comparison import Comparison, MeasureComparison, compare
from web.errors import BadParameters

from .metrics import MEASURES, RunScores, answer_sources, run_scores
from .models import AnswerRun


def answer_run(project, pk: int) -> AnswerRun:
    """Answer run ``pk`` of ``project`` (404 for any other)."""
    if not 0 < pk <= MAX_ID:
        raise Http404("No such answer run")
    return get_object_or_404(AnswerRun.objects.select_related("chunking"), project=project, pk=pk)


def chosen_answer_runs(project, ids: list[int], baseline: int | None) -> list[AnswerRun]:
    """The baseline (the first of ``ids`` when none is named) and then the other runs of
    ``ids``, each once; 404 for a run not in the project; ``BadParameters`` when fewer
    than two remain."""
    wanted = list(dict.fromkeys([baseline, *ids] if baseline else ids))
    runs = [answer_run(project, pk) for pk in wanted]
    if len(runs) < 2:
        raise BadParameters(_("Compare at least one run with the baseline."))
    return runs


def chosen_measures(names: list[str]) -> list[str]:
    """The answer measures named (all of them when none is), each once, in the order
    named; ``BadParameters`` naming an unknown one."""
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in MEASURES]
    if unknown:
        raise BadParameters(
            _("Unknown answer measures: %(names)s. Known: %(known)s.")
            % {"names": ", ".join(unknown), "known": ", ".join(MEASURES)}
        )
    if len(set(names)) < len(names):
        raise BadParameters(_("Name each measure once."))
    return names or list(MEASURES)


@dataclass(frozen=True)
class AnswerComparison:
    """Answer runs against ``baseline``: ``qids`` are the queries every run answered;
    ``by_measure`` each measure's ``Comparison`` over those of them where every run's
    value is defined (its ``qids``)."""

    baseline: AnswerRun
    others: list[AnswerRun]
    qids: list[str]
    alpha: float
    by_measure: dict[str, Comparison]
    sources: list[str]  # the label sources the judged measures stand on

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def measures(self) -> list[MeasureComparison]:
        """Each measure's rows, in the order compared (what ``metrics.gate.gate`` reads)."""
        return [c.measures[0] for c in self.by_measure.values()]

    def queries(self, name: str) -> int:
        """How many queries measure ``name`` is compared on."""
        return self.by_measure[name].n_queries

    def differences(self, run: AnswerRun, name: str) -> np.ndarray:
        return self.by_measure[name].differences(run, name)


def _aligned(scores: list[RunScores]) -> tuple[list[str], list[dict[str, np.ndarray]]]:
    """The queries every run answered (in the first run's order) and each run's values
    over them."""
    common = set(scores[0].qids)
    for s in scores[1:]:
        common &= set(s.qids)
    qids = [q for q in scores[0].qids if q in common]
    out = []
    for s in scores:
        at = {q: i for i, q in enumerate(s.qids)}
        index = np.array([at[q] for q in qids], dtype=np.int64)
        out.append({name: values[index] for name, values in s.values.items()})
    return qids, out


def compare_answer_runs(
    runs: list[AnswerRun], names: list[str], *, alpha: float = 0.05, sources=None
) -> AnswerComparison:
    """``runs[1:]`` against ``runs[0]`` on the answer measures ``names``, on the
    judgements of ``sources`` (``answers.metrics.answer_sources``: people by default)."""
    sources = answer_sources(runs[0].project, sources)
    qids, values = _aligned([run_scores(run, sources) for run in runs])
    by_measure = {}
    for name in names:
        table = np.array([v[name] for v in values], dtype=np.float64).reshape(len(runs), -1)
        defined = np.isfinite(table).all(axis=0)
        kept = [q for q, ok in zip(qids, defined.tolist(), strict=True) if ok]
        by_measure[name] = compare(
            kept,
            runs[0],
            runs[1:],
            [{name: row[defined]} for row in table],
            [name],
            alpha=alpha,
        )
    order = sorted(qids, key=lambda q: q.encode())
    return AnswerComparison(runs[0], runs[1:], order, alpha, by_measure, sources.names)


def comparison_json(comparison: AnswerComparison) -> dict:
    """The comparison as the API's ``answers/compare/`` and ``answer_metrics --baseline
    --json`` give it."""
    return {
        "baseline": {"id": comparison.baseline.pk, "name": comparison.baseline.name},
        "sources": comparison.sources,
        "queries": comparison.n_queries,
        **compared_json(comparison, lambda m: {"queries": comparison.queries(m.name)}),
    }


def gate_json(comparison: AnswerComparison, outcome: GateResult) -> dict:
    """The gate's answer, in the shape of the retrieval runs' gate (``"run"`` the answer
    run gated), with each measure's number of queries."""
    checks = [check_json(c, queries=comparison.queries(c.measure)) for c in outcome.checks]
    run = comparison.others[0]
    return {
        "pass": outcome.passed,
        "run": {"id": run.pk, "name": run.name},
        "baseline": {"id": comparison.baseline.pk, "name": comparison.baseline.name},
        "sources": comparison.sources,
        "queries": comparison.n_queries,
        "checks": checks,
        "failing": [c for c in checks if not c["pass"]],
    }
