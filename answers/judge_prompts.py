"""What an LLM judge is asked about an answer, and how its reply is read — strictly.

Two questions, each one call:

- **nugget assignment** (one call per answer): the question, the answer and the query's
  nuggets, numbered; the reply gives every nugget's level — ``support``, ``partial`` or
  ``not`` (TREC RAG 2024's assignment scale);
- **citation support** (one call per citation): the question, the sentence and the cited
  text; the reply grades how far the cited text supports the sentence — ``full``,
  ``partial`` or ``none`` (TREC RAG 2024's support scale).

Each prompt speaks the query's language (English, or Chinese when the query is mostly
Chinese characters, as the judges' default prompt does); the levels are the same English
words in both, so one reader reads both. A reply that is not exactly the JSON asked for —
another shape, a level off the scale, a nugget missing, repeated or unknown, extra keys,
text around the JSON — is refused with the reason (``UnreadableReply``), never guessed.
No Django import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from formats.errors import Problem, define, gettext_noop
from judges.prompts import language_of
from numerics.answers import NUGGET_LEVELS, SUPPORT_LEVELS

MAX_TEXT_CHARS = 6000  # an answer or a cited text longer than this is cut, and says so
MAX_REPLY_CHARS = 20_000
MAX_REASON_CHARS = 1000

NOT_ONE_OBJECT = define(
    "answer_judge.not_json", gettext_noop("the reply is not one JSON object and nothing else")
)
EXTRA_KEYS = define(
    "answer_judge.extra_keys", gettext_noop("the reply has keys that were not asked for: %(keys)s")
)
NO_NUGGET_LIST = define("answer_judge.no_nuggets", gettext_noop('the reply has no "nuggets" list'))
BAD_NUGGET_ITEM = define(
    "answer_judge.bad_item",
    gettext_noop('item %(n)s of the list is not {"nugget": <number>, "support": <level>}'),
)
UNKNOWN_NUGGET = define(
    "answer_judge.unknown_nugget",
    gettext_noop("the reply names nugget %(number)s; the prompt numbered 1–%(n)s"),
)
REPEATED_NUGGET = define(
    "answer_judge.repeated_nugget", gettext_noop("the reply names nugget %(number)s twice")
)
MISSING_NUGGETS = define(
    "answer_judge.missing_nuggets", gettext_noop("the reply leaves out nuggets %(numbers)s")
)
BAD_LEVEL = define(
    "answer_judge.bad_level",
    gettext_noop("%(level)s is not one of %(levels)s"),
)
REASON_NOT_TEXT = define(
    "answer_judge.reason_not_text", gettext_noop("the reason is not text or is too long")
)
REPLY_TOO_LONG = define("answer_judge.too_long", gettext_noop("the reply has %(n)s characters"))


class UnreadableReply(ValueError):
    """A reply that is not the JSON asked for; ``problem`` says why."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS] + " […]"


_NUGGET_PROMPT = {
    "en": (
        "You judge which facts an answer to a question contains. The facts are the "
        "question's nuggets: what a good answer must say.\n"
        "Question: {query}\n\n"
        "Answer:\n{answer}\n\n"
        "Nuggets:\n{nuggets}\n\n"
        'For each nugget, say "support" if the answer states it fully, "partial" if the '
        'answer states part of it or states it vaguely, and "not" if the answer does not '
        "state it. Judge the answer's text only, not what you know.\n"
        'Answer with one JSON object only, every nugget once: {{"nuggets": [{{"nugget": 1, '
        '"support": "support"}}, {{"nugget": 2, "support": "not"}}]}}'
    ),
    "zh": (
        "你要判断一个问题的回答包含了哪些要点。要点（nugget）是好的回答必须说出的事实。\n"
        "问题：{query}\n\n"
        "回答：\n{answer}\n\n"
        "要点：\n{nuggets}\n\n"
        '对每个要点：回答完整说出它，写 "support"；只说出一部分或说得含糊，写 "partial"；'
        '没有说出，写 "not"。只依据回答的文字判断，不要依据你自己的知识。\n'
        '只回答一个 JSON 对象，每个要点恰好一次：{{"nuggets": [{{"nugget": 1, '
        '"support": "support"}}, {{"nugget": 2, "support": "not"}}]}}'
    ),
}

