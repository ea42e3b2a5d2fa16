"""Label sets for the agreement tests: arrays from rows, observer matrices and count tables."""

from __future__ import annotations

import numpy as np

WEIGHTINGS = [("cohen_kappa", None), ("cohen_kappa_linear", "linear"),
              ("cohen_kappa_quadratic", "quadratic")]  # fmt: skip

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", p. 3: 4 observers ×
# 12 units, values 1..5, None = missing.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
K2011_DOMAIN = [1, 2, 3, 4, 5]


def arrays(rows):
    return tuple(np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))


def from_matrix(matrix, domain):
    """Observers × units matrix of domain values (None missing) → item, annotator, grade."""
    return arrays(
        (u, o, domain.index(v))
        for o, row in enumerate(matrix)
        for u, v in enumerate(row)
        if v is not None
    )


def from_table(table):
    """Items × categories count table → labels, raters numbered per item."""
    rows = []
    for i, row in enumerate(table):
        rater = 0
        for category, count in enumerate(row):
            for _ in range(count):
                rows.append((i, rater, category))
                rater += 1
    return arrays(rows)
