"""Reading a judge's answer strictly: a JSON {grade, reason} or a lone digit 0–3 (a
quality dimension's grades: 0 to its highest grade), else a failure.

Nothing is guessed: an answer with a grade outside the scale, extra text around the JSON,
a missing or non-integer grade, or an empty or very long answer is a failure with a
reason. No Django import.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from formats.errors import Problem, define, gettext_noop
from numerics.grades import GRADES

MAX_ANSWER_CHARS = 2000
MAX_REASON_CHARS = 1000
_DIGIT = re.compile(rf"\s*({'|'.join(map(str, GRADES))})\s*")

ANSWERED_NOTHING = define("answer.nothing", gettext_noop("the model answered nothing"))
ANSWER_LONG = define("answer.too_long", gettext_noop("the answer has %(n)s characters"))
NOT_JSON_OR_DIGIT = define(
    "answer.not_json_or_digit", gettext_noop("the answer is neither JSON nor a digit 0–3")
)
NO_GRADE = define("answer.no_grade", gettext_noop("the JSON answer has no grade"))
NOT_INTEGER = define("answer.not_integer", gettext_noop("the grade is not an integer: %(value)s"))
OUTSIDE = define("answer.outside", gettext_noop("grade %(grade)s is outside 0–3"))
NOT_JSON_OR_DIGIT_SCALE = define(
    "answer.not_json_or_digit_scale",
    gettext_noop("the answer is neither JSON nor a digit 0–%(top)s"),
)
OUTSIDE_SCALE = define("answer.outside_scale", gettext_noop("grade %(grade)s is outside 0–%(top)s"))
TOP = GRADES[-1]  # relevance grades' highest
REASON_NOT_TEXT = define("answer.reason_not_text", gettext_noop("the reason is not text"))
REASON_LONG = define("answer.reason_too_long", gettext_noop("the reason has %(n)s characters"))


@dataclass(frozen=True)
class Parsed:
    grade: int
    reason: str


class AnswerError(ValueError):
    """An answer that is not a grade; ``kind`` is a ``Failure`` value, ``detail`` says why."""

    def __init__(self, kind: str, detail: Problem):
        super().__init__(str(detail))
        self.kind = kind
        self.detail = detail


def _digit(top: int) -> re.Pattern:
    return _DIGIT if top == TOP else re.compile(rf"\s*([0-{top}])\s*")


def parse_answer(text: str | None, top: int = TOP) -> Parsed:
    """The grade (0..``top``: relevance's 0–3 unless a quality dimension's scale says
    otherwise, at most 9) and reason of an answer, or ``AnswerError``."""
    if text is None or not text.strip():
        raise AnswerError("empty", ANSWERED_NOTHING())
    if len(text) > MAX_ANSWER_CHARS:
        raise AnswerError("too_long", ANSWER_LONG(n=len(text)))
    digit = _digit(top).fullmatch(text)
    if digit:
        return Parsed(int(digit.group(1)), "")
    try:
        value = json.loads(text)
    except ValueError:
        problem = NOT_JSON_OR_DIGIT() if top == TOP else NOT_JSON_OR_DIGIT_SCALE(top=top)
        raise AnswerError("malformed", problem) from None
    if not isinstance(value, dict) or "grade" not in value:
        raise AnswerError("malformed", NO_GRADE())
    grade = value["grade"]
    if isinstance(grade, bool) or not isinstance(grade, int):
        raise AnswerError("malformed", NOT_INTEGER(value=repr(str(grade)[:20])))
    if not 0 <= grade <= top:
        problem = OUTSIDE(grade=grade) if top == TOP else OUTSIDE_SCALE(grade=grade, top=top)
        raise AnswerError("malformed", problem)
    reason = value.get("reason", "")
    if not isinstance(reason, str):
        raise AnswerError("malformed", REASON_NOT_TEXT())
    if len(reason) > MAX_REASON_CHARS:
        raise AnswerError("too_long", REASON_LONG(n=len(reason)))
    return Parsed(grade, reason.strip())


def grade_confidence(
    tokens: list[tuple[str, float, list[tuple[str, float]]]], grade: int, top: int = TOP
):
    """Probability the model gave its grade, from token log-probabilities, or None.

    ``tokens`` are (token, logprob, [(alternative, logprob)]) in answer order; the grade is
    the first token that is a lone digit 0–``top``. With alternatives, the probability is
    renormalised over the digit alternatives (so "2 at 0.5 vs 1 at 0.5" reads 0.5).
    """
    pattern = _digit(top)
    for token, logprob, alternatives in tokens:
        if token.strip() != str(grade):
            continue
        digits = {alt.strip(): math.exp(lp) for alt, lp in alternatives if pattern.fullmatch(alt)}
        digits.setdefault(str(grade), math.exp(logprob))
        total = sum(digits.values())
        return digits[str(grade)] / total if total > 0 else None
    return None
