"""Inter-annotator agreement, vectorised over all items. Numpy and the standard library only.

Inputs are parallel arrays, one entry per label:

- ``item``: 0..n_items-1,
- ``annotator``: 0..n_annotators-1,
- ``grade``: an index into an ordered domain of ``n_categories`` values (0..C-1). Callers map
  an arbitrary integer scale (say 1, 2, 5) to 0..C-1 and pass the scale itself as
  ``domain_values`` where interval distances need the real numbers.

Each annotator gives at most one grade per item (``ValueError`` otherwise). Every function
also accepts, in place of the three arrays, a :class:`Labels` bundle built (and checked)
once by :func:`labels`.

All per-item work is array work: one ``bincount`` on ``item * C + grade`` gives the
items × categories count table ``n`` from which percent agreement, Fleiss' kappa and the
coincidence matrices of Krippendorff's alpha follow as matrix expressions; Cohen's kappa of
a pair is a ``bincount`` on ``a * C + b``. There is no Python loop over items (only over
annotator pairs, queries and C × C matrices).

Every coefficient returns ``None`` where it is not defined — no pairable labels, or no
expected disagreement (everyone used one same category, so chance agreement is total) —
and never a silent 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVELS = ("nominal", "ordinal", "interval")
WEIGHTS = (None, "linear", "quadratic")


@dataclass(frozen=True)
class Labels:
    """Checked parallel label arrays and the sizes of their index spaces."""

    item: np.ndarray
    annotator: np.ndarray
    grade: np.ndarray
    n_items: int
    n_annotators: int
    n_categories: int


def labels(
    item, annotator, grade, n_categories: int | None = None, n_items=None, n_annotators=None
) -> Labels:
    """Check and bundle label arrays. ``n_categories`` defaults to max(grade) + 1 (pass the
    domain size so that unused grades still count); ``n_items`` / ``n_annotators`` default
    to max + 1. Raises ``ValueError`` on unequal lengths, indices out of range or an
    annotator grading one item twice."""
    item = np.asarray(item, dtype=np.int64).ravel()
    annotator = np.asarray(annotator, dtype=np.int64).ravel()
    grade = np.asarray(grade, dtype=np.int64).ravel()
    if not item.size == annotator.size == grade.size:
        raise ValueError("item, annotator and grade must have the same length")
    if n_categories is None:
        n_categories = int(grade.max()) + 1 if grade.size else 1
    n_items = (int(item.max()) + 1 if item.size else 0) if n_items is None else int(n_items)
    if n_annotators is None:
        n_annotators = int(annotator.max()) + 1 if annotator.size else 0
    for name, values, size in (
        ("grade", grade, n_categories),
        ("item", item, n_items),
        ("annotator", annotator, n_annotators),
    ):
        if values.size and (values.min() < 0 or values.max() >= size):
            raise ValueError(f"{name} must be an index 0..{size - 1}")
    key = np.sort(item * max(n_annotators, 1) + annotator)
    if np.any(key[1:] == key[:-1]):
        raise ValueError("an annotator gives at most one grade per item")
    return Labels(item, annotator, grade, n_items, int(n_annotators), int(n_categories))


def _as_labels(item, annotator, grade, n_categories, n_annotators=None, n_items=None) -> Labels:
    if isinstance(item, Labels):
        if annotator is not None or grade is not None:
            raise TypeError("pass either a Labels bundle or the three arrays, not both")
        if n_categories is not None and n_categories != item.n_categories:
            raise ValueError("n_categories differs from the bundle's")
        return item
    if annotator is None or grade is None:
        raise TypeError("item, annotator and grade are all needed")
    return labels(item, annotator, grade, n_categories, n_items, n_annotators)


def counts(data: Labels) -> np.ndarray:
    """counts[i, c] = number of annotators who gave category c to item i (items × C)."""
    flat = np.bincount(
        data.item * data.n_categories + data.grade, minlength=data.n_items * data.n_categories
    )
    return flat.reshape(data.n_items, data.n_categories)


def _domain_values(n_categories: int, domain_values) -> np.ndarray:
    if domain_values is None:
        return np.arange(n_categories, dtype=float)
    values = np.asarray(domain_values, dtype=float).ravel()
    if values.size != n_categories:
        raise ValueError("domain_values needs one number per category")
    if np.any(np.diff(values) <= 0):
        raise ValueError("domain_values must be strictly increasing (an ordered scale)")
    return values


def _item_agreement(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share of agreeing label pairs of every item, and the mask of items with ≥ 2 labels."""
    m = n.sum(axis=1)
    multi = m >= 2
    share = np.zeros(n.shape[0])
    pairs = np.where(multi, m * (m - 1), 1)
    share[multi] = ((n * (n - 1)).sum(axis=1) / pairs)[multi]
    return share, multi


