"""The template filter that shows `backquoted` words of a help text as code (field names)."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

QUOTED = re.compile(r"`([^`]+)`")


@register.filter
def code_spans(text) -> SafeString:
    """Escaped text with each `x` shown as <code>x</code>: names typed as they are."""
    pieces = QUOTED.split(str(text))
    html = [
        format_html("<code>{}</code>", piece) if index % 2 else escape(piece)
        for index, piece in enumerate(pieces)
    ]
    return mark_safe("".join(html))  # noqa: S308 - every piece is escaped above
