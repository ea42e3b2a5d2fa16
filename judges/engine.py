"""Running a judging job in the worker: calls in threads, every result written in one place.

The HTTP calls run in up to ``judge.concurrency`` threads; the database is written only
from the job's own thread, one pair at a time, in one transaction each: the judge's label
(through ``annotator.labels.change_label``, so history is kept), the pair's outcome and
the job's counters together, so the counters always match the pairs. That transaction
first checks that this worker still holds the job's lease (``operations.leases``) and
that the pair is still waiting, so no label is written twice even when a worker that
was thought dead comes back. A worker that died leaves its job running with a lease that
passes; the next free worker takes it over and asks only the pairs still waiting.

Between results the job checks whether it is asked to pause or cancel and whether the
worker is stopping (SIGTERM: no new pair, calls in flight get the grace period, then the
job pauses with "worker stopped"). A key refused (401) or an unknown model (404) ends the
remaining pairs with the same reason, without more calls; N connection errors, timeouts
or 5xx in a row (``ASSAY_JUDGE_BREAKER``) pause the job instead of trying every pair,
and so does a spent budget (the job's calls count across resumes), saying "rate limited"
when the endpoint's 429s spent it.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import task

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Document, Query
from formats.errors import Problem, define, gettext_noop
from operations import leases

from .client import Breaker, Budget, Caller, Endpoint, MissingKey, Outcome, RateLimiter
from .models import Failure, JobStatus, JudgeJob, JudgePair, PairStatus, bounded
from .scope import Pair
from .services import PAUSED_ON_REQUEST, host_policy, judged_by, prompts_for

log = logging.getLogger(__name__)

INTERNAL_ERROR = define(
    "judge_job.internal_error", gettext_noop("internal error; see the worker's log")
)
WORKER_STOPPED = define("judge_job.worker_stopped", gettext_noop("worker stopped"))
BUDGET_REACHED = define(
    "judge_job.budget_reached",
    gettext_noop("budget reached: %(calls)s of %(budget)s calls used"),
)
RATE_LIMITED_OUT = define(
    "judge_job.rate_limited",
    gettext_noop(
        "rate limited: %(count)s of the %(run)s calls got HTTP 429 and the budget is spent "
        "(%(calls)s of %(budget)s calls used)"
    ),
)
POLL_SECONDS = 0.5


class LeaseLost(Exception):
    """Another worker took the job over; this one writes nothing more."""


class RunState:
    """What one run of a job shares between its parts: the lease's heartbeat and the
    endpoint's breaker (``make_caller`` and ``run_calls`` find it on the job)."""

    def __init__(self, heartbeat: leases.Heartbeat | None = None):
        self.heartbeat = heartbeat
        self.breaker = Breaker(getattr(settings, "ASSAY_JUDGE_BREAKER", 5))
        self.lost = heartbeat.lost if heartbeat else threading.Event()


def _state(job: JudgeJob) -> RunState:
    state = getattr(job, "run_state", None)
    if state is None:
        state = job.run_state = RunState()
    return state


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


def _load(job_id: int) -> JudgeJob:
    return JudgeJob.objects.select_related("version__judge__project", "version__annotator").get(
        pk=job_id
    )


def execute_job(job_id: int, *, sleep: Callable[[float], None] = time.sleep) -> JudgeJob:
    """Run the job's waiting pairs; returns the job as it ended."""
    now = timezone.now()
    with transaction.atomic():
        claimed = JudgeJob.objects.filter(pk=job_id, status=JobStatus.PENDING).update(
            status=JobStatus.RUNNING, error=None, **leases.lease_fields(now=now)
        )
        if claimed:
            JudgeJob.objects.filter(pk=job_id, started_at__isnull=True).update(started_at=now)
    job = _load(job_id)
    if not claimed:
        return job
    return _execute(job, sleep)


def take_over(job_id: int) -> None:
    """Continue a job this worker has just claimed from a worker that died."""
    _execute(_load(job_id), time.sleep)


def _execute(job: JudgeJob, sleep) -> JudgeJob:
    log.info("judge job %s started by %s", job.pk, leases.worker_name())
    try:
        with leases.Heartbeat(JudgeJob, job.pk) as heartbeat:
            job.run_state = RunState(heartbeat)
            _run(job, sleep)
    except LeaseLost:
        log.warning("judge job %s: taken over by another worker; stopping here", job.pk)
    except Exception:
        finish(job, JobStatus.FAILED, INTERNAL_ERROR())
        raise
    job.refresh_from_db()
    log.info("judge job %s ended: %s, %s calls", job.pk, job.status, job.calls)
    return job


