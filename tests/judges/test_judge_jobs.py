"""Judging jobs against a real HTTP server on loopback speaking the chat-completions protocol."""

from __future__ import annotations

import pytest

from annotator.models import Judgment, JudgmentHistory, Membership
from judges import engine
from judges.engine import execute_job
from judges.models import JobStatus, JudgeJob, PairStatus
from judges.services import cancel_job, plan_job, resume_job, start_job, update_judge

from .conftest import PASSAGES, Sleeps

pytestmark = pytest.mark.django_db

EXPECTED_FAILURE = {
    "MALFORMED": "malformed",
    "SEVEN": "malformed",
    "EMPTY": "empty",
    "LONG": "too_long",
    "REFUSE": "refusal",
}


def run(judging, **options):
    plan = plan_job(judging["judge"], level="chunk", chunking="c", **options)
    job = start_job(plan, enqueue=False)
    sleeps = Sleeps()
    return execute_job(job.pk, sleep=sleeps), sleeps, plan


def marker_of(pair) -> str:
    text = PASSAGES[int(pair.document.doc_id[1:])]
    return next((m for m in EXPECTED_FAILURE if m in text), "")


def test_holes_job_ends_every_pair_judged_or_failed_with_its_reason(judging):
    job, _sleeps, plan = run(judging, scope="holes")
    # 2 queries × 12 chunks pooled, 3 judged by anna: 21 holes.
    assert job.n_pairs == 21 == len(plan.pairs)
    assert job.status == JobStatus.DONE
    pairs = list(job.pairs.select_related("document"))
    assert all(p.status in (PairStatus.JUDGED, PairStatus.FAILED) for p in pairs)
    for pair in pairs:
        marker = marker_of(pair)
        if marker:
            assert pair.status == PairStatus.FAILED and pair.failure == EXPECTED_FAILURE[marker], (
                pair
            )
            assert pair.grade is None and pair.judgment is None
        else:
            expected = int(PASSAGES[int(pair.document.doc_id[1:])].split("GRADE=")[1][0])
            assert (pair.status, pair.grade) == (PairStatus.JUDGED, expected)
            assert pair.judgment.grade == expected
            assert pair.judgment.annotator == job.version.annotator
    # The judge's labels are exactly the judged pairs, each with one history row.
    labels = Judgment.objects.filter(annotator=job.version.annotator)
    judged = [p for p in pairs if p.status == PairStatus.JUDGED]
    assert labels.count() == len(judged) == 21 - 2 * len(EXPECTED_FAILURE)
    assert JudgmentHistory.objects.filter(annotator=job.version.annotator).count() == len(judged)
    # The reason travels with the grade, on the label itself.
    assert set(labels.values_list("note", flat=True)) >= {"reason for grade 3", ""}


def test_retries_honour_retry_after_and_counters_match_the_server(judging):
    job, sleeps, _plan = run(judging, scope="holes")
    server = judging["server"]
    # Each query's RATE429 and FLAKY500 pair fails once then succeeds.
    assert server.calls_for("RATE429") == 4 and server.calls_for("FLAKY500") == 4
    assert sleeps.count(2.0) == 2  # Retry-After: 2, as the server asked
    assert sleeps.count(0.5) == 2  # no Retry-After on the 500: the first backoff step
    assert job.retries == 4
    assert job.calls == len(server.requests) == job.n_pairs + job.retries
    assert sum(p.attempts for p in job.pairs.all()) == job.calls
    assert job.prompt_tokens == sum(
        len(r["prompt"]) // 4 for r in server.requests if r["status"] == 200
    )
    assert job.completion_tokens == 7 * (job.calls - job.retries)
    assert {r["model"] for r in server.requests} == {"fake-judge"}


def test_judge_version_is_a_pseudo_annotator(judging):
    job, _sleeps, _plan = run(judging, scope="holes")
    membership = Membership.objects.get(user=job.version.annotator, project=judging["project"])
    assert membership.is_pseudo
    assert not job.version.annotator.has_usable_password()


def test_resume_skips_pairs_judged_by_the_same_version(judging):
    first, _sleeps, _plan = run(judging, scope="pool", qids=["q1"])
    server = judging["server"]
    before = len(server.requests)
    second_plan = plan_job(judging["judge"], scope="pool", level="chunk", chunking="c")
    # q1's judged pairs are not planned again; q1's failures and all of q2 are.
    judged_q1 = first.pairs.filter(status=PairStatus.JUDGED).count()
    assert second_plan.already == judged_q1
    assert len(second_plan.pairs) == 24 - judged_q1
    job = start_job(second_plan, enqueue=False)
    job = execute_job(job.pk, sleep=Sleeps())
    prompts = [r["prompt"] for r in server.requests[before:]]
    assert not any(
        "Query: How do wings lift?" in p and "GRADE=3" in p and "DIGIT" not in p for p in prompts
    )
    assert job.status == JobStatus.DONE


