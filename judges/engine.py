"""Running a judging job in the worker: calls in threads, every result written in one place.

The HTTP calls run in up to ``judge.concurrency`` threads; the database is written only
from the job's own thread, one pair at a time, in one transaction each: the judge's label
(through ``annotator.labels.change_label``, so history is kept), the pair's outcome and
the job's counters together, so the counters always match the pairs. Cancelling is
checked between results; a key refused (401), an unknown model (404) or an endpoint that
cannot be reached ends the remaining pairs with the same reason, without more calls.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import task

from annotator.labels import Evidence, change_label
from annotator.models import Chunk, Document, Query
from formats.errors import Problem, define, gettext_noop

from .client import Budget, Caller, Endpoint, MissingKey, Outcome, RateLimiter
from .models import JobStatus, JudgeJob, JudgePair, PairStatus, bounded
from .scope import Pair
from .services import host_policy, judged_by, prompts_for

log = logging.getLogger(__name__)

INTERNAL_ERROR = define(
    "judge_job.internal_error", gettext_noop("internal error; see the worker's log")
)


# Jobs of other kinds (nugget proposals …): ``runner(job, sleep)`` registered by the app
# that writes their results, so that judges never imports it.
_RUNNERS: dict[str, Callable] = {}


def register_runner(kind: str, runner: Callable) -> None:
    _RUNNERS[kind] = runner


# Judging has its own queue: imports (the default queue) never wait behind a long job
# (``manage.py db_worker --queue-name default`` and ``--queue-name judging``; bin/start
# runs both).
@task(queue_name="judging")
def run_judge_job(job_id: int) -> None:
    execute_job(job_id)


def endpoint_of(job: JudgeJob) -> Endpoint:
    judge, version = job.version.judge, job.version
    return Endpoint(
        base_url=judge.base_url,
        model=version.model,
        api_key_env=judge.api_key_env,
        temperature=version.temperature,
        max_tokens=bounded("max_tokens", version.max_tokens),
        timeout=bounded("timeout_seconds", judge.timeout_seconds),
        logprobs=judge.logprobs,
        project=judge.project.slug,
        by_operator=judge.configured_by_operator,
        hosts=host_policy(),
    )


def execute_job(job_id: int, *, sleep: Callable[[float], None] = time.sleep) -> JudgeJob:
    """Judge the job's waiting pairs; returns the job as it ended."""
    claimed = JudgeJob.objects.filter(pk=job_id, status=JobStatus.PENDING).update(
        status=JobStatus.RUNNING, started_at=timezone.now()
    )
    job = JudgeJob.objects.select_related("version__judge__project", "version__annotator").get(
        pk=job_id
    )
    if not claimed:
        return job
    log.info("judge job %s started", job.pk)
    try:
        _run(job, sleep)
    except Exception:
        JudgeJob.objects.filter(pk=job.pk).update(
            status=JobStatus.FAILED,
            error=INTERNAL_ERROR(),
            finished_at=timezone.now(),
        )
        raise
    job.refresh_from_db()
    log.info("judge job %s ended: %s, %s calls", job.pk, job.status, job.calls)
    return job


def finish(job: JudgeJob, status: str, error: Problem | None = None) -> None:
    JudgeJob.objects.filter(pk=job.pk).update(
        status=status, error=error, finished_at=timezone.now()
    )


def make_caller(job: JudgeJob, sleep, endpoint: Endpoint | None = None) -> Caller:
    """The job's caller: its judge's endpoint, budget, rate limit and retries;
    ``MissingKey`` when the key's variable is not set."""
    return Caller(
        endpoint or endpoint_of(job),
        budget=Budget(bounded("budget", job.budget)),
        limiter=RateLimiter(bounded("rpm", job.version.judge.rpm), sleep),
        sleep=sleep,
        attempts=getattr(settings, "ASSAY_JUDGE_ATTEMPTS", 4),
        backoff=getattr(settings, "ASSAY_JUDGE_BACKOFF_SECONDS", 1.0),
        max_wait=getattr(settings, "ASSAY_JUDGE_MAX_WAIT_SECONDS", 60.0),
    )


