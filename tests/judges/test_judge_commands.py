"""manage.py add_judge and manage.py judge: the flags of the contract, clear errors."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django_tasks_db.models import DBTaskResult

from judges.engine import execute_job
from judges.models import Judge, JudgeJob, PairStatus
from judges.prompts import DEFAULT_PROMPT, normalise_prompt

from .conftest import KEY_ENV, Sleeps
from .fake_llm import MODEL

pytestmark = pytest.mark.django_db


def test_add_judge_stores_the_variable_name_and_starts_version_one(judging, tmp_path, capsys):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Grade {{query}} against {{passage}} as JSON.", encoding="utf-8")
    call_command(
        "add_judge",
        "acme",
        "Strict judge",
        "--base-url",
        judging["server"].base_url,
        "--model",
        MODEL,
        "--api-key-env",
        KEY_ENV,
        "--prompt",
        str(prompt),
        "--temperature",
        "0.2",
        "--concurrency",
        "2",
        "--rpm",
        "30",
        "--budget",
        "40",
    )
    judge = Judge.objects.get(slug="strict-judge")
    assert (judge.api_key_env, judge.temperature, judge.concurrency, judge.rpm, judge.budget) == (
        KEY_ENV,
        0.2,
        2,
        30,
        40,
    )
    assert judge.current.number == 1 and judge.current.prompt.startswith("Grade {{query}}")
    assert "version 1" in capsys.readouterr().out


def test_add_judge_defaults_to_the_umbrela_style_prompt(judging):
    call_command(
        "add_judge",
        "acme",
        "Plain",
        "--base-url",
        "http://127.0.0.1:1/v1",
        "--model",
        "m",
        "--api-key-env",
        "ASSAY_JUDGE_KEY_SOME",
    )
    assert Judge.objects.get(slug="plain").prompt == normalise_prompt(DEFAULT_PROMPT)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--api-key-env", "sk-live-abc"], "looks like an API key"),
        (["--api-key-env", "ASSAY_JUDGE_KEY_V", "--temperature", "5"], "temperature"),
        (["--api-key-env", "ASSAY_JUDGE_KEY_V", "--budget", "0"], "budget"),
    ],
)
def test_add_judge_refuses_bad_settings_and_writes_nothing(judging, args, message):
    before = Judge.objects.count()
    with pytest.raises(CommandError, match=message):
        call_command(
            "add_judge", "acme", "Bad", "--base-url", "http://x.example/v1", "--model", "m", *args
        )
    assert Judge.objects.count() == before


def test_add_judge_refuses_unknown_placeholders(judging, tmp_path):
    prompt = tmp_path / "p.txt"
    prompt.write_text("{{query}} {{secret_sauce}}", encoding="utf-8")
    with pytest.raises(CommandError, match="secret_sauce"):
        call_command(
            "add_judge",
            "acme",
            "Bad",
            "--base-url",
            "http://x.example/v1",
            "--model",
            "m",
            "--api-key-env",
            "ASSAY_JUDGE_KEY_V",
            "--prompt",
            str(prompt),
        )


def test_judge_prints_the_cost_and_queues_a_background_job(
    judging, capsys, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "judge",
            "acme",
            "fake",
            "--scope",
            "holes",
            "--queries",
            "q2",
            "--level",
            "chunk",
            "--chunking",
            "c",
        )
    out = capsys.readouterr().out
    assert "11 pairs to judge" in out and "about 11 calls" in out and "prompt tokens" in out
    job = JudgeJob.objects.get()
    assert DBTaskResult.objects.filter(
        task_path__endswith="run_judge_job", args_kwargs__args=[job.pk]
    ).exists()
    job = execute_job(job.pk, sleep=Sleeps())
    assert job.pairs.filter(status=PairStatus.PENDING).count() == 0


def test_judge_sample_and_document_level(judging, capsys):
    call_command("judge", "acme", "Fake judge", "--scope", "sample", "5", "--level", "document")
    job = JudgeJob.objects.get()
    assert (job.scope, job.sample_size, job.level, job.n_pairs) == ("sample", 5, "document", 5)
    assert job.pairs.filter(chunk__isnull=False).count() == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scope", "sample"], "sample needs a number"),
        (["--scope", "holes", "3"], "takes no number"),
        (["--scope", "everything"], "--scope must be"),
        (["--queries", "nope"], "unknown query ids: nope"),
        (["--chunking", "nope"], "no chunking 'nope'"),
    ],
)
def test_judge_refuses_bad_options_and_starts_nothing(judging, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("judge", "acme", "fake", *args)
    assert not JudgeJob.objects.exists()


def test_judge_unknown_judge_or_project(judging):
    with pytest.raises(CommandError, match="no judge"):
        call_command("judge", "acme", "ghost")
    with pytest.raises(CommandError, match="no project"):
        call_command("judge", "ghost", "fake")