def test_a_new_prompt_is_a_new_version_that_judges_again(judging):
    run(judging, scope="pool", qids=["q1"])
    version = update_judge(judging["judge"], prompt=judging["judge"].prompt + "\nBe strict.")
    assert version.number == 2
    plan = plan_job(judging["judge"], scope="pool", level="chunk", chunking="c", qids=["q1"])
    assert plan.already == 0 and len(plan.pairs) == 12
    same = update_judge(judging["judge"], concurrency=2)  # not a change of answers
    assert same.number == 2


def test_failed_pairs_can_be_retried(judging):
    job, _sleeps, _plan = run(judging, scope="holes")
    failed = job.pairs.filter(status=PairStatus.FAILED).count()
    assert resume_job(job, failed=True, enqueue=False) == failed
    job = execute_job(job.pk, sleep=Sleeps())
    assert job.pairs.filter(status=PairStatus.FAILED).count() == failed  # same answers again
    assert job.status == JobStatus.DONE


def test_a_spent_budget_pauses_the_job_and_a_resume_gets_no_fresh_budget(judging):
    judge = judging["judge"]
    judge.budget = 5
    judge.save()
    job, _sleeps, _plan = run(judging, scope="pool", qids=["q1"])
    assert job.calls == 5 == len(judging["server"].requests)
    assert job.status == JobStatus.PAUSED
    assert str(job.error) == "budget reached: 5 of 5 calls used"
    # The pairs the budget did not reach wait; none is marked failed for it.
    assert not job.pairs.filter(failure="budget").exists()
    waiting = job.pairs.filter(status=PairStatus.PENDING).count()
    assert waiting >= 12 - 5
    resume_job(job, enqueue=False)
    job = execute_job(job.pk, sleep=Sleeps())
    assert (job.status, job.calls, len(judging["server"].requests)) == (JobStatus.PAUSED, 5, 5)
    assert job.pairs.filter(status=PairStatus.PENDING).count() == waiting


def test_429s_that_spend_the_budget_say_rate_limited(judging):
    judge = judging["judge"]
    judge.budget, judge.concurrency = 5, 1
    judge.save()
    for chunk in judging["chunks"]:
        chunk.document.text += " ALWAYS429"
        chunk.document.save()
        chunk.end = len(chunk.document.text)
        chunk.save()
    job, _sleeps, _plan = run(judging, scope="pool", qids=["q1"])
    assert (job.status, job.calls) == (JobStatus.PAUSED, 5)
    assert str(job.error) == (
        "rate limited: 5 of the 5 calls got HTTP 429 and the budget is spent (5 of 5 calls used)"
    )
    assert not job.pairs.filter(failure="budget").exists()


def test_always_rate_limited_and_server_errors_fail_after_the_attempts(judging, settings):
    settings.ASSAY_JUDGE_ATTEMPTS = 3
    chunks = judging["chunks"]
    for chunk, marker in ((chunks[3], "ALWAYS429"), (chunks[2], "ALWAYS500")):
        document = chunk.document
        document.text = f"{document.text} {marker}"
        document.save()
        chunk.end = len(document.text)
        chunk.save()
    job, sleeps, _plan = run(judging, scope="pool", qids=["q2"])
    reasons = dict(
        job.pairs.filter(status=PairStatus.FAILED).values_list("document__doc_id", "failure")
    )
    assert reasons["d3"] == "rate_limited" and reasons["d2"] == "server_error"
    assert judging["server"].calls_for("ALWAYS429") == 3
    assert sleeps.count(2.0) == 2 + 1  # two waits before the 2nd and 3rd tries, plus RATE429's


def test_timeouts_are_retried_then_recorded(judging, settings):
    settings.ASSAY_JUDGE_ATTEMPTS = 2
    chunk = judging["chunks"][0]
    chunk.document.text = "A slow passage. SLOW GRADE=3"
    chunk.document.save()
    chunk.end = len(chunk.document.text)
    chunk.save()
    job, _sleeps, _plan = run(judging, scope="pool", qids=["q2"])
    pair = job.pairs.get(chunk=chunk)
    assert (pair.status, pair.failure, pair.attempts) == (PairStatus.FAILED, "timeout", 2)