def run_calls(
    job: JudgeJob,
    pending: list[JudgePair],
    call: Callable[[JudgePair], Outcome],
    write: Callable[[JudgePair, Outcome], None],
) -> None:
    """Call for every pending pair in up to ``judge.concurrency`` threads and write each
    outcome from this thread; stop submitting on a cancel or a fatal failure (the pairs
    not tried end with that failure, without calls), then end the job."""
    judge = job.version.judge
    concurrency = bounded("concurrency", judge.concurrency)
    queue = iter(pending)
    fatal: Outcome | None = None
    cancelled = False
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judge") as pool:
        running = {}

        def submit_more() -> None:
            while len(running) < concurrency:
                pair = next(queue, None)
                if pair is None:
                    return
                running[pool.submit(call, pair)] = pair

        submit_more()
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                pair = running.pop(future)
                outcome = future.result()
                write(pair, outcome)
                if outcome.fatal and fatal is None:
                    fatal = outcome
            cancelled = (
                cancelled or JudgeJob.objects.filter(pk=job.pk, cancel_requested=True).exists()
            )
            if fatal is None and not cancelled:
                submit_more()
    if fatal is not None:
        for pair in queue:
            write(pair, Outcome(failure=fatal.failure, detail=fatal.detail))
    finish(job, JobStatus.CANCELLED if cancelled and fatal is None else JobStatus.DONE)


def count_outcome(job: JudgeJob, pair: JudgePair, outcome: Outcome) -> None:
    """The pair's attempts and the job's counters after an outcome (inside the caller's
    transaction, with the pair's own result)."""
    JudgePair.objects.filter(pk=pair.pk).update(attempts=F("attempts") + outcome.calls)
    JudgeJob.objects.filter(pk=job.pk).update(
        calls=F("calls") + outcome.calls,
        retries=F("retries") + outcome.retries,
        prompt_tokens=F("prompt_tokens") + outcome.prompt_tokens,
        completion_tokens=F("completion_tokens") + outcome.completion_tokens,
    )


def _run(job: JudgeJob, sleep) -> None:
    if job.kind in _RUNNERS:
        _RUNNERS[job.kind](job, sleep)
        return
    pending = list(job.pairs.filter(status=PairStatus.PENDING).order_by("pk"))
    key = {p.pk: Pair(p.query_id, p.document_id, p.chunk_id) for p in pending}
    done = judged_by(job.version, list(key.values()))
    skipped = [p.pk for p in pending if key[p.pk] in done]
    JudgePair.objects.filter(pk__in=skipped).update(status=PairStatus.SKIPPED)
    pending = [p for p in pending if key[p.pk] not in done]
    if not pending:
        finish(job, JobStatus.DONE)
        return
    try:
        caller = make_caller(job, sleep)
    except MissingKey as error:
        for pair in pending:
            _write(job, pair, Outcome(failure="no_key", detail=error.problem))
        finish(job, JobStatus.DONE)
        return
    prompts = prompts_for(job.version, list(key[p.pk] for p in pending))
    run_calls(
        job,
        pending,
        lambda pair: caller.judge(prompts[key[pair.pk]]),
        lambda pair, outcome: _write(job, pair, outcome),
    )


def _evidence(pair: JudgePair) -> Evidence:
    if pair.chunk_id:
        return Evidence.for_chunk(Chunk.objects.select_related("document").get(pk=pair.chunk_id))
    return Evidence.for_document(Document.objects.get(pk=pair.document_id))


def _write(job: JudgeJob, pair: JudgePair, outcome: Outcome) -> None:
    """The pair's outcome, the judge's label and the job's counters, in one transaction."""
    with transaction.atomic():
        if outcome.grade is not None:
            change = change_label(
                query=Query.objects.get(pk=pair.query_id),
                annotator=job.version.annotator,
                evidence=_evidence(pair),
                grade=outcome.grade,
                note=outcome.reason,
                changed_by=job.version.annotator,
            )
            pair.status, pair.grade, pair.reason = PairStatus.JUDGED, outcome.grade, outcome.reason
            pair.confidence, pair.judgment = outcome.confidence, change.judgment
            pair.failure, pair.detail = "", None
        else:
            pair.status, pair.failure, pair.detail = (
                PairStatus.FAILED,
                outcome.failure,
                outcome.detail,
            )
        fields = ["status", "grade", "reason", "confidence", "judgment", "failure", "detail"]
        pair.save(update_fields=fields)
        count_outcome(job, pair, outcome)
