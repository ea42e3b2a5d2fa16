"""One collector for every file: the lowest lines first, one cap, one overflow line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from formats import MAX_REPORTED, FileRejected, LineErrors

PROBLEMS = st.lists(st.tuples(st.integers(0, 500), st.text(max_size=5)), max_size=400)


@given(PROBLEMS)
def test_the_report_is_the_lowest_lines_in_order_then_a_count(problems):
    errors = LineErrors()
    for line, message in problems:
        errors.add(line, message)
    ordered = sorted(enumerate(problems), key=lambda p: (p[1][0], p[0]))[:MAX_REPORTED]
    expected = [f"line {line}: {m}" if line else m for _, (line, m) in ordered]
    if len(problems) > MAX_REPORTED:
        expected.append(f"… and {len(problems) - MAX_REPORTED} more problems")
    assert errors.messages() == expected
    assert bool(errors) == bool(problems)


@given(st.lists(st.integers(1, 10_000), max_size=500).map(sorted))
def test_adding_many_lines_at_once_is_adding_them_one_by_one(lines):
    one, many = LineErrors(), LineErrors()
    for line in lines:
        one.add(line, f"bad {line}")
    many.add_each(lines, lambda i: f"bad {lines[i]}")
    assert one.messages() == many.messages() and one.count == many.count


def test_raising_keeps_the_messages_and_the_file_name():
    errors = LineErrors()
    errors.add(3, "second")
    errors.add(0, "the file holds nothing useful")
    with pytest.raises(FileRejected) as raised:
        errors.raise_if_any(source="run.trec")
    assert raised.value.errors == ["the file holds nothing useful", "line 3: second"]
    assert str(raised.value) == "the file holds nothing useful\nline 3: second"
    assert raised.value.source == "run.trec"
    LineErrors().raise_if_any()  # nothing collected: nothing raised
