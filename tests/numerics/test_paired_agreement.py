"""People against one rater, and Kendall's tau, against scikit-learn, krippendorff and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.agreement import compare_raters
from numerics.rank_correlation import kendall_tau

grades = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=60)


def reference(people, rater) -> dict:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    both = np.array([people, rater], dtype=float)
    return {
        "kappa_linear": cohen_kappa_score(people, rater, labels=range(4), weights="linear"),
        "kappa_quadratic": cohen_kappa_score(people, rater, labels=range(4), weights="quadratic"),
        "alpha_ordinal": krippendorff.alpha(
            reliability_data=both, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]
        ),
        "exact_agreement": float(np.mean(np.array(people) == np.array(rater))),
    }


@settings(max_examples=80, deadline=None)
@given(grades)
def test_every_coefficient_equals_the_reference_libraries(pairs):
    people, rater = [p for p, _ in pairs], [r for _, r in pairs]
    ours = compare_raters(people, rater, 4, n_resamples=50)
    with np.errstate(all="ignore"):
        expected = reference(people, rater)
    for name, value in expected.items():
        got = ours[name]["value"]
        if value is None or not np.isfinite(value):
            assert got is None, name
        else:
            assert got == pytest.approx(value, abs=1e-12), name


def test_confusion_precision_recall_and_intervals():
    people = [0, 0, 1, 1, 2, 2, 3, 3, 3, 0]
    rater = [0, 1, 1, 1, 2, 3, 3, 3, 2, 0]
    ours = compare_raters(people, rater, 4, n_resamples=500)
    confusion = np.array(ours["confusion"])
    assert confusion.sum() == 10 and confusion[3, 2] == 1 and confusion[0, 1] == 1
    grade3 = ours["per_grade"][3]
    assert grade3["precision"]["value"] == pytest.approx(2 / 3)  # rater said 3 three times
    assert grade3["recall"]["value"] == pytest.approx(2 / 3)  # people said 3 three times
    low, high = ours["exact_agreement"]["interval"]
    assert low <= 0.7 <= high and 0 <= low < high <= 1
    again = compare_raters(people, rater, 4, n_resamples=500)
    assert again == ours  # seeded


def test_undefined_figures_are_none():
    ours = compare_raters([2, 2, 2], [2, 2, 2], 4, n_resamples=20)
    assert ours["exact_agreement"]["value"] == 1.0
    assert ours["kappa_linear"]["value"] is None and ours["alpha_ordinal"]["value"] is None
    assert ours["per_grade"][0]["precision"]["value"] is None
    empty = compare_raters([], [], 4)
    assert empty["n"] == 0 and empty["kappa_quadratic"] == {"value": None, "interval": None}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=25))
def test_kendall_tau_equals_scipy(pairs):
    from scipy.stats import kendalltau

    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    expected = kendalltau(x, y).statistic
    got = kendall_tau(x, y)
    if not np.isfinite(expected):
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)
