"""Queue orderings that send people where the judge disagrees with them or is unsure."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.assignments import assign_each
from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Membership
from annotator.queue_order import ordered
from judges.engine import execute_job
from judges.models import JudgePair
from judges.priorities import DISAGREE, UNSURE, disagreement, unsureness
from judges.services import plan_job, start_job, update_judge

from .conftest import Sleeps

pytestmark = pytest.mark.django_db


def judge_all(judging, **options):
    plan = plan_job(judging["judge"], level="chunk", chunking="c", **options)
    return execute_job(start_job(plan, enqueue=False).pk, sleep=Sleeps())


def queue_order(client, order: str) -> list[str]:
    body = client.get(reverse("annotator:queue", args=["acme"]), {"order": order}).content.decode()
    return sorted(("q1", "q2"), key=lambda qid: body.index(f">{qid}</a>"))


def test_disagreement_first(login, judging):
    q1, q2 = judging["queries"]
    # anna says q2/d0 is 0; the judge will say 3 (|3 - 0| = 3); on q1 they differ by 1 (d1).
    change_label(
        query=q2,
        annotator=judging["annotator"],
        evidence=Evidence.for_chunk(judging["chunks"][0]),
        grade=0,
    )
    judge_all(judging, scope="all")
    anna = Membership.objects.get(project=judging["project"], user=judging["annotator"])
    scores = disagreement(judging["project"], [q1.pk, q2.pk], anna)
    assert scores == {q1.pk: 1.0, q2.pk: 3.0}
    assert ordered(anna, [q1.pk, q2.pk], DISAGREE) == [q2.pk, q1.pk]
    assign_each(judging["project"], [q1.pk, q2.pk], [judging["annotator"].pk], judging["owner"])
    client = login(judging["annotator"])
    assert queue_order(client, "") == ["q1", "q2"]
    assert queue_order(client, DISAGREE) == ["q2", "q1"]


def test_unsure_first_from_log_probabilities(login, judging):
    q1, q2 = judging["queries"]
    update_judge(judging["judge"], logprobs=True)
    job = judge_all(judging, scope="pool", qids=["q2"])
    sure = JudgePair.objects.filter(job=job, grade=3).exclude(confidence=None)
    assert sure.exists() and all(p.confidence == pytest.approx(0.9) for p in sure)
    unsure = JudgePair.objects.filter(job=job, grade__in=[1, 2]).exclude(confidence=None)
    assert unsure.exists() and all(p.confidence == pytest.approx(0.5) for p in unsure)
    assert unsureness(judging["project"], [q1.pk, q2.pk]) == {q2.pk: float(unsure.count())}
    assign_each(judging["project"], [q1.pk, q2.pk], [judging["annotator"].pk], judging["owner"])
    assert queue_order(login(judging["annotator"]), UNSURE) == ["q2", "q1"]


def test_unsure_without_log_probabilities_means_grades_one_and_two(judging):
    q1, q2 = judging["queries"]
    job = judge_all(judging, scope="pool", qids=["q1"])
    middle = JudgePair.objects.filter(job=job, grade__in=[1, 2]).count()
    assert JudgePair.objects.filter(job=job, confidence__isnull=False).count() == 0
    assert unsureness(judging["project"], [q1.pk, q2.pk]) == {q1.pk: float(middle)}


def test_bad_order_is_400(login, judging):
    client = login(judging["annotator"])
    assert client.get(reverse("annotator:queue", args=["acme"]), {"order": "x"}).status_code == 400


def test_a_blind_annotators_order_rests_on_their_own_labels_and_the_judge(login, personas, judging):
    """Before, "judge disagrees with people first" ranked by everyone's grades, so a blind
    annotator could infer how others had graded from the order of their queue."""
    q1, q2 = judging["queries"]
    judge_all(judging, scope="all")
    # arno grades q2/d0 far from the judge's 3; anna's own labels say q1 differs (by 1).
    change_label(
        query=q2,
        annotator=personas["annotator2"],
        evidence=Evidence.for_chunk(judging["chunks"][0]),
        grade=0,
    )
    project = judging["project"]
    anna = Membership.objects.get(project=project, user=personas["annotator"])
    arno = Membership.objects.get(project=project, user=personas["annotator2"])
    lead = Membership.objects.get(project=project, user=personas["owner"])
    assert disagreement(project, [q1.pk, q2.pk], anna) == {q1.pk: 1.0}
    assert disagreement(project, [q1.pk, q2.pk], arno) == {q2.pk: 3.0}
    # Leads see every person's labels anyway: their order stands on everyone's.
    assert disagreement(project, [q1.pk, q2.pk], lead) == {q1.pk: 1.0, q2.pk: 3.0}
    for member in (anna, arno):
        assign_each(project, [q1.pk, q2.pk], [member.user_id], judging["owner"])
    assert queue_order(login(personas["annotator"]), DISAGREE) == ["q1", "q2"]
    assert queue_order(login(personas["annotator2"]), DISAGREE) == ["q2", "q1"]
