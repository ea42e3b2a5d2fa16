"""An LLM judge's answer judgements against people's, on the same answers.

Two sides, each a set of label sources (``annotator.sources``: ``people``, ``judge:<slug>``,
``judge:<slug>@<n>`` …). For the aspects a judge judges — nugget support (not / partial /
support) and citation support (none / partial / full) — each side's value of a target is
its annotators' combined value (``numerics.answers.combine_values``: a lead's adjudication
when people count, else the low median), and on the targets both sides judged:

- exact agreement, Cohen's κ unweighted and linear, Krippendorff's α (ordinal and
  nominal), each with a bootstrap interval where ``numerics.agreement.compare_raters``
  gives one, and the confusion matrix (rows: side a, columns: side b) — the values of
  scikit-learn and of the ``krippendorff`` package;
- beside citation support, the figure TREC published for it: 56 % exact agreement
  between people and GPT-4o on the three levels (TREC 2024 RAG track, Thakur et al.,
  "Support Evaluation for the TREC 2024 RAG Track: Comparing Human versus LLM Judges",
  2025).

And the agreement of run rankings: each answer run's mean of a nugget or support measure
on side a's judgements and on side b's, over the answers both sides score, and Kendall's
τ-b between the two orders of the runs (``numerics.rank_correlation.kendall_tau``, the
value of ``scipy.stats.kendalltau``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from django.utils.translation import gettext as _

from annotator.sources import Sources, SourcesError, resolve_sources, source_choices
from numerics import answers as measures
from numerics.agreement import compare_raters, krippendorff_alpha, labels
from numerics.rank_correlation import kendall_tau

from .metrics import run_scores
from .models import TOP_VALUE, AnswerAdjudication, AnswerJudgment, AnswerRun, Aspect

RESAMPLES = 1000
ASPECTS = (Aspect.NUGGET.value, Aspect.SUPPORT.value)
LEVELS = {
    Aspect.NUGGET.value: measures.NUGGET_LEVELS,
    Aspect.SUPPORT.value: measures.SUPPORT_LEVELS,
}
RANKING_MEASURES = (
    "all_strict",
    "all_weak",
    "vital_strict",
    "vital_weak",
    "support_precision_strict",
    "support_precision_weak",
)
# The published figure each aspect is read beside.
REFERENCE = {
    Aspect.SUPPORT.value: {
        "exact_agreement": 0.56,
        "levels": 3,
        "source": "TREC 2024 RAG track: people vs GPT-4o on citation support (full / partial "
        "/ none), Thakur et al. 2025",
    }
}
_TARGET = {Aspect.NUGGET.value: "nugget_id", Aspect.SUPPORT.value: "citation_id"}
_FIGURES = ("exact_agreement", "kappa", "kappa_linear", "alpha_ordinal")


@dataclass
class AspectAgreement:
    aspect: str
    levels: tuple[str, ...]
    n: int  # targets both sides judged
    n_a: int  # targets side a judged
    n_b: int
    exact_agreement: float | None
    kappa: float | None
    kappa_linear: float | None
    alpha_ordinal: float | None
    alpha_nominal: float | None
    intervals: dict[str, tuple[float, float] | None]
    confusion: list[list[int]]
    reference: dict | None = None


@dataclass
class RunPair:
    run: str
    a: float | None
    b: float | None
    answers: int  # answers both sides score


@dataclass
class RankingAgreement:
    measure: str
    runs: list[RunPair]
    kendall_tau: float | None  # None with fewer than two runs scored by both


@dataclass
class AnswerCalibration:
    a: str
    b: str
    aspects: list[AspectAgreement]
    rankings: list[RankingAgreement] = field(default_factory=list)

    def as_json(self) -> dict:
        return asdict(self)


def _side_values(project, sources: Sources, aspect: str, runs) -> dict[tuple[int, int], int]:
    """(answer pk, target pk) → the side's combined value."""
    key = _TARGET[aspect]
    judgments = AnswerJudgment.objects.filter(answer__run__in=runs, aspect=aspect)
    rows = list(sources.judgments(judgments).values_list("answer_id", key, "value"))
    adjudicated = []
    if sources.adjudicated:
        adjudicated = list(
            AnswerAdjudication.objects.filter(answer__run__in=runs, aspect=aspect).values_list(
                "answer_id", key, "value"
            )
        )
    index: dict[tuple[int, int], int] = {}
    for answer, target, _v in [*rows, *adjudicated]:
        index.setdefault((answer, target), len(index))
    combined = measures.combine_values(
        len(index),
        np.array([index[(a, t)] for a, t, _v in rows], dtype=np.int64),
        np.array([v for _a, _t, v in rows], dtype=np.int64),
        np.array([index[(a, t)] for a, t, _v in adjudicated], dtype=np.int64),
        np.array([v for _a, _t, v in adjudicated], dtype=np.int64),
    )
    return {k: int(combined[i]) for k, i in index.items() if combined[i] >= 0}


