"""Suggestions for annotators in post-edit mode, from a source another app registers.

Off by default (``Project.post_edit``): annotators label blind. When an owner turns it on,
each candidate card shows the suggestion the source gives for its chunk (the ``judges``
app registers the newest LLM judge version's grade and reason), and every label records
whether a suggestion was on screen, so calibration can leave post-edited labels out.
This app never imports the source's app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .models import Project, Query


@dataclass(frozen=True)
class Suggestion:
    grade: int
    reason: str
    source: str


SuggestionSource = Callable[[Query, list[int]], dict[int, Suggestion]]
_source: SuggestionSource | None = None


def register_suggestion_source(source: SuggestionSource) -> None:
    global _source
    _source = source


def suggestions(project: Project, query: Query, chunk_pks: list[int]) -> dict[int, Suggestion]:
    """{chunk pk: suggestion} for these chunks of the query; empty unless post-edit is on."""
    if not project.post_edit or _source is None or not chunk_pks:
        return {}
    return _source(query, chunk_pks)