_SUPPORT_PROMPT = {
    "en": (
        "You judge whether a cited text supports a sentence of an answer.\n"
        "Question: {query}\n\n"
        "Sentence: {sentence}\n\n"
        'Cited text (from "{title}"):\n{cited}\n\n'
        'Grade "full" if the cited text supports everything the sentence claims, "partial" '
        'if it supports some of it, and "none" if it supports none of it.\n'
        'Answer with one JSON object only: {{"support": "full", "reason": "<one short '
        'sentence>"}}'
    ),
    "zh": (
        "你要判断一段被引用的文字是否支持回答中的一个句子。\n"
        "问题：{query}\n\n"
        "句子：{sentence}\n\n"
        "被引用的文字（出自“{title}”）：\n{cited}\n\n"
        '被引用的文字支持句子的全部说法，写 "full"；只支持一部分，写 "partial"；'
        '完全不支持，写 "none"。\n'
        '只回答一个 JSON 对象：{{"support": "full", "reason": "<一句简短的中文理由>"}}'
    ),
}


def nugget_prompt(query: str, answer: str, nuggets: list[str]) -> str:
    """The nugget-assignment prompt: ``nuggets`` numbered from 1 in the order given."""
    numbered = "\n".join(f"[{n}] {text}" for n, text in enumerate(nuggets, start=1))
    template = _NUGGET_PROMPT[language_of(query)]
    return template.format(query=query, answer=_clip(answer), nuggets=numbered)


def support_prompt(query: str, sentence: str, cited: str, title: str) -> str:
    """The citation-support prompt for one citation of one sentence."""
    template = _SUPPORT_PROMPT[language_of(query)]
    return template.format(query=query, sentence=sentence, cited=_clip(cited), title=title)


def _object(text: str | None, allowed: set[str]) -> dict:
    if text is None or len(text) > MAX_REPLY_CHARS:
        raise UnreadableReply(REPLY_TOO_LONG(n=len(text or "")))
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise UnreadableReply(NOT_ONE_OBJECT()) from None
    if not isinstance(value, dict):
        raise UnreadableReply(NOT_ONE_OBJECT())
    extra = sorted(set(value) - allowed)
    if extra:
        raise UnreadableReply(EXTRA_KEYS(keys=", ".join(map(repr, extra[:5]))))
    return value


def _level(value, levels: tuple[str, ...]) -> int:
    if not isinstance(value, str) or value not in levels:
        raise UnreadableReply(BAD_LEVEL(level=repr(str(value)[:30]), levels=", ".join(levels)))
    return levels.index(value)


def _reason(value) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_REASON_CHARS:
        raise UnreadableReply(REASON_NOT_TEXT())
    return value.strip()


@dataclass(frozen=True)
class Assignment:
    """Each nugget's level (0 not, 1 partial, 2 support), in the prompt's order."""

    values: tuple[int, ...]


def read_nuggets(text: str | None, n_nuggets: int) -> Assignment:
    """Every nugget's level from a reply to ``nugget_prompt`` over ``n_nuggets`` nuggets;
    ``UnreadableReply`` unless each nugget 1…n is named exactly once with a level."""
    value = _object(text, {"nuggets"})
    items = value.get("nuggets")
    if not isinstance(items, list):
        raise UnreadableReply(NO_NUGGET_LIST())
    found: dict[int, int] = {}
    for position, item in enumerate(items, start=1):
        if not isinstance(item, dict) or set(item) - {"nugget", "support", "reason"}:
            raise UnreadableReply(BAD_NUGGET_ITEM(n=position))
        number = item.get("nugget")
        if isinstance(number, bool) or not isinstance(number, int) or "support" not in item:
            raise UnreadableReply(BAD_NUGGET_ITEM(n=position))
        if not 1 <= number <= n_nuggets:
            raise UnreadableReply(UNKNOWN_NUGGET(number=number, n=n_nuggets))
        if number in found:
            raise UnreadableReply(REPEATED_NUGGET(number=number))
        found[number] = _level(item["support"], NUGGET_LEVELS)
        _reason(item.get("reason"))
    missing = [n for n in range(1, n_nuggets + 1) if n not in found]
    if missing:
        raise UnreadableReply(MISSING_NUGGETS(numbers=", ".join(map(str, missing[:20]))))
    return Assignment(tuple(found[n] for n in range(1, n_nuggets + 1)))


@dataclass(frozen=True)
class Support:
    """A citation's support (0 none, 1 partial, 2 full) and the judge's reason."""

    value: int
    reason: str


def read_support(text: str | None) -> Support:
    """The grade of a reply to ``support_prompt``; ``UnreadableReply`` otherwise."""
    value = _object(text, {"support", "reason"})
    if "support" not in value:
        raise UnreadableReply(BAD_LEVEL(level="—", levels=", ".join(SUPPORT_LEVELS)))
    return Support(_level(value["support"], SUPPORT_LEVELS), _reason(value.get("reason")))
