"""The answers pages for LLM judges: owners see a job's cost before starting it from the
answer runs page, the job is a judging job like any other; the calibration page reads in
English and in Chinese."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judges.engine import execute_job
from judges.models import JobKind, JudgeJob
from tests.judges.conftest import Sleeps
from tests.test_zh_every_page import ZH, data_values, english_words

pytestmark = pytest.mark.django_db


def test_owners_see_the_cost_then_start_an_answers_job(judged, client):
    client.force_login(judged["owner"])
    dashboard = client.get(reverse("answers:dashboard", args=["acme"])).content.decode()
    url = reverse("answers:llm_judging", args=["acme"])
    assert url in dashboard and reverse("answers:calibration", args=["acme"]) in dashboard
    page = client.get(url, {"judge": judged["judge"].pk, "runs": ["sys"]})
    body = page.content.decode()
    assert page.status_code == 200
    assert 'data-calls="5"' in body and "1 nugget calls and 4 citation calls" in body
    assert not JudgeJob.objects.exists()  # showing the cost starts nothing
    response = client.post(
        url, {"judge": judged["judge"].pk, "runs": ["sys"], "aspects": ["nugget", "support"]}
    )
    job = JudgeJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("judges:job", args=["acme", job.pk])
    assert (job.kind, job.n_pairs, job.created_by) == (JobKind.ANSWERS, 5, judged["owner"])
    execute_job(job.pk, sleep=Sleeps())
    job_page = client.get(response["Location"]).content.decode()
    assert "Answer judgements" in job_page
    # Judged now: the page says there is nothing to ask, and a POST starts nothing.
    again = client.get(url, {"judge": judged["judge"].pk}).content.decode()
    assert 'id="nothing-to-ask"' in again
    assert client.post(url, {"judge": judged["judge"].pk}).status_code == 400
    assert JudgeJob.objects.count() == 1
    assert f'href="{reverse("judges:job", args=["acme", job.pk])}"' in again


def test_bad_options_are_refused_and_others_may_not_start_jobs(judged, client):
    client.force_login(judged["owner"])
    url = reverse("answers:llm_judging", args=["acme"])
    assert client.get(url, {"judge": judged["judge"].pk, "max": "0"}).status_code == 400
    assert client.get(url, {"judge": judged["judge"].pk, "runs": ["nope"]}).status_code == 400
    assert client.get(url, {"judge": "x"}).status_code == 400
    assert client.get(url, {"judge": 99999}).status_code == 404
    assert client.post(url, {"judge": judged["judge"].pk, "max": "-1"}).status_code == 400
    assert not JudgeJob.objects.exists()
    for persona in ("adjudicator", "viewer", "annotator"):
        client.force_login(judged[persona])
        assert client.get(url).status_code == 403
        assert client.post(url, {"judge": judged["judge"].pk}).status_code == 403
    client.force_login(judged["viewer"])
    body = client.get(reverse("answers:dashboard", args=["acme"])).content.decode()
    assert url not in body and reverse("answers:calibration", args=["acme"]) in body
    assert not JudgeJob.objects.exists()


@pytest.fixture
def with_calibration(judged, client):
    from answers.judging import Target, change_judgment
    from answers.models import Aspect

    client.force_login(judged["owner"])
    client.post(reverse("answers:llm_judging", args=["acme"]), {"judge": judged["judge"].pk})
    execute_job(JudgeJob.objects.get().pk, sleep=Sleeps())
    answer = judged["run"].answers.get(query__qid="q1")
    for key, value in (("n1", 2), ("n2", 1), ("n3", 0)):
        change_judgment(
            answer=answer,
            annotator=judged["annotator"],
            target=Target(Aspect.NUGGET, judged["nuggets"][key].pk),
            value=value,
        )
    for citation, value in zip(answer.citations.order_by("pk"), (2, 0, 0), strict=True):
        change_judgment(
            answer=answer,
            annotator=judged["annotator"],
            target=Target(Aspect.SUPPORT, citation.pk),
            value=value,
        )
    return judged


def test_the_calibration_page_shows_both_aspects_and_trecs_figure(with_calibration, client):
    client.force_login(with_calibration["viewer"])
    body = client.get(reverse("answers:calibration", args=["acme"])).content.decode()
    # people (2, 1, 0) against the judge (2, 2, 0) on the nuggets: 2 of 3 agree.
    assert 'data-aspect="nugget" data-n="3" data-exact="0.6667"' in body
    # support: people (2, 0, 0), the judge (2, 2, 0): 2 of 3.
    assert 'data-aspect="support" data-n="3" data-exact="0.6667"' in body
    assert "TREC 2024 RAG track: 56 % exact agreement" in body
    assert 'id="confusion-nugget"' in body and 'id="ranking-all_strict"' in body


@pytest.mark.parametrize("name", ["answers:calibration", "answers:llm_judging"])
def test_the_new_pages_read_in_chinese(with_calibration, client, name):
    client.force_login(with_calibration["owner"])
    query = {"judge": with_calibration["judge"].pk} if name == "answers:llm_judging" else {}
    response = client.get(reverse(name, args=["acme"]), query, **ZH)
    assert response.status_code == 200
    body = response.content.decode()
    strings, words = data_values()
    where: dict[str, str] = {}
    assert english_words(body, strings, words, where) == [], where
    if name == "answers:calibration":
        assert "TREC 2024 RAG 评测" in body and "56 %" in body and "运行排名的一致性" in body
    else:
        assert "无可询问" in body  # judged already: the plan says so in Chinese
