"""Problems in the reader's language, and kept in the database as data.

A problem (``formats.errors.Problem``) is a registered code and the values its English
template names; readers, importers and judges raise them, models keep them as JSON
(``ProblemField``, ``ProblemsField``), and only here, when a page or the API shows one,
is its template translated and filled.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext, ngettext

from formats.errors import Problem, render


def shown(problem: Problem | None) -> str:
    """``problem`` in the active language (values that are problems translated too)."""
    return "" if problem is None else render(problem, gettext, ngettext)


def as_data(problem: Problem) -> dict:
    """The problem for JSON answers: its code, its values and its message."""
    return {**problem.as_json(), "message": shown(problem)}


def _stored(value):
    return value.as_json() if isinstance(value, Problem) else value


class ProblemField(models.JSONField):
    """One problem or none, stored as its JSON. Old free text reads back as a ``text``
    problem, shown as it is."""

    def from_db_value(self, value, expression, connection):
        data = super().from_db_value(value, expression, connection)
        return None if data in (None, "") else Problem.from_json(data)

    def get_prep_value(self, value):
        return super().get_prep_value(_stored(value))

    def value_to_string(self, obj):  # dumpdata: the JSON, not the object
        return self.get_prep_value(self.value_from_object(obj))


class ProblemsField(models.JSONField):
    """A list of problems, stored as their JSON; old free text reads back as ``text``
    problems."""

    def from_db_value(self, value, expression, connection):
        data = super().from_db_value(value, expression, connection)
        return [Problem.from_json(item) for item in data or []]

    def get_prep_value(self, value):
        if value is not None:
            value = [_stored(item) for item in value]
        return super().get_prep_value(value)

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))
