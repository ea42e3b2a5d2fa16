"""What a cell or JSON value may hold: storable, exportable text, finite numbers, bounded size.

Every reader's rows pass ``row_problem`` (``rows.RowSource``), so one rule covers JSONL,
CSV, XLSX and TREC: control characters (U+0000 to U+001F except tab, line feed and
carriage return) are refused because PostgreSQL cannot store NUL and spreadsheets cannot
hold the others; lone surrogates (``"\\ud800"`` in JSON) are not Unicode and cannot be
stored; NaN and Infinity are not numbers a label or metadata can mean; a text longer than
the limit and JSON nested deeper than ``MAX_DEPTH`` are refused before they reach the
database. Ids are single tokens.
"""

from __future__ import annotations

import math
import re

from .errors import Problem, define, gettext_noop

MAX_DEPTH = 100
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")
_WHITESPACE = re.compile(r"\s")

ID_WHITESPACE = define(
    "value.id_whitespace",
    gettext_noop("%(name)s %(value)s contains whitespace, which ids cannot hold"),
)
TEXT_TOO_LONG = define(
    "value.text_too_long",
    gettext_noop("%(name)s is %(n)s characters long, over the limit of %(limit)s"),
)
LONE_SURROGATE = define(
    "value.lone_surrogate",
    gettext_noop("%(name)s holds a lone surrogate %(code)s, which is not Unicode text"),
)
CONTROL_CHARACTER = define(
    "value.control_character",
    gettext_noop(
        "%(name)s holds the control character %(code)s, which cannot be stored or exported"
    ),
)
NOT_FINITE = define(
    "value.not_finite", gettext_noop("%(name)s holds %(value)s, which is not a number")
)
TOO_DEEP = define("value.too_deep", gettext_noop("%(name)s is nested deeper than %(n)s levels"))
A_COLUMN_NAME = define("value.a_column_name", gettext_noop("a column name"))


def text_problem(text: str, name: str | Problem, max_chars: int | None = None) -> Problem | None:
    """Why ``text`` (worded as ``name``) cannot be stored or exported as it is, or None."""
    if max_chars is not None and len(text) > max_chars:
        return TEXT_TOO_LONG(name=name, n=f"{len(text):,}", limit=f"{max_chars:,}")
    found = _FORBIDDEN.search(text)
    if found is None:
        return None
    code = ord(found.group())
    kind = LONE_SURROGATE if 0xD800 <= code <= 0xDFFF else CONTROL_CHARACTER
    return kind(name=name, code=f"U+{code:04X}")


def value_problem(value, name: str | Problem, max_chars: int | None = None) -> Problem | None:
    """Why a cell or JSON value (walked without recursion) cannot be kept, or None."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item, name, max_chars)
            if problem:
                return problem
        elif isinstance(item, float):
            if not math.isfinite(item):
                return NOT_FINITE(name=name, value=str(item))
        elif isinstance(item, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                return TOO_DEEP(name=name, n=MAX_DEPTH)
            if isinstance(item, dict):
                stack.extend((key, depth + 1) for key in item)
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
    return None


def row_problem(row: dict, max_chars: int | None = None) -> Problem | None:
    """The first problem of a row's columns, worded with the column's name, or None."""
    for column, value in row.items():
        if isinstance(column, str) and (
            problem := text_problem(column, A_COLUMN_NAME(), max_chars)
        ):
            return problem
        if problem := value_problem(value, column, max_chars):
            return problem
    return None


def as_token(value: str) -> str:
    """An id made from a name that may hold whitespace (a file's name): each whitespace
    character becomes ``_``, so that the id is one token wherever a TREC line holds it."""
    return _WHITESPACE.sub("_", value)


def id_problem(name: str | Problem, value: str) -> Problem | None:
    """Ids are single tokens: TREC files, which every export writes, separate fields by
    whitespace, so an id holding any would break them."""
    if _WHITESPACE.search(value):
        return ID_WHITESPACE(name=name, value=repr(value))
    return None