def finish(job: JudgeJob, status: str, error: Problem | None = None) -> None:
    """Settle the job (only while this worker holds it) and give up its lease; a paused
    job has not finished."""
    JudgeJob.objects.filter(pk=job.pk, worker=leases.worker_name()).update(
        status=status,
        error=error,
        finished_at=None if status == JobStatus.PAUSED else timezone.now(),
        lease_until=None,
        cancel_requested=False,
        pause_requested=False,
    )


def make_caller(job: JudgeJob, sleep, endpoint: Endpoint | None = None) -> Caller:
    """The job's caller: its judge's endpoint, the budget left (the job's calls so far
    count), rate limit, retries and the run's breaker; ``MissingKey`` when the key's
    variable is not set."""
    return Caller(
        endpoint or endpoint_of(job),
        budget=Budget(bounded("budget", job.budget), used=job.calls),
        limiter=RateLimiter(bounded("rpm", job.version.judge.rpm), sleep),
        sleep=sleep,
        attempts=getattr(settings, "ASSAY_JUDGE_ATTEMPTS", 4),
        backoff=getattr(settings, "ASSAY_JUDGE_BACKOFF_SECONDS", 1.0),
        max_wait=getattr(settings, "ASSAY_JUDGE_MAX_WAIT_SECONDS", 60.0),
        breaker=_state(job).breaker,
    )


def caller_or_fail(
    job: JudgeJob, pending: list[JudgePair], sleep, fail, *, min_tokens: int = 0
) -> Caller | None:
    """The job's caller, with room for at least ``min_tokens`` per answer; when the judge's
    key variable is not set, None after failing every waiting pair as ``no_key``
    (``fail(pair, outcome)`` writes each) and settling the job."""
    endpoint = endpoint_of(job)
    if min_tokens > endpoint.max_tokens:
        endpoint = dataclasses.replace(endpoint, max_tokens=min_tokens)
    try:
        return make_caller(job, sleep, endpoint)
    except MissingKey as error:
        for pair in pending:
            fail(pair, Outcome(failure=Failure.NO_KEY, detail=error.problem))
        finish(job, JobStatus.DONE)
        return None


def _settle(job: JudgeJob, pair: JudgePair, outcome: Outcome, write) -> None:
    """Write one outcome while this worker holds the job and the pair is still waiting;
    an interrupted pair stays waiting, only its calls count."""
    with transaction.atomic():
        if not leases.holds(JudgeJob, job.pk, lock=True):
            raise LeaseLost
        if outcome.interrupted:
            count_outcome(job, pair, outcome)
            return
        waiting = JudgePair.objects.select_for_update().filter(
            pk=pair.pk, status=PairStatus.PENDING
        )
        if waiting.exists():
            write(pair, outcome)


