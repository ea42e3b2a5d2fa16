"""Leads settle disputed answer judgements: the disputes listed, the final value kept in
history and taken by the measures before the annotators' values."""

from __future__ import annotations

import pytest
from django.urls import reverse

from answers.adjudication import disputes
from answers.metrics import run_scores
from answers.models import AnswerAdjudication, AnswerAdjudicationHistory, Aspect

from .test_metrics import judge_q1

pytestmark = pytest.mark.django_db


@pytest.fixture
def disputed(answer_run):
    # anna and arno differ on n2 (partial / support) and the grade (perfect / missing).
    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    judge_q1(answer_run, answer_run["annotator2"], {"n1": 2, "n2": 2, "n3": 0}, [2, 1, 0], 1, 1)
    return answer_run


def test_disputes_are_the_targets_people_judged_differently(disputed):
    found = {(d.target.aspect, d.target.pk): d.values for d in disputes(disputed["project"])}
    n2 = disputed["nuggets"]["n2"].pk
    assert found == {
        (Aspect.NUGGET, n2): {"anna": 1, "arno": 2},
        (Aspect.CRAG, None): {"anna": 3, "arno": 1},
    }


def test_a_lead_sets_the_final_value_on_the_page(disputed, login):
    client = login(disputed["adjudicator"])
    page = client.get(reverse("answers:disputes", args=["acme"]))
    assert page.status_code == 200 and b'data-aspect="crag"' in page.content
    answer = disputed["run"].answers.get(query__qid="q1")
    assert run_scores(disputed["run"]).summary()["crag"]["mean"] == 0.0  # low median: missing
    url = reverse("answers:adjudicate", args=["acme", answer.pk])
    response = client.post(url, {"aspect": "crag", "value": 3, "reason": "complete"})
    assert response.status_code == 302
    assert AnswerAdjudication.objects.get().value == 3
    assert run_scores(disputed["run"]).summary()["crag"]["mean"] == 1.0
    client.post(url, {"aspect": "crag", "value": 2, "reason": "complete"})
    history = list(AnswerAdjudicationHistory.objects.values_list("old_value", "new_value"))
    assert history == [(None, 3), (3, 2)]
    # A bad value writes nothing.
    client.post(url, {"aspect": "crag", "value": 7})
    assert AnswerAdjudicationHistory.objects.count() == 2


def test_annotators_do_not_adjudicate(disputed, login):
    client = login(disputed["annotator"])
    assert client.get(reverse("answers:disputes", args=["acme"])).status_code == 403
    answer = disputed["run"].answers.get(query__qid="q1")
    url = reverse("answers:adjudicate", args=["acme", answer.pk])
    assert client.post(url, {"aspect": "crag", "value": 3}).status_code == 403
    assert not AnswerAdjudication.objects.exists()


def test_the_page_shows_the_decision_filters_open_disputes_and_clears(disputed, login):
    client = login(disputed["adjudicator"])
    page_url = reverse("answers:disputes", args=["acme"])
    answer = disputed["run"].answers.get(query__qid="q1")
    url = reverse("answers:adjudicate", args=["acme", answer.pk])
    response = client.post(url, {"aspect": "crag", "value": 3, "reason": "complete", "open": "1"})
    assert response.url == page_url + "?open=1"
    body = client.get(page_url).content.decode()
    assert "Set by adam: complete" in body and "data-clear" in body
    open_only = client.get(page_url, {"open": "1"}).content.decode()
    assert 'data-aspect="nugget"' in open_only and 'data-aspect="crag"' not in open_only
    zh = client.get(page_url, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "由 adam 设定" in zh and "清除" in zh
    # Clearing removes the final value (kept in history); the measures go back to people's.
    client.post(url, {"aspect": "crag", "value": "", "reason": ""})
    assert not AnswerAdjudication.objects.exists()
    history = list(AnswerAdjudicationHistory.objects.values_list("old_value", "new_value"))
    assert history == [(None, 3), (3, None)]
    assert run_scores(disputed["run"]).summary()["crag"]["mean"] == 0.0
