"""The scale benchmark's "right after a label change" figure: the change is a real label
change (history kept, revision moved), back and forth, and the request is timed after it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotator.models import Judgment, JudgmentHistory
from annotator.revisions import revision
from bench.bench_scale import _label_changer, _measure, changed_table
from tests.test_label_revision import small_project

pytestmark = pytest.mark.django_db


def test_the_change_moves_one_grade_back_and_forth_with_history():
    owner = get_user_model().objects.create_user("olga", password="x")
    project = small_project("alpha", owner)["project"]
    label = Judgment.objects.filter(query__project=project).order_by("pk").first()
    grades, before = [label.grade], revision(project.pk).number
    change = _label_changer(project)
    for _ in range(3):
        change()
        label.refresh_from_db()
        grades.append(label.grade)
    assert grades == [3, 2, 1, 2]
    assert revision(project.pk).number == before + 3
    assert JudgmentHistory.objects.filter(judgment=label).count() == 4  # made, 3 changes


class _Client:
    def __init__(self, calls: list):
        self.calls = calls

    def get(self, url):
        self.calls.append(("get", url))
        return type("Response", (), {"status_code": 200})()


def test_measure_times_one_request_after_the_change():
    calls: list = []
    measured = _measure(
        _Client(calls), "/p/", 2, lambda: calls.append("clear"), lambda: calls.append("change")
    )
    assert calls == ["clear", *[("get", "/p/")] * 3, "change", ("get", "/p/")]
    assert measured["changed"] >= 0 and measured["n"] == 2
    assert "changed" not in _measure(_Client([]), "/p/", 2, lambda: None)
    results = [
        {"backend": "postgresql", "size": "large", "pages": {"queue": measured, "home": {}}},
    ]
    text = changed_table(results)
    assert "| queue | " in text and "| home | – |" in text
