"""The post-edit mode's suggestions: the newest judge version's grade and reason per chunk."""

from __future__ import annotations

from annotator.models import Judgment, Query
from annotator.suggestions import Suggestion

from .priorities import newest_version


def judge_suggestions(query: Query, chunk_pks: list[int]) -> dict[int, Suggestion]:
    version = newest_version(query.project)
    if version is None:
        return {}
    labels = Judgment.objects.filter(
        annotator=version.annotator, query=query, chunk_id__in=chunk_pks
    ).values_list("chunk_id", "grade", "note")
    return {chunk: Suggestion(grade, note, str(version)) for chunk, grade, note in labels}
