"""``adjudicated_units`` matches adjudicated spans to units by looking only at the units of
adjudicated documents (a level has millions of units): for any labels and units, the
same rows as comparing every unit with every adjudication."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gold.units import LabelRows, Units, adjudicated_units
from numerics.mapping import best_evidence

SPANS = st.tuples(st.integers(1, 4), st.integers(0, 3), st.integers(1, 3))  # doc, start, len


def _naive(labels: LabelRows, units: Units):
    """Every adjudication against every unit; the highest grade per (query, unit)."""
    rows = [
        (int(labels.query[r]), u, int(labels.grade[r]))
        for r in np.flatnonzero(labels.source < 0).tolist()
        for u in range(units.document.size)
        if (labels.document[r], labels.start[r], labels.end[r])
        == (units.document[u], units.start[u], units.end[u])
    ]
    if not rows:
        return [], [], []
    query, unit, grade = (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
    best = best_evidence(grade, query, unit)
    return query[best].tolist(), unit[best].tolist(), grade[best].tolist()


@settings(max_examples=200, deadline=None)
@given(
    units=st.lists(SPANS, max_size=12),
    labels=st.lists(
        st.tuples(st.integers(1, 3), st.integers(-1, 1), SPANS, st.integers(0, 3)), max_size=12
    ),
)
def test_adjudicated_units_are_those_of_comparing_every_unit(units, labels):
    column = lambda rows, f: np.array([f(r) for r in rows], dtype=np.int64)  # noqa: E731
    unit_rows = Units(
        "c",
        np.array([f"u{k}" for k in range(len(units))], dtype=object),
        np.arange(len(units), dtype=np.int64),
        column(units, lambda u: u[0]),
        column(units, lambda u: u[1]),
        column(units, lambda u: u[1] + u[2]),
    )
    label_rows = LabelRows(
        column(labels, lambda r: r[0]),
        column(labels, lambda r: r[1]),
        column(labels, lambda r: r[2][0]),
        column(labels, lambda r: r[2][1]),
        column(labels, lambda r: r[2][1] + r[2][2]),
        column(labels, lambda r: r[3]),
        annotators=["a", "b"],
    )
    found = [a.tolist() for a in adjudicated_units(label_rows, unit_rows)]
    assert found == [list(c) for c in _naive(label_rows, unit_rows)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), max_size=20), st.booleans())
def test_units_in_document_and_start_order_are_kept_as_lexsort_would(rows, presorted):
    """The mapping's unit order: with one linear pass when already sorted, else a sort;
    either way exactly ``np.lexsort``'s stable order."""
    from numerics.mapping import _by_document_and_start

    rows = sorted(rows) if presorted else rows
    document = np.array([r[0] for r in rows], dtype=np.int64)
    start = np.array([r[1] for r in rows], dtype=np.int64)
    expected = np.lexsort((start, document))
    assert np.array_equal(_by_document_and_start(document, start), expected)
