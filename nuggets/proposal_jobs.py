"""Nugget proposals as judging jobs: ``propose_nuggets`` and the query page's button plan a
job (what it will cost, before it starts), the worker asks the judge once per query and
writes its proposals, with the judges' own budget, rate limit, retries, counters, failure
kinds, cancelling and resuming (``judges.engine``).

A job of kind ``nuggets`` has one pair per query (no unit). Its prompt is
``proposals.proposal_prompt`` over the query's numbered passages, asked with room for the
answer (``ANSWER_TOKENS`` at least, whatever the judge's grading limit); the passages are
those the prompt sent, kept for the answer's citations. A query this judge version has
proposed nuggets for already is skipped, as a pair a version judged is.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from annotator.models import Query
from formats.errors import define, gettext_noop
from judges.client import Outcome
from judges.engine import caller_or_fail, count_outcome, finish, run_calls
from judges.models import Failure, JobKind, JobStatus, Judge, JudgeJob, JudgePair, PairStatus
from judges.services import JudgeError, estimate_tokens, record_job

from .models import NuggetProposal
from .proposals import (
    DEFAULT_MAX_NUGGETS,
    NO_PASSAGES,
    Passage,
    UnreadableAnswer,
    passages_for,
    proposal_prompt,
    read_answer,
    store,
)

ANSWER_TOKENS = 1500  # room for a JSON list of nuggets, whatever the grading limit
MAX_NUGGETS = 50

UNKNOWN_QUERIES = define("proposals.unknown_queries", gettext_noop("unknown query ids: %(qids)s"))
BAD_MAX = define(
    "proposals.bad_max", gettext_noop("the number of nuggets asked for is 1–%(max)s, not %(n)s")
)
NO_JUDGE_VERSION = define("proposals.no_version", gettext_noop("the judge has no version"))


@dataclass
class ProposalPlan:
    """What a proposal job will ask, and what it leaves out, before it starts."""

    judge: Judge
    max_nuggets: int
    asked: list[tuple[Query, list[Passage]]]  # the queries to ask for, with their passages
    without_evidence: list[str]  # qids with no relevant evidence labelled by people
    already: list[str]  # qids this version has proposed for (skipped)

    @property
    def version(self):
        return self.judge.current

    @property
    def calls(self) -> int:
        """Calls without retries, the budget taken into account."""
        return min(len(self.asked), self.judge.budget)

    def prompt_tokens(self) -> int:
        return sum(
            estimate_tokens(proposal_prompt(q, passages, self.max_nuggets))
            for q, passages in self.asked[: self.calls]
        )

    @property
    def max_output_tokens(self) -> int:
        return self.calls * answer_tokens(self.version.max_tokens)


def answer_tokens(judge_tokens: int) -> int:
    return max(judge_tokens, ANSWER_TOKENS)


def proposed_by(version, query_pks) -> set[int]:
    """The queries this judge version has proposed nuggets for (any decision since)."""
    return set(
        NuggetProposal.objects.filter(judge_version=version, query_id__in=list(query_pks))
        .values_list("query_id", flat=True)
        .distinct()
    )


def plan_proposals(
    judge: Judge, *, qids: list[str] | None = None, max_nuggets: int = DEFAULT_MAX_NUGGETS
) -> ProposalPlan:
    """The queries named (``qids``), or else every query with people's relevant evidence
    and no nuggets yet; those without evidence, or proposed for by this judge version
    already, are left out and named. ``JudgeError`` on an unknown query or a bad number."""
    project = judge.project
    if judge.current is None:
        raise JudgeError(NO_JUDGE_VERSION())
    if not 1 <= max_nuggets <= MAX_NUGGETS:
        raise JudgeError(BAD_MAX(max=MAX_NUGGETS, n=max_nuggets))
    queries = Query.objects.filter(project=project).select_related("project").order_by("pk")
    if qids:
        found = {q.qid: q for q in queries.filter(qid__in=qids)}
        missing = [q for q in qids if q not in found]
        if missing:
            raise JudgeError(UNKNOWN_QUERIES(qids=", ".join(missing[:20])))
        chosen = [found[q] for q in dict.fromkeys(qids)]
    else:
        chosen = list(queries.filter(nuggets__isnull=True))
    done = proposed_by(judge.current, [q.pk for q in chosen])
    asked, without, already = [], [], []
    for query in chosen:
        if query.pk in done:
            already.append(query.qid)
            continue
        passages = passages_for(query)
        if passages:
            asked.append((query, passages))
        elif qids:
            without.append(query.qid)
    return ProposalPlan(judge, max_nuggets, asked, without, already)


def start_proposals(plan: ProposalPlan, *, created_by=None, enqueue: bool = True) -> JudgeJob:
    """Record the job (one pair per query) and queue it for the worker."""
    return record_job(
        [JudgePair(query=q) for q, _p in plan.asked],
        enqueue=enqueue,
        version=plan.version,
        kind=JobKind.NUGGETS,
        max_nuggets=plan.max_nuggets,
        qids=[q.qid for q, _p in plan.asked],
        level="",
        budget=plan.judge.budget,
        created_by=created_by,
    )


def run_proposal_job(job: JudgeJob, sleep) -> None:
    """The worker's part (``judges.engine`` claims the job and calls this)."""
    pending = list(job.pairs.filter(status=PairStatus.PENDING).select_related("query__project"))
    done = proposed_by(job.version, [p.query_id for p in pending])
    JudgePair.objects.filter(pk__in=[p.pk for p in pending if p.query_id in done]).update(
        status=PairStatus.SKIPPED
    )
    pending = [p for p in pending if p.query_id not in done]
    if not pending:
        finish(job, JobStatus.DONE)
        return
    caller = caller_or_fail(
        job, pending, sleep, lambda p, o: _write(job, p, [], o), min_tokens=ANSWER_TOKENS
    )
    if caller is None:
        return
    max_nuggets = job.max_nuggets or DEFAULT_MAX_NUGGETS
    passages = {pair.pk: passages_for(pair.query) for pair in pending}
    prompts = {
        pair.pk: proposal_prompt(pair.query, passages[pair.pk], max_nuggets) for pair in pending
    }

    def call(pair: JudgePair) -> Outcome:
        if not passages[pair.pk]:  # labels changed since the plan: nothing to send
            return Outcome(failure=Failure.NO_EVIDENCE, detail=NO_PASSAGES(qid=pair.query.qid))
        return caller.ask(prompts[pair.pk])

    run_calls(
        job,
        pending,
        call,
        lambda pair, outcome: _write(job, pair, passages[pair.pk], outcome, max_nuggets),
    )


