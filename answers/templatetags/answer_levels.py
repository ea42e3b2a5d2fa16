"""``{{ level|answer_level }}``: a judgement level as screens name it (translated)."""

from __future__ import annotations

from django import template

from answers.presenting import LEVEL_LABELS

register = template.Library()


@register.filter
def answer_level(value: str) -> str:
    return str(LEVEL_LABELS.get(value, value))
