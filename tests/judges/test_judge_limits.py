"""Every judge setting has a documented range (judges.models.LIMITS), enforced by the web
form, add_judge and the model, and clamped by the worker for values stored before."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judges.engine import endpoint_of, make_caller
from judges.models import LIMITS, Judge
from judges.services import plan_job, start_job

from .conftest import KEY_ENV, Sleeps

pytestmark = pytest.mark.django_db

# The security review's values: a job that could hold a worker for days.
TOO_BIG = {
    "timeout_seconds": "1000000",
    "concurrency": "32767",
    "budget": "2147483647",
    "max_tokens": "10000000",
    "rpm": "100000000",
}
FLAGS = {
    "timeout_seconds": "--timeout",
    "concurrency": "--concurrency",
    "budget": "--budget",
    "max_tokens": "--max-tokens",
    "rpm": "--rpm",
}


def settings_form(judge: Judge, **changes) -> dict:
    return {
        "name": judge.name,
        "base_url": judge.base_url,
        "model": judge.model,
        "api_key_env": judge.api_key_env,
        "prompt": judge.prompt,
        "temperature": "0",
        "max_tokens": "200",
        "timeout_seconds": "5",
        "concurrency": "3",
        "rpm": "0",
        "budget": "500",
        **changes,
    }


def test_the_limits_are_the_documented_ones():
    assert LIMITS == {
        "temperature": (0.0, 2.0),
        "max_tokens": (1, 32_768),
        "timeout_seconds": (0.1, 300.0),
        "concurrency": (1, 16),
        "rpm": (0, 10_000),
        "budget": (1, 100_000),
    }


@pytest.mark.parametrize("field", sorted(TOO_BIG))
def test_the_web_form_refuses_a_setting_over_its_limit(login, judging, field):
    judge = judging["judge"]
    client = login(judging["owner"])
    url = reverse("judges:detail", args=["acme", judge.pk])
    response = client.post(url, settings_form(judge, **{field: TOO_BIG[field]}))
    assert response.status_code == 400
    judge.refresh_from_db()
    assert str(getattr(judge, field)) != TOO_BIG[field]
    high = LIMITS[field][1]
    assert client.post(url, settings_form(judge, **{field: str(high)})).status_code == 302


@pytest.mark.parametrize("field", sorted(TOO_BIG))
def test_add_judge_refuses_a_setting_over_its_limit(judging, field):
    flag = FLAGS[field]
    with pytest.raises(CommandError, match=f"{flag} must be between"):
        call_command(
            "add_judge",
            "acme",
            "Big",
            "--base-url",
            "http://127.0.0.1:1/v1",
            "--model",
            "m",
            "--api-key-env",
            KEY_ENV,
            flag,
            TOO_BIG[field],
        )
    assert not Judge.objects.filter(slug="big").exists()


def test_the_worker_clamps_values_stored_before_the_limits(judging):
    judge = judging["judge"]
    job = start_job(plan_job(judge, scope="pool", level="chunk", chunking="c"), enqueue=False)
    Judge.objects.filter(pk=judge.pk).update(
        timeout_seconds=1_000_000, concurrency=32767, rpm=0, budget=2_147_483_647
    )
    type(job).objects.filter(pk=job.pk).update(budget=2_147_483_647)
    job.refresh_from_db()
    job.version.judge.refresh_from_db()
    endpoint = endpoint_of(job)
    assert endpoint.timeout == 300.0
    caller = make_caller(job, Sleeps())
    assert caller.budget.limit == 100_000
