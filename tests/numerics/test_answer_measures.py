"""Answer measures on small examples worked by hand (the definitions in docs/measures.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from numerics.answers import (
    UNJUDGED,
    Citations,
    citation_measures,
    combine_values,
    crag_measures,
    mean_defined,
    nugget_scores,
)

U = UNJUDGED


def same(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def test_nugget_scores_all_vital_strict_weak():
    # Answer 0: vital support, vital partial, okay not, okay support.
    #   All strict  = (1 + 0 + 0 + 1) / 4 = 0.5;  All weak = (1 + .5 + 0 + 1) / 4 = 0.625
    #   Vital strict = (1 + 0) / 2 = 0.5;          Vital weak = (1 + .5) / 2 = 0.75
    # Answer 1: okay partial, okay unjudged → no score; no vital nugget.
    # Answer 2: one vital nugget, not supported → every score 0.
    # Answer 3: its query has no nugget → no score.
    answer = [0, 0, 0, 0, 1, 1, 2]
    value = [2, 1, 0, 2, 1, U, 0]
    vital = [True, True, False, False, False, False, True]
    scores = nugget_scores(4, answer, value, vital)
    nan = math.nan
    assert same(scores["all_strict"], [0.5, nan, 0.0, nan])
    assert same(scores["all_weak"], [0.625, nan, 0.0, nan])
    assert same(scores["vital_strict"], [0.5, nan, 0.0, nan])
    assert same(scores["vital_weak"], [0.75, nan, 0.0, nan])


def test_citation_coverage_support_recall_and_validity():
    # Answer 0: s0 cited by c0 (full, valid) and c1 (partial, invalid); s1 cited by c2
    # (none, valid); s2 uncited, needs a citation; s3 uncited, needs none.
    #   coverage (needed) = cited 2 / needing 3 (s0, s1, s2) = 2/3; coverage (all) = 2/4
    #   support precision strict = 1 full / 3 = 1/3; weak = (1 + .5 + 0) / 3 = 0.5
    #   citation recall = needing sentences some citation fully supports (s0) 1 / 3
    #   validity = 2 valid / 3 citations
    # Answer 1: s4 uncited, not judged → coverage (needed), recall undefined; no citation.
    # Answer 2: s5 cited by c3 (support not judged, invalid) → coverage 1; precision and
    #   recall undefined; validity 0 (no judgement needed).
    c = Citations(
        n_answers=3,
        sentence_answer=np.array([0, 0, 0, 0, 1, 2]),
        needs=np.array([U, U, 1, 0, U, U]),
        citation_sentence=np.array([0, 0, 1, 5]),
        support=np.array([2, 1, 0, U]),
        valid=np.array([True, False, True, False]),
    )
    m = citation_measures(c)
    nan = math.nan
    assert same(m["coverage_needed"], [2 / 3, nan, 1.0])
    assert same(m["coverage_all"], [0.5, 0.0, 1.0])
    assert same(m["support_precision_strict"], [1 / 3, nan, nan])
    assert same(m["support_precision_weak"], [0.5, nan, nan])
    assert same(m["citation_recall"], [1 / 3, nan, nan])
    assert same(m["citation_validity"], [2 / 3, nan, 0.0])


def test_crag_score_and_mean_over_judged_answers():
    # perfect 1, acceptable 0.5, missing 0, incorrect −1, one unjudged:
    # mean = (1 + 0.5 + 0 − 1) / 4 = 0.125 over 4 answers.
    m = crag_measures(np.array([3, 2, 1, 0, U]))
    assert same(m["crag"], [1.0, 0.5, 0.0, -1.0, math.nan])
    assert same(m["correct"], [1, 1, 0, 0, math.nan])
    assert mean_defined(m["crag"]) == (0.125, 4)
    assert mean_defined(np.array([math.nan])) == (None, 0)


@pytest.mark.parametrize(
    ("values", "expected"),
    [([2], 2), ([2, 1], 1), ([2, 2, 0], 2), ([0, 2, 1], 1), ([1, 2, 2, 0], 1)],
)
def test_annotators_values_combine_to_the_low_median(values, expected):
    out = combine_values(2, [1] * len(values), values)
    assert out.tolist() == [U, expected]


def test_an_adjudicated_value_replaces_the_annotators():
    out = combine_values(
        3, [0, 0, 1], [2, 2, 0], adjudicated_target=[0, 2], adjudicated_value=[1, 0]
    )
    assert out.tolist() == [1, 0, 0]
