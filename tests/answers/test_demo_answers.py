"""The demo's answer runs: constructed from the nuggets' passages as data/demo's READMEs
say (the files are what the generator writes), with correct, wrong and missing citations;
on the Cranfield demo the dashboard, answer_metrics and the API give the same numbers."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from api.models import ApiToken
from demo.answer_runs import RUNS, build

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


@pytest.mark.parametrize(("project", "chinese"), [("cranfield", False), ("lecard", True)])
def test_the_files_are_what_the_generator_writes(project, chinese):
    runs = build(DEMO / project, chinese)
    for name in RUNS:
        lines = (DEMO / project / "answers" / f"{name}.jsonl").read_text(encoding="utf-8")
        assert [json.loads(line) for line in lines.splitlines()] == runs[name]
        assert len(runs[name]) >= 10
    loose = [s for row in runs["loose"] for s in row["sentences"]]
    assert any(not s["citations"] for s in loose)  # missing citations
    assert any("start" not in c for s in loose for c in s["citations"])


@pytest.fixture(scope="module")
def cranfield(demo_module, django_db_blocker):
    """The Cranfield project as ``manage.py demo`` builds it (tests.demo_database)."""
    from annotator.models import Project

    with django_db_blocker.unblock():
        return Project.objects.get(slug="cranfield")


@pytest.mark.slow
@pytest.mark.django_db
def test_demo_answer_runs_dashboard_equals_cli_equals_api(cranfield, client):
    from answers.models import AnswerRun

    runs = {r.name: r for r in AnswerRun.objects.filter(project=cranfield)}
    assert sorted(runs) == ["grounded", "loose", "padded"]
    assert all(r.n_answers >= 10 for r in runs.values())
    out = StringIO()
    call_command("answer_metrics", "cranfield", "--json", stdout=out)
    cli = {r["answer_run"]["name"]: r for r in json.loads(out.getvalue())["answer_runs"]}
    validity = {name: cli[name]["measures"]["citation_validity"]["mean"] for name in cli}
    # Every grounded citation is a relevant passage; loose and padded cite unlisted documents.
    assert validity["grounded"] == 1.0
    assert validity["loose"] < 1.0 and validity["padded"] < 1.0
    assert cli["loose"]["measures"]["coverage_all"]["mean"] < 1.0
    owner = cranfield.memberships.get(user__username="demo-owner").user
    token = ApiToken.create_for(owner, "ci")[1]
    client.force_login(owner)
    body = client.get(reverse("answers:dashboard", args=["cranfield"])).content.decode()
    for name, run in runs.items():
        api = Client().get(
            reverse("answers:api_answer_metrics", args=["cranfield", run.pk]),
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        assert api.json() == cli[name]
        row = re.search(rf'<tr data-run="{name}">(.*?)</tr>', body, re.S).group(1)
        cells = re.findall(r'<td class="num">(.*?)</td>', row, re.S)[1:]
        shown = [
            "–" if m["mean"] is None else f"{m['mean']:.3f}" for m in cli[name]["measures"].values()
        ]
        assert [re.sub(r"<[^>]+>|\s*\(\d+\)", "", c).strip() for c in cells] == shown


@pytest.mark.slow
@pytest.mark.django_db
def test_lecard_answer_runs_load_in_chinese(demo_module):
    from annotator.models import Project
    from answers.metrics import run_scores
    from answers.models import AnswerRun
    from demo.loading import PROJECTS, _project, _users

    _project(PROJECTS[1], _users(), say=lambda _message: None)  # built already: adds nothing
    project = Project.objects.get(slug="lecard")
    runs = {r.name: r for r in AnswerRun.objects.filter(project=project)}
    assert sorted(runs) == ["grounded", "loose", "padded"]
    assert all(r.n_answers >= 10 for r in runs.values())
    grounded = run_scores(runs["grounded"]).summary()["citation_validity"]
    assert grounded["mean"] == 1.0 and grounded["answers"] >= 10
    assert run_scores(runs["padded"]).summary()["citation_validity"]["mean"] < 1.0


@pytest.mark.slow
@pytest.mark.django_db
def test_demo_answer_comparison_page_equals_cli_equals_api(cranfield, client):
    from answers.models import AnswerRun

    runs = {r.name: r for r in AnswerRun.objects.filter(project=cranfield)}
    out = StringIO()
    call_command(
        "answer_metrics",
        "cranfield",
        "--runs",
        "loose",
        "padded",
        "--baseline",
        "grounded",
        "--json",
        stdout=out,
    )
    cli = json.loads(out.getvalue())
    owner = cranfield.memberships.get(user__username="demo-owner").user
    token = ApiToken.create_for(owner, "ci")[1]
    ids = f"{runs['grounded'].pk},{runs['loose'].pk},{runs['padded'].pk}"
    api = Client().get(
        reverse("answers:api_answer_compare", args=["cranfield"]),
        {"runs": ids},
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert api.json() == cli
    validity = cli["measures"]["citation_validity"]
    assert validity["queries"] >= 10 and validity["baseline_mean"] == 1.0
    assert all(r["delta"] < 0 and r["wins"] == 0 for r in validity["runs"])
    client.force_login(owner)
    body = client.get(
        reverse("answers:compare", args=["cranfield"]), {"runs": ids.split(",")}
    ).content.decode()
    for name, measure in cli["measures"].items():
        table = re.search(rf'<table[^>]*data-measure="{name}"[^>]*>(.*?)</table>', body, re.S)
        assert f'data-queries="{measure["queries"]}"' in table.group(0)
        for row in measure["runs"]:
            cells = re.search(rf'<tr data-run="{row["name"]}">(.*?)</tr>', table.group(1), re.S)
            shown = re.findall(r'<td class="num">(.*?)</td>', cells.group(1), re.S)
            assert shown[:2] == [f"{row['mean']:.4f}", f"{row['delta']:.4f}"]
            assert shown[3] == f"{row['wins']} / {row['ties']} / {row['losses']}"
    # The gate: a citation-validity drop of more than 0.05 fails the loose run.
    gate = Client().get(
        reverse("answers:api_answer_gate", args=["cranfield", runs["loose"].pk]),
        {"baseline": runs["grounded"].pk, "measure": "citation_validity", "max_drop": "0.05"},
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert gate.status_code == 422 and gate.json()["failing"][0]["measure"] == "citation_validity"
