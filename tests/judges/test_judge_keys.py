"""A judge's key comes only from an ASSAY_JUDGE_KEY_<NAME> variable that the operator allows
for the judge's project: nothing else of the server's environment can be named, from the
web or the command line, and no refused value is ever repeated back."""

from __future__ import annotations

import io
import logging

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.urls import reverse

from judges.endpoints import KEY_NOT_SET, key_name_problem
from judges.engine import execute_job
from judges.models import Judge, JudgePair, PairStatus
from judges.services import JudgeError, create_judge, plan_job, start_job, update_judge

from .conftest import KEY, KEY_ENV, Sleeps

pytestmark = pytest.mark.django_db

SERVER_SECRETS = ["SECRET_KEY", "DATABASE_URL", "OPENAI_API_KEY", "EMAIL_HOST_PASSWORD", "HOME"]
KEY_LIKE = [
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t",
    "a3f9c2e1b4d5e6f708192a3b4c5d6e7f",
    "A3F9C2E1B4D5E6F708192A3B4C5D6E7F",
    "ASSAY_JUDGE_KEY_A3F9C2E1B4D5E6F708192A3B4C5D6E7F",
    "dGhpcyBpcyBhIHNlY3JldCBrZXkgMTIzNDU2Nzg5MA==",
    "ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlK1234",
]


def form_data(**changes) -> dict:
    return {
        "slug": "web",
        "name": "Web judge",
        "base_url": "https://llm.example.org/v1",
        "model": "m",
        "api_key_env": "ASSAY_JUDGE_KEY_WEB",
        "prompt": "{{query}} {{passage}} JSON",
        "temperature": "0",
        "max_tokens": "50",
        "timeout_seconds": "10",
        "concurrency": "2",
        "rpm": "0",
        "budget": "10",
        **changes,
    }


def run(judge) -> object:
    job = start_job(plan_job(judge, scope="pool", level="chunk", chunking="c"), enqueue=False)
    return execute_job(job.pk, sleep=Sleeps())


@pytest.mark.parametrize(
    "name", [*SERVER_SECRETS, "ASSAY_JUDGE_KEY_", "ASSAY_JUDGE_KEY_X_PROJECTS"]
)
def test_only_assay_judge_key_variables_can_be_named(name):
    assert key_name_problem(name) is not None
    assert key_name_problem("ASSAY_JUDGE_KEY_OPENAI") is None


@pytest.mark.parametrize("value", KEY_LIKE)
def test_a_value_that_looks_like_a_key_is_refused_as_one(value):
    problem = key_name_problem(value)
    assert problem is not None and problem.code == "judge.key_looks_like_a_key"
    assert value[-12:] not in str(problem)


@pytest.mark.parametrize("value", SERVER_SECRETS + KEY_LIKE)
def test_the_web_form_refuses_any_other_variable_and_never_shows_the_value_back(
    login, judging, public_dns, monkeypatch, value
):
    monkeypatch.setenv("ASSAY_JUDGE_KEY_WEB_PROJECTS", "acme")
    client = login(judging["owner"])
    response = client.post(reverse("judges:list", args=["acme"]), form_data(api_key_env=value))
    assert response.status_code == 400
    assert not Judge.objects.filter(slug="web").exists()
    page = response.content.decode()
    assert "ASSAY_JUDGE_KEY_&lt;NAME&gt;" in page
    if value in KEY_LIKE:
        assert value[-12:] not in page


def test_the_web_form_needs_the_key_allowed_for_the_project(
    login, judging, public_dns, monkeypatch
):
    client = login(judging["owner"])
    url = reverse("judges:list", args=["acme"])
    response = client.post(url, form_data())
    assert (
        response.status_code == 400 and "ASSAY_JUDGE_KEY_WEB_PROJECTS" in response.content.decode()
    )
    monkeypatch.setenv("ASSAY_JUDGE_KEY_WEB_PROJECTS", "other, beta")
    assert client.post(url, form_data()).status_code == 400
    assert not Judge.objects.filter(slug="web").exists()
    monkeypatch.setenv("ASSAY_JUDGE_KEY_WEB_PROJECTS", "beta,acme")
    assert client.post(url, form_data()).status_code == 302
    judge = Judge.objects.get(slug="web")
    assert judge.api_key_env == "ASSAY_JUDGE_KEY_WEB" and not judge.configured_by_operator


