"""Small template helpers of the judge pages: a figure with its interval, a dict lookup."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext as _

register = template.Library()


@register.simple_tag
def figure(value: dict) -> str:
    """Two table cells: the value (3 decimals, or "not defined") and its interval."""
    number = value.get("value")
    interval = value.get("interval")
    shown = _("not defined") if number is None else f"{number:.3f}"
    span = f"{interval[0]:.3f} – {interval[1]:.3f}" if interval else ""
    return format_html('<td class="num">{}</td><td>{}</td>', shown, span)


@register.filter
def get(mapping: dict, key):
    return mapping.get(key) if mapping else None
