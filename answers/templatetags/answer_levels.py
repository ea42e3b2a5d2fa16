"""``{{ level|answer_level }}``: a judgement level as screens name it (translated)."""

from __future__ import annotations

from django import template

from answers.presenting import ASPECT_LABELS, LEVEL_LABELS

register = template.Library()


@register.filter
def answer_level(value: str) -> str:
    return str(LEVEL_LABELS.get(value, value))


@register.filter
def answer_aspect(value: str) -> str:
    """A kind of answer judgement as screens name it (translated)."""
    return str(ASPECT_LABELS.get(value, value))
