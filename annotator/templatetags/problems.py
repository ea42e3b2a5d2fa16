"""The template filter that shows a stored import problem in the user's language."""

from __future__ import annotations

from django import template

from ..problems import translated

register = template.Library()


@register.filter
def problem(text: str) -> str:
    return translated(str(text))
