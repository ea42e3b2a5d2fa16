"""Judge labels stay out of gold unless named; owners see the judge's reason beside its grade."""

from __future__ import annotations

import pytest
from django.urls import reverse

from gold.services import ConsensusPolicy, freeze_gold_set
from judges.engine import execute_job
from judges.services import plan_job, start_job

from .conftest import Sleeps

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(judging):
    plan = plan_job(judging["judge"], scope="all", level="chunk", chunking="c")
    job = execute_job(start_job(plan, enqueue=False).pk, sleep=Sleeps())
    return {**judging, "job": job, "judge_name": job.version.annotator.username}


def test_gold_leaves_the_judge_out_unless_named(judged):
    project = judged["project"]
    people = freeze_gold_set(project, "people", policy=ConsensusPolicy())
    assert set(people.labels.values_list("annotator", flat=True)) == {"anna"}
    named = freeze_gold_set(
        project, "with-judge", policy=ConsensusPolicy(), annotators=["anna", judged["judge_name"]]
    )
    assert judged["judge_name"] in set(named.labels.values_list("annotator", flat=True))


def test_owner_sees_the_reason_beside_the_judge_grade_annotator_sees_nothing(login, judged):
    url = reverse("annotator:label_query", args=["acme", judged["queries"][0].pk])
    owner_page = login(judged["owner"]).get(url).content.decode()
    assert judged["judge_name"] in owner_page
    assert '<span class="other-note">(reason for grade 3)</span>' in owner_page
    annotator_page = login(judged["annotator"]).get(url).content.decode()
    assert judged["judge_name"] not in annotator_page
    assert "reason for grade" not in annotator_page