def aspect_agreement(project, a: Sources, b: Sources, aspect: str, runs) -> AspectAgreement:
    values_a = _side_values(project, a, aspect, runs)
    values_b = _side_values(project, b, aspect, runs)
    shared = sorted(set(values_a) & set(values_b))
    x = np.array([values_a[k] for k in shared], dtype=np.int64)
    y = np.array([values_b[k] for k in shared], dtype=np.int64)
    n_categories = TOP_VALUE[Aspect(aspect)] + 1
    found = compare_raters(x, y, n_categories, n_resamples=RESAMPLES)
    nominal = None
    if shared:
        data = labels(
            np.repeat(np.arange(len(shared)), 2),
            np.tile([0, 1], len(shared)),
            np.column_stack([x, y]).ravel(),
            n_categories=n_categories,
            n_items=len(shared),
            n_annotators=2,
        )
        nominal = krippendorff_alpha(data, level="nominal")
    return AspectAgreement(
        aspect=aspect,
        levels=LEVELS[aspect],
        n=len(shared),
        n_a=len(values_a),
        n_b=len(values_b),
        **{name: found[name]["value"] for name in _FIGURES},
        alpha_nominal=nominal,
        intervals={name: found[name]["interval"] for name in _FIGURES},
        confusion=found["confusion"],
        reference=REFERENCE.get(aspect),
    )


def ranking_agreement(runs, a: Sources, b: Sources) -> list[RankingAgreement]:
    """Per measure, each run's mean on both sides (over the answers both score) and
    Kendall's τ between the two orders."""
    scored = [(run, run_scores(run, a), run_scores(run, b)) for run in runs]
    rankings = []
    for measure in RANKING_MEASURES:
        pairs = []
        for run, side_a, side_b in scored:
            va, vb = side_a.values[measure], side_b.values[measure]
            both = np.isfinite(va) & np.isfinite(vb)
            n = int(both.sum())
            pairs.append(
                RunPair(
                    run.name,
                    float(va[both].mean()) if n else None,
                    float(vb[both].mean()) if n else None,
                    n,
                )
            )
        kept = [p for p in pairs if p.answers]
        tau = kendall_tau([p.a for p in kept], [p.b for p in kept]) if len(kept) >= 2 else None
        rankings.append(RankingAgreement(measure, pairs, tau))
    return rankings


def default_judge(project) -> str | None:
    """The first judge (``judge:<slug>``, its latest version) of the project, if any."""
    return next(
        (c for c in source_choices(project) if c.startswith("judge:") and "@" not in c), None
    )


def calibrate_answers(
    project, a: str = "people", b: str | None = None, runs: list[str] | None = None
) -> AnswerCalibration:
    """Side ``a`` against side ``b`` (default: the first judge) on the answers of the
    runs named (default: every active answer run). ``SourcesError`` for a side naming
    nothing of the project, the same side twice, or an unknown run."""
    b = b or default_judge(project)
    if not b:
        raise SourcesError(_("This project has no judge."))
    first, second = resolve_sources(project, a), resolve_sources(project, b)
    if first.key == second.key:
        raise SourcesError(_("Choose two different sides."))
    chosen = AnswerRun.objects.filter(project=project)
    if runs:
        missing = sorted(
            set(runs) - set(chosen.filter(name__in=runs).values_list("name", flat=True))
        )
        if missing:
            raise SourcesError(
                _("No answer run %(names)s in this project.") % {"names": ", ".join(missing)}
            )
        chosen = chosen.filter(name__in=runs)
    else:
        chosen = chosen.active()
    chosen = list(chosen.order_by("name"))
    return AnswerCalibration(
        a=first.text,
        b=second.text,
        aspects=[aspect_agreement(project, first, second, aspect, chosen) for aspect in ASPECTS],
        rankings=ranking_agreement(chosen, first, second),
    )
