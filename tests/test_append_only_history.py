"""Every history table keeps its rows: saving one again or deleting it is refused."""

from __future__ import annotations

import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import JudgmentHistory
from annotator.models.history import AppendOnlyHistory

pytestmark = pytest.mark.django_db


def test_every_history_table_shares_the_append_only_rule():
    from django.apps import apps

    names = {m.__name__ for m in apps.get_models() if issubclass(m, AppendOnlyHistory)}
    assert {"JudgmentHistory", "NuggetHistory", "QualityHistory", "AnswerJudgmentHistory"} <= names


def test_a_history_row_is_never_changed_nor_deleted(personas, corpus):
    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=2,
    )
    row = JudgmentHistory.objects.get()
    with pytest.raises(ValueError, match="Judgment history is append-only"):
        row.save()
    with pytest.raises(ValueError, match="Judgment history is append-only"):
        row.delete()
    assert JudgmentHistory.objects.count() == 1
