"""Escaping for HTML drawn in Python: the labelling screen's cards, grade buttons, search
hits and quality rows.

Django's ``escape`` and ``conditional_escape`` go through ``keep_lazy``'s wrapper on every
call; a page of 30 search results calls them about a thousand times, and the wrapper cost
more than the escaping. These give the same characters.
"""

from __future__ import annotations

import html


def escaped(value) -> str:
    """``django.utils.html.escape(value)``: ``& < > " '`` replaced, even in safe strings."""
    return html.escape(str(value))


def shown(value) -> str:
    """``{{ value }}`` without localization: safe strings as they are, the rest escaped
    (``django.utils.html.conditional_escape``)."""
    if hasattr(value, "__html__"):
        return str(value.__html__())
    return html.escape(str(value))