def _write(
    job: JudgeJob,
    pair: JudgePair,
    passages: list[Passage],
    outcome: Outcome,
    max_nuggets: int = DEFAULT_MAX_NUGGETS,
) -> None:
    """The query's proposals (offsets from the passages sent), the pair's outcome and the
    job's counters, in one transaction. An answer that is not the JSON asked for, or that
    proposes nuggets all of which are refused, fails the pair; a refused nugget beside
    accepted ones is kept as the pair's detail."""
    with transaction.atomic():
        pair.failure, pair.detail = outcome.failure, outcome.detail
        pair.status = PairStatus.FAILED
        if not outcome.failure:
            try:
                read = read_answer(outcome.answer, len(passages), max_nuggets)
            except UnreadableAnswer as error:
                pair.failure, pair.detail = Failure.MALFORMED, error.problem
            else:
                stored = store(pair.query, passages, read, judge_version=job.version, job_id=job.pk)
                refused = read.refused[0] if read.refused else None
                if stored or not read.refused:  # an empty list is an answer too
                    pair.status, pair.failure, pair.detail = PairStatus.JUDGED, "", refused
                else:
                    pair.failure, pair.detail = Failure.MALFORMED, refused
        pair.save(update_fields=["status", "failure", "detail"])
        count_outcome(job, pair, outcome)
