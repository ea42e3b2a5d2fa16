"""Consensus of several annotators' grades per unit, vectorised over all units.

Rules (each unit's final grade, given the grades of its annotators):
- ``majority``: the most frequent grade; a tie goes to the higher grade (a lead would
  rather re-check a generous gold label than miss evidence).
- ``median``: the lower median (always an actual grade on the integer scale).
- ``max`` / ``min``: the highest / lowest grade.
An adjudicated grade, when present, replaces the rule's result. Units with fewer than
``min_annotators`` grades (and no adjudication) get no consensus (``-1``).
"""

from __future__ import annotations

import numpy as np

from .grades import N_GRADES

RULES = ("majority", "median", "max", "min")
NO_CONSENSUS = -1


def consensus_grades(
    unit: np.ndarray,
    grade: np.ndarray,
    n_units: int,
    rule: str = "majority",
    min_annotators: int = 1,
    adjudicated_unit: np.ndarray | None = None,
    adjudicated_grade: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Final grade per unit (``-1`` where undecided) and the number of grades it rests on.

    ``unit[i]`` is the unit index (0..n_units-1) of the i-th label and ``grade[i]`` its
    grade 0..3; each annotator contributes at most one label per unit.
    """
    if rule not in RULES:
        raise ValueError(f"unknown consensus rule {rule!r}; choose one of {', '.join(RULES)}")
    unit = np.asarray(unit, dtype=np.int64)
    grade = np.asarray(grade, dtype=np.int64)
    # counts[u, g] = number of annotators who gave grade g to unit u
    counts = np.bincount(unit * N_GRADES + grade, minlength=n_units * N_GRADES).reshape(
        n_units, N_GRADES
    )
    n_labels = counts.sum(axis=1)
    present = counts > 0
    if rule == "majority":
        # argmax over reversed grades picks the highest grade among tied counts.
        final = N_GRADES - 1 - np.argmax(counts[:, ::-1], axis=1)
    elif rule == "max":
        final = N_GRADES - 1 - np.argmax(present[:, ::-1], axis=1)
    elif rule == "min":
        final = np.argmax(present, axis=1)
    else:  # lower median: first grade whose cumulative count reaches ceil(n/2)
        needed = (n_labels + 1) // 2
        final = np.argmax(np.cumsum(counts, axis=1) >= needed[:, None], axis=1)
    final = np.where((n_labels >= max(min_annotators, 1)), final, NO_CONSENSUS)
    if adjudicated_unit is not None and len(adjudicated_unit):
        final[np.asarray(adjudicated_unit, dtype=np.int64)] = adjudicated_grade
    return final.astype(np.int64), n_labels
