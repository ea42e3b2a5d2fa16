"""People against one other rater (an LLM judge, an imported assessor) on the items both graded.

Every figure comes with a percentile bootstrap interval over items: resample r draws n
items with replacement (numpy's PCG64, ``seed``), its confusion matrix is one
``bincount``, and every figure of every resample follows from the stack of confusion
matrices at once — Cohen's kappa from ``kappa``'s weights, Krippendorff's alpha from
``alpha``'s distances (two raters who both graded every item: the coincidence matrix is
the confusion matrix plus its transpose). Figures undefined in a resample are left out of
its interval; a figure undefined on the data is None.
"""

from __future__ import annotations

import numpy as np

from .alpha import DISTANCES, alpha_batch
from .kappa import KAPPA_WEIGHTS, cohen_kappa_from_confusion, confusion_matrix
from .table import check_domain, undefined_as_none


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float] | None:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)


def _kappas(o: np.ndarray, weights: str | None) -> np.ndarray:
    """Cohen's kappa of each confusion matrix of a stack (R × C × C); NaN where undefined."""
    w = KAPPA_WEIGHTS[weights](*np.indices(o.shape[1:]))
    total = o.sum(axis=(1, 2))
    safe = np.where(total > 0, total, 1)
    expected = o.sum(axis=2)[:, :, None] * o.sum(axis=1)[:, None, :] / safe[:, None, None]
    denominator = (w * expected).sum(axis=(1, 2))
    observed = (w * o).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = 1.0 - observed / denominator
    kappa[(total == 0) | (denominator == 0)] = np.nan
    return kappa


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1), np.nan)


def _figures(o: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Every figure of a stack of confusion matrices (rows: people, columns: the rater)."""
    total = o.sum(axis=(1, 2))
    diagonal = np.diagonal(o, axis1=1, axis2=2)
    figures = {
        "exact_agreement": _ratio(diagonal.sum(axis=1), total),
        "kappa": _kappas(o, None),
        "kappa_linear": _kappas(o, "linear"),
        "kappa_quadratic": _kappas(o, "quadratic"),
        "alpha_ordinal": alpha_batch(o + o.transpose(0, 2, 1), DISTANCES["ordinal"], values),
    }
    for grade in range(o.shape[1]):
        figures[f"precision_{grade}"] = _ratio(diagonal[:, grade], o[:, :, grade].sum(axis=1))
        figures[f"recall_{grade}"] = _ratio(diagonal[:, grade], o[:, grade, :].sum(axis=1))
    return figures


def compare_raters(
    people,
    rater,
    n_categories: int,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    domain_values=None,
) -> dict:
    """Agreement of ``rater`` with ``people`` over parallel grade arrays (one entry per
    item both graded): n, and for exact agreement, Cohen's kappa (unweighted, linear, quadratic;
    equal to ``sklearn.metrics.cohen_kappa_score``), Krippendorff's alpha (ordinal; equal
    to the ``krippendorff`` package) and each grade's precision and recall (the rater's
    grade g against people's g), a value and a bootstrap interval; the confusion matrix."""
    people = np.asarray(people, dtype=np.int64).ravel()
    rater = np.asarray(rater, dtype=np.int64).ravel()
    values = check_domain(n_categories, domain_values)
    confusion = confusion_matrix(people, rater, n_categories)
    n = people.size
    point = {
        k: undefined_as_none(v[0])
        for k, v in _figures(confusion[None].astype(float), values).items()
    }
    for weights in (None, "linear", "quadratic"):  # point values from the one kappa function
        name = f"kappa_{weights}" if weights else "kappa"
        point[name] = cohen_kappa_from_confusion(confusion, weights)
    intervals: dict[str, tuple[float, float] | None] = dict.fromkeys(point)
    if n:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, n, size=(n_resamples, n))
        cell = (people * n_categories + rater)[draws] + (np.arange(n_resamples) * n_categories**2)[
            :, None
        ]
        stack = np.bincount(cell.ravel(), minlength=n_resamples * n_categories**2).reshape(
            n_resamples, n_categories, n_categories
        )
        intervals = {
            k: _interval(v, confidence) for k, v in _figures(stack.astype(float), values).items()
        }
    figures = {name: {"value": point[name], "interval": intervals[name]} for name in point}
    return {
        "n": int(n),
        "confusion": confusion.tolist(),
        **{k: v for k, v in figures.items() if not k.startswith(("precision_", "recall_"))},
        "per_grade": [
            {
                "grade": g,
                "people": int(confusion[g].sum()),
                "rater": int(confusion[:, g].sum()),
                "precision": figures[f"precision_{g}"],
                "recall": figures[f"recall_{g}"],
            }
            for g in range(n_categories)
        ],
    }
