"""Answer runs on the dashboard, the command line and the API: the same numbers; the
drill-down shows each nugget's status and each citation's support."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from api.models import ApiToken

from .test_metrics import gold_evidence, judge_q1

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(answer_run, assessor):
    gold_evidence(answer_run, assessor)
    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 2)
    return answer_run


def dashboard_means(client) -> dict[str, list[str]]:
    body = client.get(reverse("answers:dashboard", args=["acme"])).content.decode()
    rows = {}
    for name, cells in re.findall(r'<tr data-run="([^"]+)">(.*?)</tr>', body, re.S):
        rows[name] = re.findall(r'<td class="num">(.*?)</td>', cells, re.S)[1:]
    return rows


def shown(mean, n) -> str:
    if mean is None:
        return '<span class="muted">–</span>'
    return f'{mean:.3f} <span class="muted">({n})</span>'


def test_dashboard_equals_cli_equals_api(judged, login):
    out = StringIO()
    call_command("answer_metrics", "acme", "--json", stdout=out)
    cli = json.loads(out.getvalue())["answer_runs"]
    assert [r["answer_run"]["name"] for r in cli] == ["sys"]
    token = ApiToken.create_for(judged["viewer"], "ci")[1]
    api = Client().get(
        reverse("answers:api_answer_metrics", args=["acme", judged["run"].pk]),
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert api.status_code == 200
    assert api.json() == cli[0]
    assert cli[0]["measures"]["crag"] == {"mean": 0.5, "answers": 1}
    assert cli[0]["measures"]["citation_validity"]["answers"] == 2
    page = dashboard_means(login(judged["viewer"]))
    from answers.metrics import MEASURES

    expected = [
        shown(cli[0]["measures"][m]["mean"], cli[0]["measures"][m]["answers"]) for m in MEASURES
    ]
    assert page["sys"] == expected
    # The plain table and --runs: the same means.
    out = StringIO()
    call_command("answer_metrics", "acme", "--runs", "sys", stdout=out)
    header, row, sources = out.getvalue().strip().splitlines()
    assert sources == "sources: people"
    assert header.split("\t")[2:] == list(MEASURES)
    assert row.split("\t")[MEASURES.index("crag") + 2] == "0.5000 (1)"


def test_unknown_runs_and_projects_are_refused(judged):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no answer run 'nope'"):
        call_command("answer_metrics", "acme", "--runs", "nope")
    with pytest.raises(CommandError, match="no project"):
        call_command("answer_metrics", "nosuch")


def test_api_metrics_need_live_grades_and_the_projects_run(judged):
    annotator = ApiToken.create_for(judged["annotator"], "ci")[1]
    url = reverse("answers:api_answer_metrics", args=["acme", judged["run"].pk])
    assert Client().get(url, HTTP_AUTHORIZATION=f"Bearer {annotator}").status_code == 403
    viewer = ApiToken.create_for(judged["viewer"], "ci")[1]
    missing = reverse("answers:api_answer_metrics", args=["acme", 999999])
    assert Client().get(missing, HTTP_AUTHORIZATION=f"Bearer {viewer}").status_code == 404


def test_drilldown_shows_each_nuggets_status_and_each_citations_support(judged, login):
    client = login(judged["owner"])
    answer = judged["run"].answers.get(query__qid="q1")
    body = client.get(
        reverse("answers:answer", args=["acme", judged["run"].pk, answer.pk])
    ).content.decode()
    statuses = re.findall(r'<tr data-nugget="(\w+)">.*?<td class="status">(.*?)</td>', body, re.S)
    assert statuses == [("n1", "support"), ("n2", "partial"), ("n3", "not")]
    support = re.findall(r'<td class="support">(.*?)</td><td class="valid">(.*?)</td>', body)
    assert support == [("full", "yes"), ("partial", "no"), ("none", "no")]
    assert "Needs a citation: yes" in body
    run_page = client.get(reverse("answers:run_detail", args=["acme", judged["run"].pk]))
    assert b'data-qid="q1"' in run_page.content


def test_export_metrics_carries_the_answer_table(judged, tmp_path):
    out = StringIO()
    call_command("export_metrics", "acme", "--table", "answers", stdout=out)
    lines = out.getvalue().splitlines()
    header = lines[0].split(",")
    row = lines[1].split(",")
    assert row[0] == "sys"
    assert float(row[header.index("crag")]) == 0.5
    assert row[header.index("crag_answers")] == "1"
