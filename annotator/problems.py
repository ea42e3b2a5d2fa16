"""Problems in the reader's language: a stored code and its values, said through gettext.

A problem (``formats.errors.Problem``) is a registered code and the values its English
template names; readers and importers raise them, import jobs store them as JSON, and
only here, when a page or the API shows one, is its template translated and filled.
"""

from __future__ import annotations

from django.utils.translation import gettext

from formats.errors import Problem, render


def shown(problem: Problem) -> str:
    """``problem`` in the active language (values that are problems translated too)."""
    return render(problem, gettext)


def as_data(problem: Problem) -> dict:
    """The problem for JSON answers: its code, its values and its message."""
    return {**problem.as_json(), "message": shown(problem)}
