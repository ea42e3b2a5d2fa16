"""Uncertainty and significance for per-query scores. Numpy and the standard library only.

All functions take per-query values of one or two runs over the same queries (paired
arrays) and are seeded, so the same inputs always give the same interval or p-value.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

BLOCK_CELLS = 4_000_000  # resample matrices are built in blocks of at most this many cells


def _blocks(n_resamples: int, n: int):
    size = max(1, BLOCK_CELLS // max(n, 1))
    done = 0
    while done < n_resamples:
        step = min(size, n_resamples - done)
        yield step
        done += step


# Above this many cells (80 MB), resample in blocks instead of caching the weights. It
# holds 10,000 queries at 1,000 resamples (a dashboard at 1,000,000 documents): there the
# blocked path took 0.54 s a run against 0.03 s for the cached weights, and a label's
# refresh can recompute only the changed blocks (``resample_sums``' ``previous``).
WEIGHT_CELLS = 10_000_000


@functools.lru_cache(maxsize=2)
def _resample_weights(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each of n values is drawn in each resample, cached: the same matrix
    serves every measure and every run over the same n queries. Stored transposed,
    (n, n_resamples) in row order, so that the rows of a block of queries are one
    contiguous piece (a strided slice makes the threaded matrix product far slower)."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((n_resamples, n), dtype=np.float64)
    for done, step in _offsets(n_resamples, n):
        index = rng.integers(0, n, size=(step, n)) + (np.arange(step) * n)[:, None]
        weights[done : done + step] = np.bincount(index.ravel(), minlength=step * n).reshape(
            step, n
        )
    weights = np.ascontiguousarray(weights.T)
    weights.flags.writeable = False
    return weights


def resample_weights(n: int, n_resamples: int, seed: int = 0) -> np.ndarray | None:
    """The draw counts ``resample_sums`` uses for n values, (n, n_resamples), read-only;
    None when it does not keep them (more than ``WEIGHT_CELLS``)."""
    if n == 0 or n * n_resamples > WEIGHT_CELLS:
        return None
    return _resample_weights(n, n_resamples, seed)


def _offsets(n_resamples: int, n: int):
    done = 0
    for step in _blocks(n_resamples, n):
        yield done, step
        done += step


# Resample sums are added up per block of this many queries, in a fixed order, so that
# recomputing only the blocks whose queries changed gives the very same bits as
# recomputing everything (a dashboard refresh after one label does the former).
QUERY_BLOCK = 512


def resample_sums(
    values, *, n_resamples: int, seed: int = 0, previous=None, changed=None, weights=None
):
    """Per block of ``QUERY_BLOCK`` queries, Σ_k values[m, k]·W[k, r] over the block's
    queries k (W: ``_resample_weights``, draw counts), shape (blocks, measures,
    resamples); None when the weights are not kept (large problems).

    With ``previous`` (the sums of values that differ only at the positions ``changed``),
    only the blocks holding a changed position are recomputed: the result equals the full
    computation bit for bit, since each block's sum depends on that block alone.
    ``weights``: ``resample_weights(n, n_resamples, seed)``, when the caller keeps them.
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    n = values.shape[-1]
    if n == 0 or n * n_resamples > WEIGHT_CELLS:
        return None
    if weights is None:
        weights = _resample_weights(n, n_resamples, seed)
    n_blocks = -(-n // QUERY_BLOCK)
    if previous is None:
        sums = np.empty((n_blocks, values.shape[0], n_resamples))
        blocks = range(n_blocks)
    else:
        sums = previous.copy()
        blocks = np.unique(np.asarray(changed, dtype=np.int64) // QUERY_BLOCK).tolist()
    for block in blocks:
        sums[block] = _block_sum(
            values, weights, block * QUERY_BLOCK, min(n, (block + 1) * QUERY_BLOCK)
        )
    return sums


# OpenBLAS multiplies on one thread when a product has at most this many multiply-adds;
# larger ones wake its threads, which on shared cores costs tens of milliseconds a call
# (measured: a 512-query block 20–80 ms threaded, about 1 ms as products of this size).
ONE_THREAD_PRODUCT = 262_144


def _block_sum(values: np.ndarray, weights: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Σ over queries start..stop−1 of values[:, k]·weights[k], as products small enough
    for one thread, added in order (so the same block always gives the same bits)."""
    step = max(1, ONE_THREAD_PRODUCT // (values.shape[0] * weights.shape[1]))
    total = None
    for at in range(start, stop, step):
        part = slice(at, min(at + step, stop))
        product = values[:, part] @ weights[part]
        total = product if total is None else total + product
    return total


def means_of_sums(sums: np.ndarray, n: int) -> np.ndarray:
    """Resample means (measures, resamples) from ``resample_sums``: blocks added in order."""
    total = sums[0].copy()
    for block in sums[1:]:
        total += block
    return total / n


def bootstrap_means(values, *, n_resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement) of ``values``; ``values`` may
    be a matrix (one row per measure), resampled with the same draws.

    Resample r draws n indices i_r1..i_rn uniformly from 0..n−1 (numpy's PCG64 seeded
    with ``seed``, in blocks of at most BLOCK_CELLS indices) and gives
    mean_r = (1/n) Σ_k values[i_rk]. Small problems keep the draw counts as a cached
    weight matrix W (mean = W·values / n, summed per block of queries:
    ``resample_sums``); both paths use the same draws.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[-1]
    sums = resample_sums(values, n_resamples=n_resamples, seed=seed)
    if sums is not None:
        means = means_of_sums(sums, n)
        return means[0] if values.ndim == 1 else means
    rng = np.random.default_rng(seed)
    means = [
        values[..., rng.integers(0, n, size=(step, n))].mean(axis=-1)
        for step in _blocks(n_resamples, n)
    ]
    return np.concatenate(means, axis=-1)


def bootstrap_ci(
    values, *, n_resamples: int = 10_000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean (Efron & Tibshirani 1993, *An
    Introduction to the Bootstrap*, ch. 13): with mean*_1..mean*_B the means of B =
    ``n_resamples`` resamples with replacement, the interval is
    [Q((1−c)/2), Q((1+c)/2)] of the mean*_b (``np.quantile``, linear interpolation),
    c = ``confidence``. Same ``seed`` → same interval. None for no values."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return None
    means = bootstrap_means(values, n_resamples=n_resamples, seed=seed)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(low), float(high)


def bootstrap_cis(matrix, *, n_resamples: int = 10_000, confidence: float = 0.95, seed: int = 0):
    """Intervals for several rows at once (e.g. every measure of a run): (lows, highs)."""
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    if matrix.shape[1] == 0:
        return None
    return percentile_intervals(
        bootstrap_means(matrix, n_resamples=n_resamples, seed=seed), confidence
    )


def percentile_intervals(means: np.ndarray, confidence: float = 0.95):
    """(lows, highs): the percentile interval of each row of resample means."""
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha], axis=-1)
    return low, high


def diff_ci(a, b, **kwargs) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean paired difference: ``bootstrap_ci`` of
    d_i = a_i − b_i (resampling queries, keeping each pair together)."""
    return bootstrap_ci(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), **kwargs)


def paired_randomization_test(a, b, *, n_resamples: int = 10_000, seed: int = 0) -> float | None:
    """Two-sided paired randomization (sign-flip permutation) test of mean(a − b) = 0.

    Under the null each query's difference d_i = a_i − b_i is equally likely to have
    either sign (Fisher 1935; Smucker, Allan & Carterette 2007, CIKM). With
    T(s) = |(1/n) Σ s_i d_i| for signs s ∈ {−1, +1}^n and T_obs = |mean(d)|:

    - 2^n ≤ n_resamples: every s is enumerated and p = |{s : T(s) ≥ T_obs}| / 2^n —
      exact; p ≥ 2/2^n, since s = (1, …, 1) and its mirror −s both reach T_obs;
    - otherwise B = n_resamples sign vectors are drawn uniformly (seeded) and
      p = (|{b : T(s_b) ≥ T_obs}| + 1) / (B + 1), counting the observed assignment as
      one more draw (Phipson & Smyth 2010), so p is never 0 and the test stays valid.

    "≥" allows a tolerance of 1e-12 · max(1, T_obs) so that ties lost to rounding count.
    None for no queries.
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.size
    if n == 0:
        return None
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, observed)
    if 2**n <= n_resamples:
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
        means = np.abs((signs * d).mean(axis=1))
        return float(np.mean(means >= observed - tolerance))
    rng = np.random.default_rng(seed)
    hits = 0
    for step in _blocks(n_resamples, n):
        signs = rng.integers(0, 2, size=(step, n)) * 2 - 1
        hits += int(np.count_nonzero(np.abs((signs * d).mean(axis=1)) >= observed - tolerance))
    return (hits + 1) / (n_resamples + 1)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz's method,
    Numerical Recipes 3rd ed. §6.4)."""
    tiny, eps = 1e-300, 1e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b), via its continued fraction on the side
    where it converges fast (NR §6.4: x < (a+1)/(a+b+2), else the symmetry
    I_x(a, b) = 1 − I_{1−x}(b, a))."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf_two_sided(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with df degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).

    For small |t| that x is within rounding of 1 and 1 − x would lose its digits, so the
    complement 1 − I_{t²/(df+t²)}(1/2, df/2) is used, with t²/(df+t²) computed directly."""
    if math.isinf(t):
        return 0.0
    a, b = df / 2.0, 0.5
    x = df / (df + t * t)
    if x < (a + 1.0) / (a + b + 2.0):
        return betainc(a, b, x)
    return 1.0 - betainc(b, a, t * t / (df + t * t))


def paired_t_test(a, b) -> tuple[float, float] | None:
    """Two-sided paired t-test (Student 1908) of mean(a − b) = 0.

    d_i = a_i − b_i, t = mean(d) / (sd(d) / √n) with sd the n − 1 standard deviation,
    df = n − 1, p = P(|T_df| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2) (Abramowitz & Stegun
    26.7.1), with I the regularized incomplete beta of ``betainc``. Matches
    scipy.stats.ttest_rel to ~1e-12.

    Zero variance (every difference equal), where scipy gives nan: t = 0 and p = 1.0 when
    the differences are all 0 (nothing to detect), else t = ±inf and p = 0.0 (a constant
    nonzero shift). None for fewer than 2 queries.
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.size
    if n < 2:
        return None
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0 or not math.isfinite(sd):
        if mean == 0.0:
            return 0.0, 1.0
        return math.copysign(math.inf, mean), 0.0
    t = mean / (sd / math.sqrt(n))
    return t, t_sf_two_sided(t, n - 1)


def holm(pvalues) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values (Holm 1979): with p sorted ascending,
    p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j)), returned in the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def wins_ties_losses(a, b, eps: float = 1e-12) -> tuple[int, int, int]:
    """Queries where a beats b, ties (|a − b| ≤ eps) and loses."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return int((d > eps).sum()), int((np.abs(d) <= eps).sum()), int((d < -eps).sum())


@dataclass(frozen=True)
class BaselineTest:
    """A run's per-query values against the baseline's: means, the paired tests and
    Holm's correction (``p_holm`` for randomization, ``p_t_holm`` for t), the 95 %
    bootstrap interval of the mean difference [``low``, ``high``]."""

    mean: float
    delta: float
    wins: int
    ties: int
    losses: int
    p_randomization: float | None
    p_t: float | None
    low: float | None
    high: float | None
    p_holm: float | None = None
    p_t_holm: float | None = None
    significant: bool = False
    significant_t: bool = False

    @property
    def interval(self) -> tuple[float, float] | None:
        return None if self.low is None else (self.low, self.high)


def against_baseline(base, others, *, alpha: float = 0.05, seed: int = 0) -> list[BaselineTest]:
    """Each run's per-query values against the baseline's (same queries, same order):
    mean, delta, wins/ties/losses, the 95 % bootstrap interval of the difference, the
    paired randomization and t-tests, and both p-values after Holm's correction over the
    comparisons; ``significant`` when the randomization test's corrected p is below
    ``alpha`` (``significant_t``: the t-test's). ``numerics.comparison`` runs it for
    every comparison Assay makes."""
    base = np.asarray(base, dtype=np.float64)
    rows = []
    for values in others:
        values = np.asarray(values, dtype=np.float64)
        t = paired_t_test(values, base)
        interval = diff_ci(values, base, seed=seed)
        wins, ties, losses = wins_ties_losses(values, base)
        rows.append(
            BaselineTest(
                mean=float(values.mean()) if values.size else 0.0,
                delta=float(values.mean() - base.mean()) if values.size else 0.0,
                wins=wins,
                ties=ties,
                losses=losses,
                p_randomization=paired_randomization_test(values, base, seed=seed),
                p_t=t[1] if t else None,
                low=interval[0] if interval else None,
                high=interval[1] if interval else None,
            )
        )
    corrected = {}
    for key in ("p_randomization", "p_t"):
        known = [i for i, row in enumerate(rows) if getattr(row, key) is not None]
        adjusted = holm([getattr(rows[i], key) for i in known])
        corrected[key] = dict(zip(known, (float(p) for p in adjusted), strict=True))
    out = []
    for i, row in enumerate(rows):
        p_holm, p_t_holm = corrected["p_randomization"].get(i), corrected["p_t"].get(i)
        out.append(
            replace(
                row,
                p_holm=p_holm,
                p_t_holm=p_t_holm,
                significant=p_holm is not None and p_holm < alpha,
                significant_t=p_t_holm is not None and p_t_holm < alpha,
            )
        )
    return out
