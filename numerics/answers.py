"""Measures of RAG answers: nugget scores, citations and the CRAG grade. Numpy only.

Scales (the one place that knows them; values are small integers, the order is meaningful):

- nugget assignment: 0 ``not``, 1 ``partial``, 2 ``support`` (TREC RAG 2024);
- citation support: 0 ``none``, 1 ``partial``, 2 ``full`` (TREC RAG 2024 support);
- needs a citation (an uncited sentence): 0 ``no``, 1 ``yes``;
- CRAG grade: 0 ``incorrect``, 1 ``missing``, 2 ``acceptable``, 3 ``perfect``, scored
  −1, 0, 0.5, 1 (Yang et al., "CRAG — Comprehensive RAG Benchmark", 2024).

Every measure is per answer; an answer where a measure is undefined (its judgements are
not complete, or its denominator is 0) gets NaN and is left out of the run's mean (the
caller counts it). Definitions, each with its source, are in ``docs/measures.md``:

- nugget scores (Pradeep et al., "Initial Nugget Evaluation Results for the TREC 2024 RAG
  Track with the AutoNuggetizer Framework", 2024): over the query's nuggets (``all``) or
  its vital ones, ``strict`` counts support as 1 and anything else 0, ``weak`` counts
  support 1 and partial 0.5; the score is their mean over the nuggets;
- citation coverage: sentences with a citation ÷ sentences needing one (the cited ones and
  the uncited ones judged to need one), and ÷ all sentences;
- citation support precision: citations judged full ÷ citations (weak: partial = 0.5);
  citation recall: sentences needing a citation that some citation fully supports ÷
  sentences needing one;
- citation validity: citations whose span reaches the query's relevant gold evidence ÷
  citations (no judgement needed);
- CRAG: the grade's score; correct: 1 for perfect or acceptable, else 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UNJUDGED = -1

NUGGET_LEVELS = ("not", "partial", "support")
SUPPORT_LEVELS = ("none", "partial", "full")
NEEDS_LEVELS = ("no", "yes")
CRAG_LEVELS = ("incorrect", "missing", "acceptable", "perfect")
CRAG_SCORES = np.array([-1.0, 0.0, 0.5, 1.0])
# Weak credit of each level of a three-level scale: 0, 0.5, 1.
WEAK = np.array([0.0, 0.5, 1.0])

NUGGET_MEASURES = ("all_strict", "all_weak", "vital_strict", "vital_weak")
CITATION_MEASURES = (
    "coverage_needed",
    "coverage_all",
    "support_precision_strict",
    "support_precision_weak",
    "citation_recall",
    "citation_validity",
)
CRAG_MEASURES = ("crag", "correct")
MEASURES = (*NUGGET_MEASURES, *CITATION_MEASURES, *CRAG_MEASURES)
# Measures that stand on the answers and the gold evidence alone (no judgement).
WITHOUT_JUDGEMENT = ("coverage_all", "citation_validity")


def _ratio(top: np.ndarray, bottom: np.ndarray, defined: np.ndarray | None = None) -> np.ndarray:
    """top / bottom where bottom > 0 (and ``defined``), NaN elsewhere."""
    top = np.asarray(top, dtype=np.float64)
    bottom = np.asarray(bottom, dtype=np.float64)
    ok = bottom > 0
    if defined is not None:
        ok &= defined
    out = np.full(top.shape, np.nan)
    np.divide(top, bottom, out=out, where=ok)
    return out


def _sums(group: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(group, weights=values.astype(np.float64), minlength=n)[:n]


def _counts(group: np.ndarray, n: int, mask: np.ndarray | None = None) -> np.ndarray:
    group = group if mask is None else group[mask]
    return np.bincount(group, minlength=n)[:n].astype(np.int64)


def nugget_scores(
    n_answers: int, answer: np.ndarray, value: np.ndarray, vital: np.ndarray
) -> dict[str, np.ndarray]:
    """The four nugget scores of each answer from its (nugget, value) pairs: one pair per
    nugget of the answer's query, ``value`` the assignment (0–2) or ``UNJUDGED``.

    An answer with an unjudged nugget has no score (NaN); ``vital_*`` is NaN for an
    answer whose query has no vital nugget, every score NaN for one with no nugget."""
    answer = np.asarray(answer, dtype=np.int64)
    value = np.asarray(value, dtype=np.int64)
    vital = np.asarray(vital, dtype=bool)
    judged = value >= 0
    strict = (value == 2).astype(np.float64)
    weak = np.where(judged, WEAK[np.clip(value, 0, 2)], 0.0)
    complete = _counts(answer, n_answers, ~judged) == 0
    scores = {}
    for name, keep in (("all", np.ones(answer.size, dtype=bool)), ("vital", vital)):
        n = _counts(answer, n_answers, keep)
        scores[f"{name}_strict"] = _ratio(_sums(answer[keep], strict[keep], n_answers), n, complete)
        scores[f"{name}_weak"] = _ratio(_sums(answer[keep], weak[keep], n_answers), n, complete)
    return scores


@dataclass(frozen=True)
class Citations:
    """An answer run's sentences and citations as arrays.

    Sentences: ``sentence_answer`` (answer index of each), ``needs`` (the judgement of an
    uncited sentence: 0/1, or ``UNJUDGED``; ignored for cited ones). Citations:
    ``citation_sentence`` (sentence index), ``support`` (0–2 or ``UNJUDGED``),
    ``valid`` (whether the cited span reaches the relevant gold evidence)."""

    n_answers: int
    sentence_answer: np.ndarray
    needs: np.ndarray
    citation_sentence: np.ndarray
    support: np.ndarray
    valid: np.ndarray


def citation_measures(c: Citations) -> dict[str, np.ndarray]:
    """Coverage (of the sentences needing a citation, of all), support precision (strict,
    weak), citation recall and validity of each answer; NaN where undefined."""
    n, n_sentences = c.n_answers, c.sentence_answer.size
    sentence_answer = np.asarray(c.sentence_answer, dtype=np.int64)
    citation_sentence = np.asarray(c.citation_sentence, dtype=np.int64)
    support = np.asarray(c.support, dtype=np.int64)
    citation_answer = sentence_answer[citation_sentence]
    cited = np.bincount(citation_sentence, minlength=n_sentences)[:n_sentences] > 0
    needs = np.asarray(c.needs, dtype=np.int64)
    uncited_unjudged = ~cited & (needs < 0)
    needing = cited | (needs == 1)
    needs_known = _counts(sentence_answer, n, uncited_unjudged) == 0
    support_known = _counts(citation_answer, n, support < 0) == 0
    full = np.zeros(n_sentences, dtype=bool)
    full[citation_sentence[support == 2]] = True
    n_cited = _counts(sentence_answer, n, cited)
    n_needing = _counts(sentence_answer, n, needing)
    n_citations = _counts(citation_answer, n)
    weak = np.where(support >= 0, WEAK[np.clip(support, 0, 2)], 0.0)
    return {
        "coverage_needed": _ratio(n_cited, n_needing, needs_known),
        "coverage_all": _ratio(n_cited, _counts(sentence_answer, n)),
        "support_precision_strict": _ratio(
            _counts(citation_answer, n, support == 2), n_citations, support_known
        ),
        "support_precision_weak": _ratio(
            _sums(citation_answer, weak, n), n_citations, support_known
        ),
        "citation_recall": _ratio(
            _counts(sentence_answer, n, needing & full),
            n_needing,
            needs_known & support_known,
        ),
        "citation_validity": _ratio(
            _counts(citation_answer, n, np.asarray(c.valid, dtype=bool)), n_citations
        ),
    }


def crag_measures(grade: np.ndarray) -> dict[str, np.ndarray]:
    """The CRAG score and correctness of each answer from its grade (0–3, ``UNJUDGED``)."""
    grade = np.asarray(grade, dtype=np.int64)
    judged = grade >= 0
    score = np.where(judged, CRAG_SCORES[np.clip(grade, 0, 3)], np.nan)
    correct = np.where(judged, (grade >= 2).astype(np.float64), np.nan)
    return {"crag": score, "correct": correct}


def mean_defined(values: np.ndarray) -> tuple[float | None, int]:
    """The mean over the answers where a measure is defined, and how many those are."""
    values = np.asarray(values, dtype=np.float64)
    kept = values[np.isfinite(values)]
    return (float(kept.mean()) if kept.size else None), int(kept.size)


def combine_values(
    n_targets: int,
    target: np.ndarray,
    value: np.ndarray,
    adjudicated_target: np.ndarray | None = None,
    adjudicated_value: np.ndarray | None = None,
) -> np.ndarray:
    """One value per target from its annotators' values: the lead's adjudicated value
    where there is one, else the *low median* of the annotators' values (the lower of the
    two middle ones: one annotator's value as it is, two annotators' the lower, so a
    claim counts as supported only when the judges who saw it agree it is);
    ``UNJUDGED`` for a target nobody judged."""
    target = np.asarray(target, dtype=np.int64)
    value = np.asarray(value, dtype=np.int64)
    out = np.full(n_targets, UNJUDGED, dtype=np.int64)
    if target.size:
        order = np.lexsort((value, target))
        target, value = target[order], value[order]
        first = np.flatnonzero(np.r_[True, target[1:] != target[:-1]])
        size = np.diff(np.r_[first, target.size])
        out[target[first]] = value[first + (size - 1) // 2]
    if adjudicated_target is not None and adjudicated_value is not None:
        out[np.asarray(adjudicated_target, dtype=np.int64)] = np.asarray(
            adjudicated_value, dtype=np.int64
        )
    return out
