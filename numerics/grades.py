"""The grade scale: the one place that knows labels are graded 0, 1, 2, 3."""

from __future__ import annotations

GRADES: tuple[int, ...] = (0, 1, 2, 3)
N_GRADES = len(GRADES)
MIN_GRADE, MAX_GRADE = GRADES[0], GRADES[-1]


def is_grade(value: object) -> bool:
    """Whether ``value`` is a grade of the scale (an int, not a bool or a float)."""
    return isinstance(value, int) and not isinstance(value, bool) and value in GRADES


def check_grade(value: object) -> int:
    """``value`` if it is a grade, else ``ValueError`` naming the scale."""
    if not is_grade(value):
        raise ValueError(f"grade must be one of {', '.join(map(str, GRADES))}, not {value!r}")
    return int(value)  # type: ignore[arg-type]