# -- percent agreement ---------------------------------------------------------------------


def percent_agreement(item, annotator=None, grade=None, n_categories=None) -> float | None:
    """Observed agreement, no chance correction.

    P = mean over items i with m_i ≥ 2 labels of  Σ_c n_ic (n_ic − 1) / (m_i (m_i − 1)),

    the share of an item's ordered label pairs that agree (Fleiss 1971's P_i, averaged over
    every multiply-labelled item whatever its m_i). Items with one label are left out;
    ``None`` when no item has two labels.
    """
    data = _as_labels(item, annotator, grade, n_categories)
    share, multi = _item_agreement(counts(data))
    if not multi.any():
        return None
    return float(share[multi].mean())


# -- Cohen's kappa -------------------------------------------------------------------------


def _weights(size: int, weights: str | None) -> np.ndarray:
    i, j = np.indices((size, size))
    if weights is None:
        return (i != j).astype(float)
    if weights == "linear":
        return np.abs(i - j).astype(float)
    if weights == "quadratic":
        return ((i - j) ** 2).astype(float)
    raise ValueError("weights must be None, 'linear' or 'quadratic'")


def cohen_kappa_from_confusion(confusion, weights: str | None = None) -> float | None:
    """Cohen's kappa from a C × C confusion matrix o (rows: annotator a, columns: b).

    κ = 1 − Σ w_ij o_ij / Σ w_ij e_ij,  e_ij = o_i· o_·j / n,

    with disagreement weights w_ij = [i ≠ j] (Cohen 1960), |i − j| (linear) or (i − j)²
    (quadratic; Cohen 1968 weighted kappa) — the definition of
    ``sklearn.metrics.cohen_kappa_score``. ``None`` when n = 0 or Σ w e = 0 (both
    annotators used one same category only: chance agreement is total).
    """
    confusion = np.asarray(confusion, dtype=float)
    total = confusion.sum()
    if total == 0:
        return None
    w = _weights(confusion.shape[0], weights)
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / total
    denominator = (w * expected).sum()
    if denominator == 0:
        return None
    return float(1.0 - (w * confusion).sum() / denominator)


def confusion_matrix(a, b, n_categories: int) -> np.ndarray:
    """C × C counts of (a's grade, b's grade) over the positions where both graded
    (a negative grade means "not labelled")."""
    a = np.asarray(a, dtype=np.int64).ravel()
    b = np.asarray(b, dtype=np.int64).ravel()
    if a.size != b.size:
        raise ValueError("a and b must have the same length (one entry per item)")
    both = (a >= 0) & (b >= 0)
    a, b = a[both], b[both]
    if a.size and (max(a.max(), b.max()) >= n_categories):
        raise ValueError(f"grades must be category indices 0..{n_categories - 1}")
    flat = np.bincount(a * n_categories + b, minlength=n_categories * n_categories)
    return flat.reshape(n_categories, n_categories)


