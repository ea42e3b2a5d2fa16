"""Rank correlations of two system orderings: τ-b, τ_AP, Pearson and Spearman."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.rank_correlation import kendall_tau, pearson, spearman, tau_ap

values = st.lists(st.integers(0, 6).map(lambda v: v / 6), min_size=2, max_size=12)


@given(st.data())
def test_kendall_pearson_and_spearman_equal_scipy(data):
    from scipy.stats import kendalltau, pearsonr, spearmanr

    x = data.draw(values)
    y = data.draw(
        st.lists(st.integers(0, 6).map(lambda v: v / 6), min_size=len(x), max_size=len(x))
    )
    if len(set(x)) > 1 and len(set(y)) > 1:
        assert kendall_tau(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
        assert pearson(x, y) == pytest.approx(pearsonr(x, y).statistic, abs=1e-12)
        assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    else:
        assert kendall_tau(x, y) is None and pearson(x, y) is None


def test_tau_ap_worked_examples():
    """Yilmaz, Aslam & Robertson (2008), §3: one swap costs τ the same wherever it is, τ_AP
    more at the top. Four systems, reference order A > B > C > D (values 4, 3, 2, 1):
    estimate B > A > C > D: C(2) = 0, C(3) = 2, C(4) = 3 → τ_AP = 2/3 (0/1 + 2/2 + 3/3) − 1
    = 1/3; estimate A > B > D > C: C(2) = 1, C(3) = 2, C(4) = 2 → 2/3 (1 + 1 + 2/3) − 1 =
    7/9. τ is 2/3 for both."""
    reference = [4, 3, 2, 1]
    top_swap, bottom_swap = [3, 4, 2, 1], [4, 3, 1, 2]
    assert tau_ap(reference, top_swap) == pytest.approx(1 / 3)
    assert tau_ap(reference, bottom_swap) == pytest.approx(7 / 9)
    assert kendall_tau(reference, top_swap) == pytest.approx(2 / 3)
    assert kendall_tau(reference, bottom_swap) == pytest.approx(2 / 3)
    assert tau_ap(reference, reference) == 1.0
    assert tau_ap(reference, reference[::-1]) == -1.0
    assert tau_ap([1], [1]) is None


@given(st.permutations(list(range(8))))
def test_tau_ap_is_tau_when_the_errors_are_spread_evenly_and_bounded(order):
    """Without ties τ_AP lies in [−1, 1]; it is 1 only for the same order. With two
    items it is τ itself (the paper: τ_AP = τ when N = 2)."""
    reference = np.arange(8, 0, -1, dtype=float)
    estimate = np.empty(8)
    estimate[np.array(order)] = reference
    value = tau_ap(reference, estimate)
    assert -1.0 <= value <= 1.0
    assert (value == 1.0) == (list(order) == list(range(8)))
    assert tau_ap([2, 1], [1, 2]) == kendall_tau([2, 1], [1, 2]) == -1.0


# Ten systems scored twice, and τ_AP of the second scoring against the first, as published
# with the reference implementation of Urbano & Marrero ("The treatment of ties in AP
# correlation", ICTIR 2017: the R package ircor's tests, to four decimals).
PUBLISHED = [
    (
        [0.897, 0.372, 0.908, 0.898, 0.661, 0.062, 0.177, 0.384, 0.498, 0.992],
        [0.82, 0.406, 0.817, 0.953, 0.673, 0.073, 0.364, 0.547, 0.589, 0.988],
        0.8519,
    ),
    (
        [0.266, 0.573, 0.202, 0.945, 0.629, 0.206, 0.687, 0.77, 0.718, 0.38],
        [0.263, 0.843, 0.728, 0.928, 0.08, 0.114, 0.467, 0.641, 0.973, 0.644],
        0.2504,
    ),
    (
        [0.185, 0.573, 0.944, 0.129, 0.468, 0.553, 0.761, 0.405, 0.976, 0.445],
        [0.845, 0.272, 0.275, 0.924, 0.605, 0.334, 0.162, 0.872, 0.018, 0.25],
        -0.6971,
    ),
]


@pytest.mark.parametrize("reference, estimate, published", PUBLISHED)
def test_tau_ap_equals_the_published_values(reference, estimate, published):
    from scipy.stats import kendalltau

    assert tau_ap(reference, estimate) == pytest.approx(published, abs=5e-5)
    assert kendall_tau(reference, estimate) == pytest.approx(
        kendalltau(reference, estimate).statistic, abs=1e-12
    )
