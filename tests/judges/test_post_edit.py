"""Post-edit mode: off by default; when on, annotators see the judge's suggestion and every
label records whether a suggestion was shown; calibration leaves those labels out."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.models import Judgment, JudgmentHistory
from judges.calibration import calibrate
from judges.engine import execute_job
from judges.services import plan_job, start_job

from .conftest import Sleeps

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(judging):
    plan = plan_job(judging["judge"], scope="all", level="chunk", chunking="c")
    job = execute_job(start_job(plan, enqueue=False).pk, sleep=Sleeps())
    return {**judging, "job": job}


def label_page(client, judged) -> str:
    url = reverse("annotator:label_query", args=["acme", judged["queries"][1].pk])
    return client.get(url).content.decode()


def test_off_by_default_annotators_see_no_suggestion(login, judged):
    assert not judged["project"].post_edit
    body = label_page(login(judged["annotator"]), judged)
    assert 'class="suggestion"' not in body and "reason for grade" not in body
    assert 'name="suggested"' not in body


def test_post_edit_shows_the_suggestion_and_labels_record_it(login, judged):
    project = judged["project"]
    project.post_edit = True
    project.save()
    client = login(judged["annotator"])
    body = label_page(client, judged)
    chunk = judged["chunks"][0]  # GRADE=3
    assert f'id="suggestion-{chunk.pk}"' in body and "reason for grade 3" in body
    url = reverse("annotator:label_query_judge", args=["acme", judged["queries"][1].pk])
    client.post(url, {"chunk": chunk.pk, "grade": 3, "suggested": "1"})
    label = Judgment.objects.get(
        annotator=judged["annotator"], query=judged["queries"][1], chunk=chunk
    )
    assert label.suggestion_shown
    assert JudgmentHistory.objects.filter(judgment=label).get().suggestion_shown
    # A label given without a suggestion on screen records that too.
    other = judged["chunks"][3]
    client.post(url, {"chunk": other.pk, "grade": 0})
    assert not Judgment.objects.get(
        annotator=judged["annotator"], chunk=other, query=judged["queries"][1]
    ).suggestion_shown


def test_suggested_flag_is_ignored_while_post_edit_is_off(login, judged):
    client = login(judged["annotator"])
    chunk = judged["chunks"][0]
    url = reverse("annotator:label_query_judge", args=["acme", judged["queries"][1].pk])
    client.post(url, {"chunk": chunk.pk, "grade": 3, "suggested": "1"})
    assert not Judgment.objects.get(
        annotator=judged["annotator"], chunk=chunk, query=judged["queries"][1]
    ).suggestion_shown


def test_calibration_leaves_post_edited_labels_out(login, judged):
    before = calibrate(judged["project"], "people", "judge:fake").agreement["n"]
    project = judged["project"]
    project.post_edit = True
    project.save()
    client = login(judged["annotator"])
    url = reverse("annotator:label_query_judge", args=["acme", judged["queries"][1].pk])
    client.post(url, {"chunk": judged["chunks"][0].pk, "grade": 3, "suggested": "1"})
    client.post(url, {"chunk": judged["chunks"][3].pk, "grade": 0})
    after = calibrate(judged["project"], "people", "judge:fake").agreement["n"]
    assert after == before + 1  # the post-edited label is left out, the blind one counts
