"""A judge gets a new version only on a real change to what shapes its answers: the prompt
compared normalised (line endings, trailing spaces), the model, the temperature, the
output limit; each version says what it changed."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from judges.models import Judge, JudgeVersion
from judges.prompts import DEFAULT_PROMPT, normalise_prompt
from judges.services import create_judge, update_judge, version_history

from .conftest import KEY_ENV

pytestmark = pytest.mark.django_db


def settings_form(judge: Judge, **changes) -> dict:
    """The judge page's settings form as a browser sends it back, unchanged unless told."""
    data = {
        "name": judge.name,
        "base_url": judge.base_url,
        "model": judge.model,
        "api_key_env": judge.api_key_env,
        "prompt": judge.prompt,
        "temperature": str(judge.temperature),
        "max_tokens": str(judge.max_tokens),
        "timeout_seconds": str(judge.timeout_seconds),
        "concurrency": str(judge.concurrency),
        "rpm": str(judge.rpm),
        "budget": str(judge.budget),
    }
    if judge.logprobs:
        data["logprobs"] = "on"
    return {**data, **changes}


@pytest.fixture
def default_judge(personas):
    return create_judge(
        personas["project"],
        slug="plain",
        name="Plain",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        api_key_env=KEY_ENV,
        by_operator=True,
    )


def test_saving_unchanged_settings_with_crlf_makes_no_new_version(login, personas, default_judge):
    """The reported bug: the browser sends the textarea back with CRLF line endings (691
    characters once the form strips the final line break, against the default's 675) and
    the save made version 2, whose labels started from nothing."""
    judge = default_judge
    assert len(DEFAULT_PROMPT) == 675
    sent = DEFAULT_PROMPT.replace("\n", "\r\n")
    assert len(sent.strip()) == 691
    client = login(personas["owner"])
    url = reverse("judges:detail", args=["acme", judge.pk])
    response = client.post(url, settings_form(judge, prompt=sent), follow=True)
    assert response.status_code == 200
    assert JudgeVersion.objects.filter(judge=judge).count() == 1
    assert judge.current.number == 1
    assert "still version 1" in response.content.decode()
    # Trailing spaces and a trailing blank line are not a change either.
    spaced = "\r\n".join(f"{line}  " for line in DEFAULT_PROMPT.splitlines()) + "\r\n\r\n"
    client.post(url, settings_form(judge, prompt=spaced))
    assert JudgeVersion.objects.filter(judge=judge).count() == 1
    judge.refresh_from_db()
    assert judge.prompt == normalise_prompt(DEFAULT_PROMPT)
    assert get_user_model().objects.filter(username__startswith="judge-acme-plain-").count() == 1


@pytest.mark.parametrize(
    "field, value",
    [
        ("timeout_seconds", "5"),
        ("rpm", "7"),
        ("concurrency", "1"),
        ("budget", "9"),
        ("api_key_env", "ASSAY_JUDGE_KEY_OTHER"),
        ("name", "Renamed"),
    ],
)
def test_settings_that_do_not_shape_answers_never_make_a_version(
    login, personas, default_judge, field, value, monkeypatch, settings
):
    # A new key variable from the web needs the project listed for it, and its loopback
    # endpoint allowed by the operator.
    monkeypatch.setenv("ASSAY_JUDGE_KEY_OTHER_PROJECTS", "acme")
    settings.ASSAY_JUDGE_ALLOWED_HOSTS = ["127.0.0.1"]
    judge = default_judge
    response = login(personas["owner"]).post(
        reverse("judges:detail", args=["acme", judge.pk]), settings_form(judge, **{field: value})
    )
    assert response.status_code == 302
    judge.refresh_from_db()
    saved = getattr(judge, field)
    assert saved == (type(saved)(value) if not isinstance(saved, str) else value)
    assert judge.versions.count() == 1


def test_service_compares_normalised_prompts(default_judge):
    judge = default_judge
    assert update_judge(judge, prompt=judge.prompt.replace("\n", "\r\n") + "  \n").number == 1
    assert update_judge(judge, timeout_seconds=3.0, rpm=1).number == 1
    assert update_judge(judge, model=" m ").number == 1
    assert update_judge(judge, temperature=0.0, max_tokens=200).number == 1


def test_a_new_version_says_what_changed(login, personas, default_judge):
    judge = default_judge
    client = login(personas["owner"])
    url = reverse("judges:detail", args=["acme", judge.pk])
    prompt = judge.prompt.replace("Do not explain your steps.", "Be strict.")
    response = client.post(url, settings_form(judge, prompt=prompt), follow=True)
    assert judge.current.number == 2
    body = response.content.decode()
    assert "Saved as version 2: changed prompt." in body
    judge.refresh_from_db()
    update_judge(judge, model="m2", temperature=0.5, max_tokens=100)
    history = version_history(judge)
    assert [h.version.number for h in history] == [1, 2, 3]
    assert history[0].changes == [] and history[0].prompt_diff == []
    assert history[1].changed_fields == ["prompt"]
    removed = [line for line in history[1].prompt_diff if line.startswith("-") and "Do not" in line]
    added = [line for line in history[1].prompt_diff if line.startswith("+") and "strict" in line]
    assert removed and added
    assert [(c.field, c.before, c.after) for c in history[2].changes] == [
        ("model", "m", "m2"),
        ("temperature", "0.0", "0.5"),
        ("max_tokens", "200", "100"),
    ]
    assert history[2].prompt_diff == []
    page = client.get(url).content.decode()
    assert 'id="judge-version-3"' in page and "m → m2" in page and "200 → 100" in page
    assert 'class="diff-add">+' in page and 'class="diff-del">-' in page
    assert "M and T. Be strict." in page
    # In Chinese too.
    chinese = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert "改动：" in chinese and "提示词改了什么" in chinese
    assert "Changed:" not in chinese and "What changed in the prompt" not in chinese


def test_add_judge_takes_timeout_max_tokens_and_temperature(personas):
    out = io.StringIO()
    call_command(
        "add_judge", "acme", "Strict judge", "--base-url", "http://127.0.0.1:1/v1",
        "--model", "m", "--api-key-env", KEY_ENV, "--timeout", "12.5", "--max-tokens", "64",
        "--temperature", "0.3", stdout=out,
    )  # fmt: skip
    judge = Judge.objects.get(slug="strict-judge")
    assert (judge.timeout_seconds, judge.max_tokens, judge.temperature) == (12.5, 64, 0.3)
    version = judge.current
    assert (version.max_tokens, version.temperature) == (64, 0.3)
    for flag, bad in (("--timeout", "0"), ("--max-tokens", "0"), ("--temperature", "2.5")):
        with pytest.raises(CommandError, match=flag):
            call_command(
                "add_judge", "acme", "Bad judge", "--base-url", "http://127.0.0.1:1/v1",
                "--model", "m", "--api-key-env", KEY_ENV, flag, bad, stdout=io.StringIO(),
            )  # fmt: skip
    assert not Judge.objects.filter(slug="bad-judge").exists()