def test_one_projects_key_cannot_be_used_by_another_projects_owner(
    login, judging, public_dns, monkeypatch
):
    """otto owns project "other"; the key is the operator's for acme only."""
    monkeypatch.setenv(f"{KEY_ENV}_PROJECTS", "acme")
    client = login(judging["outsider"])
    response = client.post(reverse("judges:list", args=["other"]), form_data(api_key_env=KEY_ENV))
    assert response.status_code == 400
    assert not Judge.objects.filter(project=judging["other"]).exists()
    with pytest.raises(JudgeError, match="not allowed for project other"):
        create_judge(
            judging["other"],
            slug="x",
            name="X",
            base_url="https://llm.example.org/v1",
            model="m",
            api_key_env=KEY_ENV,
        )


def test_the_worker_refuses_a_key_not_allowed_for_the_judges_project(judging, monkeypatch):
    """Checked again when the worker calls: a judge stored before the rule, or whose
    project is no longer listed, sends nothing."""
    judge = judging["judge"]
    Judge.objects.filter(pk=judge.pk).update(configured_by_operator=False)
    judge.refresh_from_db()
    monkeypatch.setenv(f"{KEY_ENV}_PROJECTS", "other")
    job = run(judge)
    assert not judging["server"].requests
    assert set(job.pairs.values_list("status", "failure")) == {(PairStatus.FAILED, "no_key")}
    assert job.pairs.first().detail.code == "judge.key_not_for_project"


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "OPENAI_API_KEY"])
def test_the_worker_never_sends_another_variable_even_one_stored_before_the_rule(
    judging, monkeypatch, name
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-projects-key-0123456789")
    judge = judging["judge"]
    Judge.objects.filter(pk=judge.pk).update(api_key_env=name)
    judge.refresh_from_db()
    job = run(judge)
    assert not judging["server"].requests
    assert job.pairs.first().detail.code == "judge.key_name_rule"


def test_an_operators_judge_uses_any_assay_key_variable(judging):
    """The fixture's judge is the operator's (add_judge): no _PROJECTS listing needed."""
    assert judging["judge"].configured_by_operator
    job = run(judging["judge"])
    assert job.pairs.filter(status=PairStatus.JUDGED).exists()
    assert any(r["auth"] == f"Bearer {KEY}" for r in judging["server"].requests)


def test_changing_an_operators_key_from_the_web_puts_it_under_the_webs_rules(judging):
    judge = judging["judge"]
    update_judge(judge, prompt=judge.prompt + " ")  # not the key nor the endpoint
    judge.refresh_from_db()
    assert judge.configured_by_operator
    with pytest.raises(JudgeError, match="ASSAY_JUDGE_KEY_OTHER_PROJECTS"):
        update_judge(judge, api_key_env="ASSAY_JUDGE_KEY_OTHER")
    judge.refresh_from_db()
    assert judge.api_key_env == KEY_ENV and judge.configured_by_operator


@pytest.mark.parametrize("value", ["SECRET_KEY", "OPENAI_API_KEY", *KEY_LIKE])
def test_add_judge_refuses_other_variables_and_never_prints_the_value(judging, value):
    with pytest.raises(CommandError) as raised:
        call_command(
            "add_judge",
            "acme",
            "Bad",
            "--base-url",
            "http://127.0.0.1:1/v1",
            "--model",
            "m",
            "--api-key-env",
            value,
        )
    assert "ASSAY_JUDGE_KEY_<NAME>" in str(raised.value)
    if value in KEY_LIKE:
        assert value[-12:] not in str(raised.value)
    assert not Judge.objects.filter(slug="bad").exists()


def test_add_judge_is_the_operators_and_needs_no_project_listing(judging, capsys):
    call_command(
        "add_judge",
        "acme",
        "Local",
        "--base-url",
        "http://127.0.0.1:1/v1",
        "--model",
        "m",
        "--api-key-env",
        "ASSAY_JUDGE_KEY_LOCAL",
    )
    assert Judge.objects.get(slug="local").configured_by_operator
    assert "$ASSAY_JUDGE_KEY_LOCAL" in capsys.readouterr().out


def test_a_key_like_name_stored_before_the_rule_is_forgotten(judging, caplog):
    """The migration clears it from the judge and from the failures that named it."""
    import importlib

    migration = importlib.import_module("judges.migrations.0005_judge_configured_by_operator")
    caplog.set_level(logging.DEBUG)
    stored = "a3f9c2e1b4d5e6f708192a3b4c5d6e7f"
    judge = judging["judge"]
    job = run(judge)
    Judge.objects.filter(pk=judge.pk).update(api_key_env=stored)
    JudgePair.objects.filter(job=job).update(
        failure="no_key", detail=KEY_NOT_SET(name=stored).as_json()
    )
    migration.forget_keys(apps, None)
    judge.refresh_from_db()
    assert judge.api_key_env == ""
    out = io.StringIO()
    call_command("dumpdata", "judges", stdout=out)
    assert stored[:8] not in out.getvalue()
    assert JudgePair.objects.filter(job=job).first().detail.params["name"] == "a3f9…"
