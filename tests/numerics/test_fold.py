"""Folding candidates that show the same text: a rule that holds for all spans."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.spans import fold_overlapping

spans = st.tuples(st.integers(0, 2), st.integers(0, 40), st.integers(1, 30)).map(
    lambda t: (t[0], t[1], t[1] + t[2])
)


def folds(a, b, theta) -> bool:
    if a[0] != b[0]:
        return False
    overlap = min(a[2], b[2]) - max(a[1], b[1])
    inside = (b[1] <= a[1] and a[2] <= b[2]) or (a[1] <= b[1] and b[2] <= a[2])
    shorter = min(a[2] - a[1], b[2] - b[1])
    return inside or (overlap > 0 and overlap >= Fraction(str(theta)) * shorter)


@settings(max_examples=300, deadline=None)
@given(st.lists(spans, max_size=25), st.sampled_from([0.1, 0.5, 0.75, 1.0]))
def test_every_span_folds_into_a_representative_and_representatives_stay_apart(items, theta):
    document = [d for d, _s, _e in items]
    start = [s for _d, s, _e in items]
    end = [e for _d, _s, e in items]
    rep = fold_overlapping(document, start, end, theta)
    assert len(rep) == len(items)
    representatives = sorted(set(rep.tolist()))
    for index, r in enumerate(rep.tolist()):
        assert rep[r] == r  # a representative stands for itself
        assert items[r][2] - items[r][1] >= items[index][2] - items[index][1]
        if r != index:
            assert folds(items[index], items[r], theta)
    for i in representatives:
        for j in representatives:
            if i < j:
                assert not folds(items[i], items[j], theta)


def test_worked_example_and_bad_threshold():
    # [0,100) holds [0,60); [50,110) shares 50 of its 60 characters with [0,100).
    rep = fold_overlapping([1, 1, 1, 1], [0, 0, 50, 100], [100, 60, 110, 200], 0.5)
    assert rep.tolist() == [0, 0, 0, 3]
    with pytest.raises(ValueError, match="share in"):
        fold_overlapping([1], [0], [5], 0)