def cohen_kappa(a, b, n_categories: int, weights: str | None = None) -> float | None:
    """Cohen's kappa of two annotators over the items both labelled.

    ``a`` and ``b`` are parallel grade arrays (one entry per item, category indices
    0..C-1, a negative entry meaning "not labelled by this annotator"). Formula and
    ``None`` cases as :func:`cohen_kappa_from_confusion` (Cohen 1960, 1968); equals
    ``sklearn.metrics.cohen_kappa_score(a, b, labels=range(C), weights=weights)``.
    """
    return cohen_kappa_from_confusion(confusion_matrix(a, b, n_categories), weights)


def pairwise(item, annotator=None, grade=None, n_categories=None, n_annotators=None) -> list[dict]:
    """Every annotator pair a < b: the number n of items both labelled, Cohen's kappa
    unweighted, linear and quadratic (see :func:`cohen_kappa`; ``None`` when n = 0 or
    undefined) and the C × C confusion matrix (rows: a's grade, columns: b's grade).

    One ``bincount`` over all pairs at once: the items × annotators grade grid is built
    once, then each pair's confusion is a slice of a (pairs × C × C) count array.
    ``n_annotators`` (default max + 1) includes annotators without a label.
    """
    data = _as_labels(item, annotator, grade, n_categories, n_annotators)
    C, A = data.n_categories, data.n_annotators
    first, second = np.triu_indices(A, k=1)
    if first.size == 0:
        return []
    grid = np.full((data.n_items, A), -1, dtype=np.int64)
    grid[data.item, data.annotator] = data.grade
    ga, gb = grid[:, first], grid[:, second]  # items × pairs
    both = (ga >= 0) & (gb >= 0)
    pair = np.broadcast_to(np.arange(first.size), ga.shape)
    flat = np.bincount(
        (pair[both] * C + ga[both]) * C + gb[both], minlength=first.size * C * C
    ).reshape(first.size, C, C)
    rows = []
    for p, (a, b) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        confusion = flat[p]
        rows.append(
            {
                "a": a,
                "b": b,
                "n": int(confusion.sum()),
                "cohen_kappa": cohen_kappa_from_confusion(confusion),
                "cohen_kappa_linear": cohen_kappa_from_confusion(confusion, "linear"),
                "cohen_kappa_quadratic": cohen_kappa_from_confusion(confusion, "quadratic"),
                "confusion": confusion.tolist(),
            }
        )
    return rows


# -- Fleiss' kappa -------------------------------------------------------------------------


def fleiss_kappa(item, annotator=None, grade=None, n_categories=None) -> dict:
    """Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement among many raters").

    Fleiss needs every item rated m times, so it rests on the items having the most
    common label count m ≥ 2 (a tie goes to the larger m); over those N items

    P_i = (Σ_c n_ic² − m) / (m (m − 1)),  P̄ = mean P_i,  p_c = Σ_i n_ic / (N m),
    P_e = Σ_c p_c²,  κ = (P̄ − P_e) / (1 − P_e),

    as ``statsmodels.stats.inter_rater.fleiss_kappa(table, method='fleiss')``. Returns
    {m, n_items, value}; m is ``None`` (n_items 0) when no item has two labels, value is
    ``None`` when P_e = 1 (every label of those items in one category).
    """
    data = _as_labels(item, annotator, grade, n_categories)
    n = counts(data)
    m_all = n.sum(axis=1)
    multi = m_all[m_all >= 2]
    if multi.size == 0:
        return {"m": None, "n_items": 0, "value": None}
    frequency = np.bincount(multi)
    m = int(np.flatnonzero(frequency == frequency.max()).max())
    table = n[m_all == m].astype(float)
    n_items = table.shape[0]
    p_item = ((table**2).sum(axis=1) - m) / (m * (m - 1))
    p_category = table.sum(axis=0) / (n_items * m)
    if np.count_nonzero(p_category) < 2:  # P_e = 1 exactly
        return {"m": m, "n_items": n_items, "value": None}
    p_expected = float((p_category**2).sum())
    value = (float(p_item.mean()) - p_expected) / (1.0 - p_expected)
    return {"m": m, "n_items": n_items, "value": float(value)}


