"""Significance tests against scipy and statsmodels; bootstrap reproducibility."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from numerics.significance import (
    QUERY_BLOCK,
    WEIGHT_CELLS,
    betainc,
    bootstrap_ci,
    bootstrap_means,
    diff_ci,
    holm,
    means_of_sums,
    paired_randomization_test,
    paired_t_test,
    resample_sums,
    t_sf_two_sided,
    wins_ties_losses,
)

scores = st.lists(st.floats(0, 1, allow_nan=False, width=32), min_size=2, max_size=60)


@settings(max_examples=300, deadline=None)
@given(st.floats(0.05, 500), st.floats(0.05, 500), st.floats(0, 1))
@example(0.5, 0.5, 1 - 2**-53)
def test_incomplete_beta_matches_scipy(a, b, x):
    """Above x = 1/2 the reference is scipy's 1 − I_{1−x}(b, a), 1 − x being exact there:
    scipy's I_x(a, b) itself loses digits next to 1 (at a = b = 1/2, x = 1 − 2⁻⁵³ it
    gives 1 − 9.5e-9 where the value is 1 − (2/π)·asin(2⁻²⁶·√2) = 1 − 6.7e-9)."""
    from scipy import special

    expected = special.betainc(a, b, x) if x <= 0.5 else 1 - special.betainc(b, a, 1 - x)
    assert betainc(a, b, x) == pytest.approx(expected, abs=1e-12, rel=1e-10)


@pytest.mark.parametrize("x", [0.0, 1e-12, 0.25, 0.5, 0.9, 1 - 1e-9, 1 - 2**-53, 1.0])
def test_incomplete_beta_at_one_half_is_the_arcsine_law(x):
    """I_x(1/2, 1/2) = (2/π)·asin(√x) = 1 − (2/π)·asin(√(1 − x)) (the second form keeps
    its digits next to 1, where √x rounds)."""
    below = 2 / math.pi * math.asin(math.sqrt(x))
    complement = 2 / math.pi * math.asin(math.sqrt(1 - x))
    assert betainc(0.5, 0.5, x) == pytest.approx(below if x <= 0.5 else 1 - complement, abs=1e-15)
    assert 1 - betainc(0.5, 0.5, x) == pytest.approx(complement, rel=1e-6, abs=1e-15)


@settings(max_examples=300, deadline=None)
@given(scores, st.data())
def test_paired_t_matches_scipy(a, data):
    from scipy import stats

    b = data.draw(
        st.lists(st.floats(0, 1, allow_nan=False, width=32), min_size=len(a), max_size=len(a))
    )
    d = np.subtract(a, b)
    assume(np.std(d) > 1e-9 * max(1.0, np.abs(d).max()))
    t, p = paired_t_test(a, b)
    reference = stats.ttest_rel(a, b)
    assert t == pytest.approx(reference.statistic, rel=1e-9)
    # For |t| below ~1e-6 scipy's p rounds toward 1 (e.g. exactly 1.0 at t = 3e-10, df = 1,
    # where 1 − 2·atan(t)/π = 1 − 1.8e-10); those are checked against closed forms below.
    if abs(t) > 1e-6:
        assert p == pytest.approx(reference.pvalue, abs=1e-10)


@settings(max_examples=300, deadline=None)
@given(st.floats(1e-12, 50))
def test_t_p_values_match_closed_forms_down_to_tiny_t(t):
    """df = 1 (Cauchy): p = 1 − 2·atan|t|/π; df = 2: p = 1 − |t|/√(2 + t²)."""
    assert t_sf_two_sided(t, 1) == pytest.approx(1 - 2 * math.atan(t) / math.pi, abs=1e-14)
    assert t_sf_two_sided(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t), abs=1e-14)


@pytest.mark.parametrize("n", [2, 3, 5, 30, 1000])
def test_paired_t_matches_scipy_at_fixed_sizes(n):
    from scipy import stats

    rng = np.random.default_rng(n)
    for shift in [0.0, 0.05, 0.5]:
        a = rng.random(n)
        b = a - shift + rng.normal(0, 0.2, n)
        t, p = paired_t_test(a, b)
        reference = stats.ttest_rel(a, b)
        assert t == pytest.approx(reference.statistic, rel=1e-12)
        assert p == pytest.approx(reference.pvalue, abs=1e-10, rel=1e-9)


def test_paired_t_edge_cases():
    assert paired_t_test([0.5], [0.1]) is None
    assert paired_t_test([0.5, 0.5], [0.5, 0.5]) == (0.0, 1.0)
    assert paired_t_test([0.6, 0.7], [0.5, 0.6]) == (float("inf"), 0.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30))
def test_holm_matches_statsmodels(p):
    from statsmodels.stats.multitest import multipletests

    # multipletests runs gc.collect() on every call (~40 ms in a test session): skip it.
    with mock.patch("gc.collect"):
        expected = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm(p), expected, rtol=0, atol=1e-12)


def test_exact_randomization_by_hand():
    # d = (1, 2, 3): the 8 sign patterns give |means| 2, 4/3, 2/3, 0, 0, 2/3, 4/3, 2;
    # two of them reach the observed 2.
    assert paired_randomization_test([1, 2, 3], [0, 0, 0]) == pytest.approx(2 / 8)
    assert paired_randomization_test([1, 1], [1, 1]) == 1.0


def test_sampled_randomization_agrees_with_scipy_permutation_test():
    from scipy import stats

    rng = np.random.default_rng(3)
    a = rng.random(40)
    b = a - 0.05 + rng.normal(0, 0.15, 40)
    ours = paired_randomization_test(a, b, n_resamples=20_000, seed=1)
    reference = stats.permutation_test(
        (a, b),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        n_resamples=20_000,
        random_state=1,
    ).pvalue
    assert ours == pytest.approx(reference, abs=0.02)
    assert paired_randomization_test(a, b, seed=5) == paired_randomization_test(a, b, seed=5)


def test_bootstrap_is_seeded_contains_the_mean_and_narrows():
    rng = np.random.default_rng(0)
    small, large = rng.random(30), rng.random(3000)
    assert bootstrap_ci(small, seed=4) == bootstrap_ci(small, seed=4)
    low, high = bootstrap_ci(small)
    assert low < small.mean() < high
    low_l, high_l = bootstrap_ci(large)
    assert high_l - low_l < (high - low) / 5
    assert bootstrap_ci([]) is None
    d_low, d_high = diff_ci(large, large - 0.1)
    assert d_low == pytest.approx(0.1) and d_high == pytest.approx(0.1)


def test_bootstrap_paths_draw_the_same_resamples():
    # Small problems use a cached weight matrix, large ones blocks of indices: same draws.
    values = np.random.default_rng(1).random(50)
    small = bootstrap_means(values, n_resamples=2_000, seed=3)
    assert WEIGHT_CELLS >= 50 * 2_000
    with mock.patch("numerics.significance.WEIGHT_CELLS", 0):
        blocked = bootstrap_means(values, n_resamples=2_000, seed=3)
    np.testing.assert_allclose(small, blocked, rtol=1e-12)
    assert not np.array_equal(small, bootstrap_means(values, n_resamples=2_000, seed=4))


def test_a_dashboard_of_ten_thousand_queries_keeps_its_resample_weights():
    # The largest project measured (10,000 queries) at the dashboard's 1,000 resamples:
    # the cached weights serve it (and a label's refresh recomputes only changed blocks),
    # not the blocked path, which took 0.54 s a run instead of 0.03 s.
    from metrics.evaluation import DASHBOARD_RESAMPLES

    values = np.random.default_rng(2).random((2, 10_000))
    sums = resample_sums(values, n_resamples=DASHBOARD_RESAMPLES)
    assert sums is not None
    with mock.patch("numerics.significance.WEIGHT_CELLS", 0):
        blocked = bootstrap_means(values, n_resamples=DASHBOARD_RESAMPLES)
    np.testing.assert_allclose(means_of_sums(sums, 10_000), blocked, rtol=1e-12)


def test_resample_sums_of_changed_blocks_equal_the_full_sums_bit_for_bit():
    rng = np.random.default_rng(5)
    n = 2 * QUERY_BLOCK + 77
    values = rng.random((3, n))
    sums = resample_sums(values, n_resamples=1_000)
    changed = values.copy()
    positions = [5, QUERY_BLOCK * 2 + 3]  # blocks 0 and 2; block 1 untouched
    changed[:, positions] = rng.random((3, 2))
    update = resample_sums(changed, n_resamples=1_000, previous=sums, changed=positions)
    full = resample_sums(changed, n_resamples=1_000)
    assert update.tobytes() == full.tobytes()
    assert np.array_equal(update[1], sums[1]) and not np.array_equal(update[0], sums[0])
    # The means are those of the weight matrix's draws.
    means = means_of_sums(full, n)
    reference = bootstrap_means(changed, n_resamples=1_000)
    np.testing.assert_array_equal(means, reference)


def test_wins_ties_losses():
    assert wins_ties_losses([1, 0.5, 0.2, 0.3], [0.5, 0.5, 0.3, 0.3]) == (1, 2, 1)
