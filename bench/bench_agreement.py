"""Agreement coefficients against the reference packages, same data, same numbers.

    .venv/bin/python -m bench agreement

5 annotators × 100,000 items, grades 0–3 with 60 % missing (seeded). Krippendorff's alpha
(three levels) against the ``krippendorff`` package; Cohen's kappa of one pair against
scikit-learn; Fleiss' kappa against statsmodels. Median of REPEATS runs.
"""

from __future__ import annotations

import statistics
import time
import warnings

import numpy as np

N_ITEMS = 100_000
N_ANNOTATORS = 5
REPEATS = 5


def median_time(function) -> tuple[float, object]:
    times, result = [], None
    for _ in range(REPEATS):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    from numerics import agreement as ours

    rng = np.random.default_rng(5)
    truth = rng.integers(0, 4, N_ITEMS)
    matrix = np.where(
        rng.random((N_ANNOTATORS, N_ITEMS)) < 0.7,
        truth,
        rng.integers(0, 4, (N_ANNOTATORS, N_ITEMS)),
    ).astype(float)
    matrix[rng.random(matrix.shape) < 0.6] = np.nan
    annotator, item = np.nonzero(~np.isnan(matrix))
    grade = matrix[annotator, item].astype(int)
    data = ours.labels(item, annotator, grade, 4, N_ITEMS, N_ANNOTATORS)
    rows = []
    for level in ("nominal", "ordinal", "interval"):
        t_ours, v_ours = median_time(lambda level=level: ours.krippendorff_alpha(data, level=level))
        t_ref, v_ref = median_time(
            lambda level=level: krippendorff.alpha(
                reliability_data=matrix, level_of_measurement=level, value_domain=[0, 1, 2, 3]
            )
        )
        assert abs(v_ours - v_ref) < 1e-9
        rows.append((f"Krippendorff's alpha, {level}", "krippendorff", t_ours, t_ref))
    both = ~np.isnan(matrix[0]) & ~np.isnan(matrix[1])
    a, b = matrix[0, both].astype(int), matrix[1, both].astype(int)
    confusion = np.bincount(a * 4 + b, minlength=16).reshape(4, 4)
    t_ours, v_ours = median_time(
        lambda: ours.cohen_kappa_from_confusion(
            np.bincount(a * 4 + b, minlength=16).reshape(4, 4), "quadratic"
        )
    )
    t_ref, v_ref = median_time(lambda: cohen_kappa_score(a, b, weights="quadratic"))
    assert abs(v_ours - v_ref) < 1e-9 and confusion.sum() == a.size
    rows.append(("Cohen's kappa, quadratic, one pair", "scikit-learn", t_ours, t_ref))
    t_ours, v_ours = median_time(lambda: ours.fleiss_kappa(data))
    m = v_ours["m"]

    def reference_fleiss():
        counts = ours.counts(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return sm_fleiss(counts[counts.sum(axis=1) == m], method="fleiss")

    t_ref, v_ref = median_time(reference_fleiss)
    assert abs(v_ours["value"] - v_ref) < 1e-9
    rows.append((f"Fleiss' kappa (items with m={m})", "statsmodels", t_ours, t_ref))
    print(
        f"{N_ANNOTATORS} annotators × {N_ITEMS:,} items, 60 % missing; "
        f"median of {REPEATS} runs; equal values asserted before timing is reported\n"
    )
    print("| coefficient | reference | Assay (s) | reference (s) | ratio |")
    print("|---|---|---:|---:|---:|")
    for name, reference, t_ours, t_ref in rows:
        print(f"| {name} | {reference} | {t_ours:.4f} | {t_ref:.4f} | {t_ours / t_ref:.2f} |")


if __name__ == "__main__":
    main()
