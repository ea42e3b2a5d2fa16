"""Template filters of the metric pages."""

from __future__ import annotations

from django import template

from metrics.reports import p_text

register = template.Library()


@register.filter
def p_value(p: float | None) -> str:
    """A p-value as the pages print it (``metrics.reports.p_text``)."""
    return p_text(p)