# -- Krippendorff's alpha ------------------------------------------------------------------


def coincidences(n: np.ndarray) -> np.ndarray:
    """Per-item coincidence matrices (items × C × C), Krippendorff (2011) §3:
    o_ick = (n_ic n_ik − [c = k] n_ic) / (m_i − 1) for items with m_i ≥ 2, zero otherwise."""
    n = np.asarray(n, dtype=float)
    m = n.sum(axis=1)
    pairable = m >= 2
    scale = np.where(pairable, 1.0 / np.where(pairable, m - 1, 1), 0.0)
    outer = n[:, :, None] * n[:, None, :]
    diagonal = np.arange(n.shape[1])
    outer[:, diagonal, diagonal] -= n
    return outer * scale[:, None, None]


def total_coincidences(n: np.ndarray) -> np.ndarray:
    """Σ over items of the coincidence matrices, as one matrix product:
    o = Wᵀn − diag(Σ_i W_i) with W_i = n_i / (m_i − 1) over pairable items."""
    n = np.asarray(n, dtype=float)
    m = n.sum(axis=1)
    pairable = m >= 2
    weighted = n[pairable] / (m[pairable] - 1)[:, None]
    return weighted.T @ n[pairable] - np.diag(weighted.sum(axis=0))


def _squared_distances(level: str, marginals: np.ndarray, values: np.ndarray) -> np.ndarray:
    """δ²(c, k) of Krippendorff (2011), for a stack of marginal vectors (Q × C → Q × C × C):
    nominal [c ≠ k]; interval (v_c − v_k)²; ordinal (Σ_{g=c..k} n_g − (n_c + n_k)/2)² with
    n_g the coincidence marginals. The diagonal is exactly 0."""
    Q, C = marginals.shape
    c = np.arange(C)
    if level == "nominal":
        delta = np.broadcast_to((c[:, None] != c[None, :]).astype(float), (Q, C, C))
    elif level == "interval":
        delta = np.broadcast_to((values[:, None] - values[None, :]) ** 2, (Q, C, C))
    elif level == "ordinal":
        cumulative = np.concatenate([np.zeros((Q, 1)), np.cumsum(marginals, axis=1)], axis=1)
        low, high = np.minimum(c[:, None], c[None, :]), np.maximum(c[:, None], c[None, :])
        between = cumulative[:, high + 1] - cumulative[:, low]
        delta = (between - (marginals[:, :, None] + marginals[:, None, :]) / 2) ** 2
        delta[:, c, c] = 0.0
    else:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}")
    return delta


def _alpha_batch(o: np.ndarray, level: str, values: np.ndarray) -> np.ndarray:
    """α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck for a stack of coincidence matrices
    (Q × C × C); NaN where undefined (n ≤ 1 pairable values or no expected disagreement)."""
    marginals = o.sum(axis=2)
    total = marginals.sum(axis=1)
    delta = _squared_distances(level, marginals, values)
    observed = (o * delta).sum(axis=(1, 2))
    expected = (marginals[:, :, None] * marginals[:, None, :] * delta).sum(axis=(1, 2))
    defined = (total > 1) & (expected > 0)
    alpha = np.full(o.shape[0], np.nan)
    alpha[defined] = 1.0 - (total[defined] - 1) * observed[defined] / expected[defined]
    return alpha


def _none(value) -> float | None:
    return None if not np.isfinite(value) else float(value)


