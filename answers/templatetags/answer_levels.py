"""``{{ level|answer_level }}``: a judgement level as screens name it (translated)."""

from __future__ import annotations

from django import template

from answers.presenting import ASPECT_LABELS, LEVEL_LABELS
from numerics.answers import CRAG_LEVELS, NEEDS_LEVELS, NUGGET_LEVELS, SUPPORT_LEVELS

register = template.Library()


@register.filter
def answer_level(value: str) -> str:
    return str(LEVEL_LABELS.get(value, value))


@register.filter
def answer_aspect(value: str) -> str:
    """A kind of answer judgement as screens name it (translated)."""
    return str(ASPECT_LABELS.get(value, value))


_LEVELS = {
    "nugget": NUGGET_LEVELS,
    "support": SUPPORT_LEVELS,
    "needs_citation": NEEDS_LEVELS,
    "crag": CRAG_LEVELS,
}


@register.filter
def aspect_value(value, aspect: str) -> str:
    """A stored value (0…3) of a kind of answer judgement as its level's name (``–`` for
    none): ``{{ 2|aspect_value:"nugget" }}`` → "support"."""
    if value is None:
        return "–"
    levels = _LEVELS.get(aspect, ())
    if isinstance(value, int) and 0 <= value < len(levels):
        return answer_level(levels[value])
    return str(value)
