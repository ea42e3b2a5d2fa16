"""One collector for every file: the lowest lines first, one cap, one overflow line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from formats import MAX_REPORTED, FileRejected, LineErrors
from formats.errors import TEXT

PROBLEMS = st.lists(st.tuples(st.integers(0, 500), st.text(max_size=5)), max_size=400)


@given(PROBLEMS)
def test_the_report_is_the_lowest_lines_in_order_then_a_count(problems):
    errors = LineErrors()
    for line, message in problems:
        errors.add(line, TEXT(text=message))
    ordered = sorted(enumerate(problems), key=lambda p: (p[1][0], p[0]))[:MAX_REPORTED]
    expected = [f"line {line}: {m}" if line else m for _, (line, m) in ordered]
    if len(problems) > MAX_REPORTED:
        expected.append(f"… and {len(problems) - MAX_REPORTED} more problems")
    assert [str(problem) for problem in errors.problems()] == expected
    assert bool(errors) == bool(problems)


@given(st.lists(st.integers(1, 10_000), max_size=500).map(sorted))
def test_adding_many_lines_at_once_is_adding_them_one_by_one(lines):
    one, many = LineErrors(), LineErrors()
    for line in lines:
        one.add(line, TEXT(text=f"bad {line}"))
    many.add_each(lines, lambda i: TEXT(text=f"bad {lines[i]}"))
    assert one.problems() == many.problems() and one.count == many.count


def test_raising_keeps_the_messages_and_the_file_name():
    errors = LineErrors()
    errors.add(3, TEXT(text="second"))
    errors.add(0, TEXT(text="the file holds nothing useful"))
    with pytest.raises(FileRejected) as raised:
        errors.raise_if_any(source="run.trec")
    assert raised.value.errors == ["the file holds nothing useful", "line 3: second"]
    assert str(raised.value) == "the file holds nothing useful\nline 3: second"
    assert raised.value.source == "run.trec"
    LineErrors().raise_if_any()  # nothing collected: nothing raised


def test_a_problem_is_data_and_says_itself_in_english():
    from formats.errors import TEMPLATES, define, gettext_noop

    lacking = define("test.lacking", gettext_noop("the header lacks %(columns)s"))
    try:
        _check_a_problem(lacking)
    finally:
        del TEMPLATES["test.lacking"]  # Assay's registry holds Assay's codes only


def _check_a_problem(lacking):
    from formats.errors import LINE, Problem, define

    problem = LINE(line=4, problem=lacking(columns="qid"))
    assert str(problem) == "line 4: the header lacks qid"
    stored = problem.as_json()
    assert stored == {
        "code": "line",
        "params": {"line": 4, "problem": {"code": "test.lacking", "params": {"columns": "qid"}}},
    }
    assert Problem.from_json(stored) == problem
    # Text stored before problems were data reads back as it was.
    assert str(Problem.from_json("line 2: something old")) == "line 2: something old"
    with pytest.raises(ValueError, match="another template"):
        define("test.lacking", "some other wording")
    with pytest.raises(TypeError):
        FileRejected(["a bare string is not a problem"])
    with pytest.raises(TypeError):
        LineErrors().add(1, "nor here")


def test_a_count_of_one_is_said_in_the_singular():
    """Before: "1 lines dropped", "… and 1 more problems"."""
    from formats.errors import MORE, render

    assert str(MORE(n=1)) == "… and 1 more problem"
    assert str(MORE(n=2)) == "… and 2 more problems"
    # Read back from JSON, the count may be text; the language's own rule when translated.
    assert str(MORE(n="1")) == "… and 1 more problem"
    chosen = []
    said = render(MORE(n=1), translate_plural=lambda a, b, n: chosen.append(n) or "%(n)s 个")
    assert (said, chosen) == ("1 个", [1])