def krippendorff_alpha(
    item,
    annotator=None,
    grade=None,
    n_categories=None,
    level: str = "nominal",
    domain_values=None,
) -> float | None:
    """Krippendorff's alpha with missing data (Krippendorff 2011, "Computing Krippendorff's
    alpha-reliability", §3; Hayes & Krippendorff 2007).

    o_ck = Σ_i (n_ic n_ik − [c = k] n_ic) / (m_i − 1)  over items with m_i ≥ 2 labels,
    n_c = Σ_k o_ck,  n = Σ_c n_c,
    α = 1 − D_o / D_e = 1 − (n − 1) Σ_ck o_ck δ²_ck / Σ_ck n_c n_k δ²_ck,

    δ² nominal [c ≠ k], ordinal (Σ_{g=c..k} n_g − (n_c + n_k)/2)², interval
    (v_c − v_k)² with v = ``domain_values`` (default 0..C-1). Items with fewer than two
    labels are ignored. ``None`` when fewer than two pairable values exist or D_e = 0
    (all pairable values identical). Equals ``krippendorff.alpha(reliability_data=...,
    level_of_measurement=level, value_domain=domain)``.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}")
    data = _as_labels(item, annotator, grade, n_categories)
    values = _domain_values(data.n_categories, domain_values)
    o = total_coincidences(counts(data))
    return _none(_alpha_batch(o[None], level, values)[0])


# -- per query -----------------------------------------------------------------------------


def _query_index(data: Labels, query, n_queries) -> tuple[np.ndarray, int]:
    query = np.asarray(query, dtype=np.int64).ravel()
    if query.size != data.n_items:
        raise ValueError("query needs one entry per item")
    if n_queries is None:
        n_queries = int(query.max()) + 1 if query.size else 0
    if query.size and (query.min() < 0 or query.max() >= n_queries):
        raise ValueError(f"query must be an index 0..{n_queries - 1}")
    return query, int(n_queries)


def alpha_per_query(
    item,
    annotator=None,
    grade=None,
    n_categories=None,
    *,
    query,
    n_queries=None,
    level: str = "nominal",
    domain_values=None,
) -> list[float | None]:
    """Krippendorff's alpha (formula of :func:`krippendorff_alpha`) of each query's items:
    ``query[i]`` is item i's query index. Per-item coincidence matrices are summed by
    query with one ``np.add.at``; each query's alpha uses its own marginals (exactly the
    alpha of that query's labels alone). ``query`` has one entry per item, so its length
    is the number of items. ``None`` where undefined."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}")
    data = _as_labels(item, annotator, grade, n_categories, n_items=np.size(query))
    query, n_queries = _query_index(data, query, n_queries)
    values = _domain_values(data.n_categories, domain_values)
    o = _query_coincidences(counts(data), query, n_queries)
    return [_none(v) for v in _alpha_batch(o, level, values)]


def _query_coincidences(n: np.ndarray, query: np.ndarray, n_queries: int) -> np.ndarray:
    C = n.shape[1]
    m = n.sum(axis=1)
    pairable = m >= 2
    o = np.zeros((n_queries, C, C))
    np.add.at(o, query[pairable], coincidences(n[pairable]))
    return o


def percent_agreement_per_query(
    item, annotator=None, grade=None, n_categories=None, *, query, n_queries=None
) -> list[float | None]:
    """Percent agreement (formula of :func:`percent_agreement`) of each query's items,
    by two ``bincount`` calls; ``None`` for a query without an item holding two labels."""
    data = _as_labels(item, annotator, grade, n_categories, n_items=np.size(query))
    query, n_queries = _query_index(data, query, n_queries)
    share, multi = _item_agreement(counts(data))
    total = np.bincount(query, weights=share, minlength=n_queries)
    used = np.bincount(query, weights=multi.astype(float), minlength=n_queries)
    return [float(t / u) if u else None for t, u in zip(total, used, strict=True)]


def per_query(data: Labels, query, n_queries=None, domain_values=None) -> list[dict]:
    """For a :class:`Labels` bundle and ``query[i]`` = item i's query index: one dict per
    query, {krippendorff_alpha: {nominal, ordinal, interval}, percent_agreement, n_items}
    with n_items the query's items holding ≥ 2 labels (what both coefficients rest on)."""
    query, n_queries = _query_index(data, query, n_queries)
    values = _domain_values(data.n_categories, domain_values)
    n = counts(data)
    o = _query_coincidences(n, query, n_queries)
    alphas = {level: _alpha_batch(o, level, values) for level in LEVELS}
    share, multi = _item_agreement(n)
    total = np.bincount(query, weights=share, minlength=n_queries)
    used = np.bincount(query, weights=multi.astype(float), minlength=n_queries)
    return [
        {
            "krippendorff_alpha": {level: _none(alphas[level][q]) for level in LEVELS},
            "percent_agreement": float(total[q] / used[q]) if used[q] else None,
            "n_items": int(used[q]),
        }
        for q in range(n_queries)
    ]