@pytest.mark.parametrize(
    ("change", "failure"),
    [({"api_key_env": "ASSAY_JUDGE_KEY_OTHER"}, "auth"), ({"model": "no-such-model"}, "not_found")],
)
def test_refused_key_or_unknown_model_fail_every_pair_without_more_calls(
    judging, monkeypatch, change, failure
):
    monkeypatch.setenv("ASSAY_JUDGE_KEY_OTHER", "sk-wrong-key-123456")
    update_judge(judging["judge"], concurrency=1, by_operator=True, **change)
    job, _sleeps, _plan = run(judging, scope="pool", qids=["q1"])
    assert set(job.pairs.values_list("status", "failure")) == {(PairStatus.FAILED, failure)}
    assert job.calls == len(judging["server"].requests) == 1


def test_unset_key_variable_fails_every_pair_with_no_call(judging, monkeypatch):
    monkeypatch.delenv("ASSAY_JUDGE_KEY_TEST")
    job, _sleeps, _plan = run(judging, scope="pool", qids=["q1"])
    assert set(job.pairs.values_list("failure", flat=True)) == {"no_key"}
    assert job.calls == 0 and not judging["server"].requests


def test_unreachable_endpoint_pauses_the_job_after_n_failed_calls(judging, settings):
    settings.ASSAY_JUDGE_ATTEMPTS = 2
    update_judge(
        judging["judge"], base_url="http://127.0.0.1:9/v1", concurrency=1, by_operator=True
    )
    job, _sleeps, _plan = run(judging, scope="pool", qids=["q1"])
    # Two pairs spent their two attempts; the fifth failure in a row opened the breaker.
    assert job.calls == 5
    assert job.status == JobStatus.PAUSED
    assert str(job.error) == "endpoint not answering: 5 connection errors in a row"
    assert set(job.pairs.exclude(status=PairStatus.PENDING).values_list("failure", flat=True)) == {
        "unreachable"
    }
    assert job.pairs.filter(status=PairStatus.PENDING).count() == 12 - 2


@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_hanging_endpoint_pauses_the_job_after_n_calls_not_n_per_pair(
    judging, settings, concurrency
):
    settings.ASSAY_JUDGE_BREAKER = 5
    judging["server"].hang.set()
    judge = judging["judge"]
    judge.concurrency = concurrency
    judge.save()
    job, _sleeps, _plan = run(judging, scope="pool", qids=["q1"])
    assert job.status == JobStatus.PAUSED
    assert str(job.error) == "endpoint not answering: 5 timeouts in a row"
    # At most the calls already in flight when the breaker opened come on top of the 5.
    assert 5 <= job.calls == len(judging["server"].requests) <= 5 + concurrency - 1
    assert not job.pairs.filter(status=PairStatus.JUDGED).exists()
    # A pair whose own attempts all timed out before the fifth failure failed; the rest wait.
    assert job.pairs.filter(status=PairStatus.PENDING).count() >= 12 - 1


def test_cancel_stops_a_job_and_resume_finishes_it(judging):
    plan = plan_job(judging["judge"], scope="pool", level="chunk", chunking="c")
    job = start_job(plan, enqueue=False)
    judge = judging["judge"]
    judge.concurrency = 1
    judge.save()

    # Cancel as soon as the first result is written: the job stops after it.

    original = engine._write
    calls = []

    def write_then_cancel(job_, pair, outcome):
        original(job_, pair, outcome)
        calls.append(pair.pk)
        if len(calls) == 1:
            cancel_job(job_)

    engine._write = write_then_cancel
    try:
        job = execute_job(job.pk, sleep=Sleeps())
    finally:
        engine._write = original
    assert job.status == JobStatus.CANCELLED
    assert job.pairs.filter(status=PairStatus.PENDING).count() == 24 - 1
    resume_job(job, enqueue=False)
    job = execute_job(job.pk, sleep=Sleeps())
    assert job.status == JobStatus.DONE
    assert job.pairs.filter(status=PairStatus.PENDING).count() == 0


def test_a_worker_that_lost_its_lease_writes_nothing_more(judging):
    """Another worker took the job over (the lease passed while this one was stalled):
    this one's next result is not written and the job stays with the new worker."""
    plan = plan_job(judging["judge"], scope="pool", level="chunk", chunking="c", qids=["q1"])
    job = start_job(plan, enqueue=False)
    judge = judging["judge"]
    judge.concurrency = 1
    judge.save()
    original = engine._write
    written = []

    def write_then_lose(job_, pair, outcome):
        original(job_, pair, outcome)
        written.append(pair.pk)
        JudgeJob.objects.filter(pk=job_.pk).update(worker="another-host:1")

    engine._write = write_then_lose
    try:
        job = execute_job(job.pk, sleep=Sleeps())
    finally:
        engine._write = original
    assert len(written) == 1
    assert (job.status, job.worker) == (JobStatus.RUNNING, "another-host:1")
    assert Judgment.objects.filter(annotator=job.version.annotator).count() <= 1
    assert job.pairs.exclude(status=PairStatus.PENDING).count() == 1
