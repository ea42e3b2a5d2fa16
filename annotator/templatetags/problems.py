"""The template filter that shows a problem (a code and its values) in the reader's language."""

from __future__ import annotations

from django import template

from formats.errors import Problem

from ..problems import shown

register = template.Library()


@register.filter
def problem(value: Problem | None) -> str:
    return shown(value)