# -- passage spans -------------------------------------------------------------------------


def _spans(spans) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = list(spans) if not isinstance(spans, np.ndarray) else spans
    if len(rows) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=object), empty, empty
    doc = np.array([r[0] for r in rows], dtype=object)
    start = np.array([r[1] for r in rows], dtype=np.int64)
    end = np.array([r[2] for r in rows], dtype=np.int64)
    if np.any(end < start):
        raise ValueError("a span ends before it starts")
    return doc, start, end


def span_f1(spans_a, spans_b) -> float | None:
    """Character-level F1 between two annotators' passages for one query.

    Spans are (doc, start, end) triples, end exclusive; each annotator's overlapping spans
    are merged (a character counts once). With A and B the sets of marked characters,

    F1 = 2 |A ∩ B| / (|A| + |B|)

    (the Dice coefficient; the token/character-overlap F1 of span tasks, e.g. Rajpurkar et
    al. 2016). ``None`` when neither marked anything; 0.0 when they marked disjoint text.
    Vectorised as a sweep over the sorted span boundaries of both annotators.
    """
    doc_a, start_a, end_a = _spans(spans_a)
    doc_b, start_b, end_b = _spans(spans_b)
    docs = np.concatenate([doc_a, doc_a, doc_b, doc_b])
    if docs.size == 0:
        return None
    _names, doc = np.unique(docs.astype(str), return_inverse=True)
    position = np.concatenate([start_a, end_a, start_b, end_b])
    ka, kb = start_a.size, start_b.size
    step_a = np.concatenate([np.ones(ka), -np.ones(ka), np.zeros(2 * kb)])
    step_b = np.concatenate([np.zeros(2 * ka), np.ones(kb), -np.ones(kb)])
    order = np.lexsort((position, doc))
    doc, position = doc[order], position[order]
    cover_a = np.cumsum(step_a[order]) > 0  # coverage after each boundary
    cover_b = np.cumsum(step_b[order]) > 0
    length = np.where(doc[1:] == doc[:-1], np.diff(position), 0)
    size_a = int((length * cover_a[:-1]).sum())
    size_b = int((length * cover_b[:-1]).sum())
    if size_a + size_b == 0:
        return None
    both = int((length * (cover_a[:-1] & cover_b[:-1])).sum())
    return 2 * both / (size_a + size_b)


# -- everything at once --------------------------------------------------------------------


def summary(data: Labels, domain_values=None) -> dict:
    """Every coefficient of a :class:`Labels` bundle, as the agreement command and page show
    them: n_items (items with a label), n_annotators (annotators with a label),
    percent_agreement, fleiss_kappa, krippendorff_alpha per level, pairs."""
    values = _domain_values(data.n_categories, domain_values)
    o = total_coincidences(counts(data))
    return {
        "n_items": int(np.unique(data.item).size),
        "n_annotators": int(np.unique(data.annotator).size),
        "percent_agreement": percent_agreement(data),
        "fleiss_kappa": fleiss_kappa(data),
        "krippendorff_alpha": {
            level: _none(_alpha_batch(o[None], level, values)[0]) for level in LEVELS
        },
        "pairs": pairwise(data),
    }


def support(data: Labels) -> dict:
    """What the coefficients rest on: items with ≥ 2 labels (percent agreement, alpha) and
    the number of pairable values n of Krippendorff's alpha."""
    m = counts(data).sum(axis=1)
    multi = m >= 2
    return {"items_with_two_labels": int(multi.sum()), "pairable_values": int(m[multi].sum())}
