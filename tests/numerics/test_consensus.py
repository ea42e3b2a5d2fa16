import statistics
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.consensus import consensus_grades


def reference(grades, rule):
    if rule == "majority":
        counts = Counter(grades)
        best = max(counts.values())
        return max(g for g, c in counts.items() if c == best)
    if rule == "median":
        return statistics.median_low(grades)
    return max(grades) if rule == "max" else min(grades)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 3), max_size=6), min_size=1, max_size=20),
    st.sampled_from(["majority", "median", "max", "min"]),
    st.integers(1, 3),
)
def test_rules_match_the_obvious_definition(units, rule, min_annotators):
    unit = np.array([u for u, gs in enumerate(units) for _ in gs], dtype=np.int64)
    grade = np.array([g for gs in units for g in gs], dtype=np.int64)
    final, n = consensus_grades(unit, grade, len(units), rule, min_annotators)
    for u, gs in enumerate(units):
        assert n[u] == len(gs)
        expected = reference(gs, rule) if len(gs) >= min_annotators and gs else -1
        assert final[u] == expected


def test_adjudication_wins_even_below_the_minimum():
    final, _ = consensus_grades(
        np.array([0, 0, 1]),
        np.array([3, 3, 1]),
        3,
        "majority",
        2,
        adjudicated_unit=np.array([0, 1]),
        adjudicated_grade=np.array([1, 2]),
    )
    assert final.tolist() == [1, 2, -1]


def test_majority_tie_goes_to_the_higher_grade():
    final, _ = consensus_grades(np.array([0, 0]), np.array([1, 2]), 1)
    assert final.tolist() == [2]


def test_unknown_rule_is_an_error():
    with pytest.raises(ValueError, match="choose one of majority, median, max, min"):
        consensus_grades(np.array([0]), np.array([1]), 1, "mean")
