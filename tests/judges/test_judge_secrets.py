"""The API key never reaches the database, the logs, the pages or the exports."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.management import call_command

from judges.engine import execute_job
from judges.services import plan_job, start_job, update_judge

from .conftest import KEY, Sleeps

pytestmark = pytest.mark.django_db

WRONG_KEY = "sk-wrong-Hh3Jj5Kk7Ll9Mm2Nn4"


def database_text() -> str:
    out = io.StringIO()
    call_command("dumpdata", stdout=out)
    return out.getvalue()


def run_jobs(judging, monkeypatch):
    """A good job, then one whose key the server refuses (and echoes back)."""
    job = start_job(
        plan_job(judging["judge"], scope="holes", level="chunk", chunking="c"), enqueue=False
    )
    execute_job(job.pk, sleep=Sleeps())
    monkeypatch.setenv("ASSAY_JUDGE_KEY_WRONG", WRONG_KEY)
    update_judge(
        judging["judge"], api_key_env="ASSAY_JUDGE_KEY_WRONG", concurrency=1, by_operator=True
    )
    job = start_job(
        plan_job(judging["judge"], scope="pool", level="chunk", chunking="c", qids=["q1"]),
        enqueue=False,
    )
    return execute_job(job.pk, sleep=Sleeps())


def test_key_is_used_but_never_stored_nor_logged(judging, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    refused = run_jobs(judging, monkeypatch)
    server = judging["server"]
    assert any(r["auth"] == f"Bearer {KEY}" for r in server.requests)  # the key was sent
    assert refused.pairs.filter(failure="auth").exists()
    dump = database_text()
    assert "ASSAY_JUDGE_KEY_TEST" in dump or "ASSAY_JUDGE_KEY_WRONG" in dump  # the name is stored
    for secret in (KEY, WRONG_KEY, KEY[-8:], WRONG_KEY[-8:]):
        assert secret not in dump
        assert secret not in caplog.text


def test_key_never_appears_on_pages_or_exports(judging, monkeypatch, login, tmp_path):
    from django.urls import reverse

    from gold.services import ConsensusPolicy, freeze_gold_set

    refused = run_jobs(judging, monkeypatch)
    client = login(judging["owner"])
    judge = judging["judge"]
    pages = [
        reverse("judges:list", args=["acme"]),
        reverse("judges:detail", args=["acme", judge.pk]),
        reverse("judges:job", args=["acme", refused.pk]),
        reverse("judges:calibration", args=["acme"]),
        reverse("annotator:label_query", args=["acme", judging["queries"][0].pk]),
        reverse("metrics:qrels_file", args=["acme"]) + "?level=c",
    ]
    gold = freeze_gold_set(
        judging["project"],
        "g",
        policy=ConsensusPolicy(),
        annotators=["anna", refused.version.annotator.username],
    )
    for fmt in ("jsonl", "qrels"):
        pages.append(reverse("gold:export", args=["acme", gold.pk]) + f"?format={fmt}&level=c")
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        body = b"".join(response.streaming_content) if response.streaming else response.content
        for secret in (KEY, WRONG_KEY, KEY[-8:], WRONG_KEY[-8:]):
            assert secret.encode() not in body, url
