"""Whole numbers from requests, bounded: ids and offsets from a URL or a form never overflow
the database's integers (SQLite and PostgreSQL: 64 bits), so they are a 400 or 404, not a 500.
"""

from __future__ import annotations

from django import forms

MAX_WHOLE = 2**53  # beyond any id, offset or count Assay stores


class WholeField(forms.IntegerField):
    """An integer form field with an upper bound (``MAX_WHOLE`` unless given)."""

    def __init__(self, *, max_value: int = MAX_WHOLE, **kwargs):
        super().__init__(max_value=min(max_value, MAX_WHOLE), **kwargs)


def whole(text: str | None) -> int | None:
    """``text`` as a whole number from 0 to ``MAX_WHOLE`` (ASCII digits only), else None."""
    if not text or not (text.isascii() and text.isdigit()) or len(text) > 16:
        return None
    number = int(text)
    return number if number <= MAX_WHOLE else None
