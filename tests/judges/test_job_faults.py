"""Judging jobs survive their worker: real worker processes, killed or stopped mid-job.

A worker killed with ``kill -9`` left its job "Running" for good; SIGTERM made the worker
finish the whole job before exiting. Here a second worker takes the job over once the
lease passes and finishes it without asking again a pair that has its answer or writing
a label twice; SIGTERM pauses the job ("worker stopped") and the worker exits.
"""

from __future__ import annotations

import signal
from collections import Counter

import pytest
from django.db import connection

from annotator.models import Judgment, JudgmentHistory
from judges.models import JobStatus, JudgeJob, PairStatus
from judges.services import plan_job, resume_job, start_job
from tests import worker_process

from .fake_llm import FakeLLM

pytestmark = pytest.mark.django_db(transaction=True)

FAST = {
    "ASSAY_JOB_LEASE_SECONDS": 2,
    "ASSAY_JUDGE_BACKOFF_SECONDS": 0.01,
    "ASSAY_JUDGE_MAX_WAIT_SECONDS": 0.01,
}


def slow_job(judging, delay: float = 0.25) -> JudgeJob:
    """A job on all 21 holes against an endpoint that takes ``delay`` per answer."""
    judging["server"].delay = delay
    judge = judging["judge"]
    judge.timeout_seconds, judge.concurrency = 30, 2
    judge.save()
    return start_job(plan_job(judge, level="chunk", chunking="c"))


def labels_of(job: JudgeJob):
    return Judgment.objects.filter(annotator=job.version.annotator)


def expected_grade(server: FakeLLM, pair) -> int:
    return server.grade(pair.chunk.document.text)


def stop(process) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)


def test_a_worker_killed_mid_job_leaves_it_to_the_next_worker_which_finishes_it(judging, tmp_path):
    server = judging["server"]
    job = slow_job(judging)
    first = worker_process.start(connection, tmp_path, "first", **FAST)
    try:
        worker_process.wait_for(
            lambda: labels_of(job).count() >= 4, what="the first worker's first labels"
        )
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        stop(first)
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING  # what a killed worker leaves behind
    answered_before = {
        (p.query_id, p.chunk_id)
        for p in job.pairs.filter(status__in=[PairStatus.JUDGED, PairStatus.FAILED])
    }
    prompts_before = Counter(server.seen)
    second = worker_process.start(connection, tmp_path, "second", **FAST)
    try:
        worker_process.wait_for(
            lambda: JudgeJob.objects.get(pk=job.pk).status == JobStatus.DONE,
            what="the second worker to finish the job",
        )
    finally:
        second.terminate()
        stop(second)
    job.refresh_from_db()
    assert job.takeovers == 1
    pairs = list(job.pairs.select_related("chunk__document", "query"))
    assert not [p for p in pairs if p.status == PairStatus.PENDING]
    # The labels are the server's answers, one per judged pair, each written once.
    judged = [p for p in pairs if p.status == PairStatus.JUDGED]
    assert {(p.query_id, p.chunk_id): p.grade for p in judged} == {
        (p.query_id, p.chunk_id): expected_grade(server, p) for p in judged
    }
    labels = labels_of(job)
    assert sorted(labels.values_list("query_id", "chunk_id")) == sorted(
        (p.query_id, p.chunk_id) for p in judged
    )
    assert JudgmentHistory.objects.filter(annotator=job.version.annotator).count() == len(judged)
    # No pair answered before the kill was asked again.
    prompts_after = Counter(server.seen)
    for pair in pairs:
        if (pair.query_id, pair.chunk_id) in answered_before:
            asked_again = [
                prompt
                for prompt, count in prompts_after.items()
                if count > prompts_before[prompt]
                and pair.chunk.document.text in prompt
                and pair.query.text in prompt
            ]
            assert not asked_again, pair


def test_sigterm_pauses_the_job_within_the_grace_and_the_worker_exits(judging, tmp_path):
    job = slow_job(judging)
    worker = worker_process.start(
        connection, tmp_path, "stopped", ASSAY_WORKER_GRACE_SECONDS=5, **FAST
    )
    try:
        worker_process.wait_for(lambda: labels_of(job).count() >= 2, what="first labels")
        worker.send_signal(signal.SIGTERM)
        exit_code = worker.wait(timeout=30)  # a deadline: the grace is 5 s
    finally:
        stop(worker)
    assert exit_code == 0
    job.refresh_from_db()
    assert job.status == JobStatus.PAUSED
    assert str(job.error) == "worker stopped"
    waiting = job.pairs.filter(status=PairStatus.PENDING).count()
    assert waiting > 0
    # Resumed, it runs to the end (here in this process).
    from judges.engine import execute_job

    judging["server"].delay = 0
    assert resume_job(job, enqueue=False) == waiting
    job = execute_job(job.pk)
    assert job.status == JobStatus.DONE
    assert not job.pairs.filter(status=PairStatus.PENDING).exists()
    labels = labels_of(job)
    assert JudgmentHistory.objects.filter(annotator=job.version.annotator).count() == labels.count()