def run_calls(
    job: JudgeJob,
    pending: list[JudgePair],
    call: Callable[[JudgePair], Outcome],
    write: Callable[[JudgePair, Outcome], None],
) -> None:
    """Call for every pending pair in up to ``judge.concurrency`` threads and write each
    outcome from this thread, then end the job. Submitting stops on a fatal failure (the
    pairs not tried end with it, without calls), a cancel or pause asked, the breaker
    opening, the budget spent or the worker stopping (the calls in flight then get the
    grace period); the job is then done, cancelled or paused with its reason."""
    concurrency = bounded("concurrency", job.version.judge.concurrency)
    state = _state(job)
    breaker, lost = state.breaker, state.lost
    calls_before = job.calls
    queue = iter(pending)
    fatal: Outcome | None = None
    budget_out = False
    asked: str | None = None  # "cancel" or "pause", when someone asked
    stop_by: float | None = None  # the grace period's end once the worker is stopping
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judge")
    running = {}

    def stopping() -> bool:
        return (
            fatal is not None
            or budget_out
            or breaker.open
            or asked is not None
            or stop_by is not None
            or lost.is_set()
        )

    def submit_more() -> None:
        while len(running) < concurrency and not stopping():
            pair = next(queue, None)
            if pair is None:
                return
            running[pool.submit(call, pair)] = pair

    try:
        submit_more()
        while running:
            if stop_by is None and leases.STOPPING.is_set():
                stop_by = time.monotonic() + leases.grace_seconds()
            if stop_by is not None and time.monotonic() >= stop_by:
                break  # calls still in flight past the grace: their pairs stay waiting
            if lost.is_set():
                raise LeaseLost
            finished, _ = wait(running, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                pair = running.pop(future)
                outcome = future.result()
                _settle(job, pair, outcome, write)
                if outcome.fatal and fatal is None:
                    fatal = outcome
                if outcome.interrupted and not breaker.open:
                    budget_out = True
            if asked is None:
                flags = JudgeJob.objects.filter(pk=job.pk).values_list(
                    "cancel_requested", "pause_requested"
                )
                cancel, pause = flags.first() or (False, False)
                asked = "cancel" if cancel else "pause" if pause else None
            submit_more()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if lost.is_set():
        raise LeaseLost
    if fatal is not None:
        for pair in queue:
            _settle(job, pair, Outcome(failure=fatal.failure, detail=fatal.detail), write)
        finish(job, JobStatus.DONE)
    elif stop_by is not None:
        finish(job, JobStatus.PAUSED, WORKER_STOPPED())
    elif breaker.open:
        finish(job, JobStatus.PAUSED, breaker.problem())
    elif budget_out:
        job.refresh_from_db(fields=["calls", "budget"])
        run = job.calls - calls_before
        # Most of this run's calls refused with 429: the endpoint's limit is the fault.
        if breaker.rate_limited * 2 >= run > 0:
            reason = RATE_LIMITED_OUT(
                count=breaker.rate_limited, run=run, calls=job.calls, budget=job.budget
            )
        else:
            reason = BUDGET_REACHED(calls=job.calls, budget=job.budget)
        finish(job, JobStatus.PAUSED, reason)
    elif asked == "cancel":
        finish(job, JobStatus.CANCELLED)
    elif asked == "pause":
        finish(job, JobStatus.PAUSED, PAUSED_ON_REQUEST())
    else:
        finish(job, JobStatus.DONE)


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
    caller = caller_or_fail(job, pending, sleep, lambda p, o: _settle(job, p, o, _writer(job)))
    if caller is None:
        return
    prompts = prompts_for(job.version, list(key[p.pk] for p in pending))
    run_calls(job, pending, lambda pair: caller.judge(prompts[key[pair.pk]]), _writer(job))


def _writer(job: JudgeJob):
    return lambda pair, outcome: _write(job, pair, outcome)


def _evidence(pair: JudgePair) -> Evidence:
    if pair.chunk_id:
        return Evidence.for_chunk(Chunk.objects.select_related("document").get(pk=pair.chunk_id))
    return Evidence.for_document(Document.objects.get(pk=pair.document_id))


def _write(job: JudgeJob, pair: JudgePair, outcome: Outcome) -> None:
    """The pair's outcome, the judge's label and the job's counters, in one transaction."""

    def label() -> None:
        pair.judgment = change_label(
            query=Query.objects.get(pk=pair.query_id),
            annotator=job.version.annotator,
            evidence=_evidence(pair),
            grade=outcome.grade,
            note=outcome.reason,
            changed_by=job.version.annotator,
        ).judgment

    record_grade(job, pair, outcome, label, also=("judgment",))


def record_grade(job: JudgeJob, pair: JudgePair, outcome: Outcome, label, also=()) -> None:
    """The pair's outcome and the job's counters, in one transaction with what ``label()``
    writes when the judge answered a grade (a failure writes nothing else); ``also``: the
    pair's fields ``label`` sets."""
    with transaction.atomic():
        if outcome.grade is not None:
            label()
            pair.status, pair.grade, pair.reason = PairStatus.JUDGED, outcome.grade, outcome.reason
            pair.confidence = outcome.confidence
            pair.failure, pair.detail, pair.raw_reply = "", None, ""
        else:
            pair.status, pair.failure, pair.detail = (
                PairStatus.FAILED,
                outcome.failure,
                outcome.detail,
            )
            pair.raw_reply = outcome.raw
        fields = ["status", "grade", "reason", "confidence", *also, "failure", "detail"]
        pair.save(update_fields=[*fields, "raw_reply"])
        count_outcome(job, pair, outcome)
