"""Label arrays checked once (``Labels``) and the items × categories table every coefficient uses.

Inputs are parallel arrays, one entry per label:

- ``item``: 0..n_items-1,
- ``annotator``: 0..n_annotators-1,
- ``grade``: an index into an ordered domain of ``n_categories`` values (0..C-1). Callers map
  an arbitrary integer scale (say 1, 2, 5) to 0..C-1 and pass the scale itself as
  ``domain_values`` where interval distances need the real numbers.

Each annotator gives at most one grade per item (``ValueError`` otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


def counts(data: Labels) -> np.ndarray:
    """counts[i, c] = number of annotators who gave category c to item i (items × C)."""
    flat = np.bincount(
        data.item * data.n_categories + data.grade, minlength=data.n_items * data.n_categories
    )
    return flat.reshape(data.n_items, data.n_categories)


def count_table(data: Labels | None, table) -> np.ndarray:
    """The items × categories table of exactly one input: a ``Labels`` bundle, or a count
    table given as ``counts=`` (non-negative whole numbers, one row per item)."""
    if (data is None) == (table is None):
        raise TypeError("pass either a Labels bundle (see labels()) or counts=, exactly one")
    if data is not None:
        if not isinstance(data, Labels):
            raise TypeError("the first argument is a Labels bundle; build it with labels()")
        return counts(data)
    table = np.asarray(table)
    if table.ndim != 2:
        raise ValueError("counts must be an items × categories table")
    whole = table.astype(np.int64)
    if table.size and (whole.min() < 0 or not np.array_equal(whole, table)):
        raise ValueError("counts must hold non-negative whole numbers")
    return whole


def check_domain(n_categories: int, domain_values) -> np.ndarray:
    """The numbers of the categories (default 0..C-1), strictly increasing."""
    if domain_values is None:
        return np.arange(n_categories, dtype=float)
    values = np.asarray(domain_values, dtype=float).ravel()
    if values.size != n_categories:
        raise ValueError("domain_values needs one number per category")
    if np.any(np.diff(values) <= 0):
        raise ValueError("domain_values must be strictly increasing (an ordered scale)")
    return values


def item_agreement(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share of agreeing label pairs of every item, and the mask of items with ≥ 2 labels."""
    m = n.sum(axis=1)
    multi = m >= 2
    share = np.zeros(n.shape[0])
    pairs = np.where(multi, m * (m - 1), 1)
    share[multi] = ((n * (n - 1)).sum(axis=1) / pairs)[multi]
    return share, multi


def query_index(n_items: int, query, n_queries) -> tuple[np.ndarray, int]:
    """Checked ``query[i]`` = item i's query index, and the number of queries."""
    query = np.asarray(query, dtype=np.int64).ravel()
    if query.size != n_items:
        raise ValueError("query needs one entry per item")
    if n_queries is None:
        n_queries = int(query.max()) + 1 if query.size else 0
    if query.size and (query.min() < 0 or query.max() >= n_queries):
        raise ValueError(f"query must be an index 0..{n_queries - 1}")
    return query, int(n_queries)


def undefined_as_none(value) -> float | None:
    """A coefficient's value, or None where it is not defined (NaN)."""
    return None if not np.isfinite(value) else float(value)
