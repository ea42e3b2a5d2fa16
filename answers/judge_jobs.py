"""RAG answers judged by an LLM judge, as judging jobs: ``judge_answers`` and the answers
page plan a job (what it will cost, before it starts); the worker asks the judge and
writes its judgements with the judges' own budget, rate limit, retries, counters, failure
kinds, cancelling and resuming (``judges.engine``, which runs jobs of kind ``answers``
through ``run_answer_job``, registered when the app starts).

A job has one pair per answer for its nuggets (``judge_prompts.nugget_prompt``: every
nugget of the answer's query at once) and one per citation for its support
(``judge_prompts.support_prompt``: the sentence and the cited text). Each reply is read
strictly; one that is not exactly the JSON asked for fails its pair (``malformed``, the
reply kept) and writes nothing. The judgements are written through the answers' one
writer (``judging.change_judgment``) as the judge version's pseudo-annotator — its label
source is ``judge:<slug>@<n>``, never people — so each change is in the history. A pair
this version has judged already (every nugget of the answer, or the citation) is skipped,
as a pair a version labelled is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from annotator.models import Membership
from formats.errors import define, gettext_noop
from judges.client import Outcome, clip_raw
from judges.engine import caller_or_fail, count_outcome, finish, run_calls
from judges.models import Failure, JobKind, JobStatus, Judge, JudgeJob, JudgePair, PairStatus
from judges.services import JudgeError, estimate_tokens, record_job
from nuggets.models import Nugget

from .judge_prompts import (
    UnreadableReply,
    nugget_prompt,
    read_nuggets,
    read_support,
    support_prompt,
)
from .judging import JudgmentRefused, Target, change_judgment
from .models import Answer, AnswerJudgment, AnswerRun, Aspect, Citation

ANSWER_TOKENS = 1000  # room for every nugget's level, whatever the grading limit
ASPECTS = (Aspect.NUGGET.value, Aspect.SUPPORT.value)

NO_JUDGE_VERSION = define("answer_jobs.no_version", gettext_noop("the judge has no version"))
UNKNOWN_RUNS = define("answer_jobs.unknown_runs", gettext_noop("unknown answer runs: %(names)s"))
UNKNOWN_QUERIES = define("answer_jobs.unknown_queries", gettext_noop("unknown query ids: %(qids)s"))
BAD_MAX = define(
    "answer_jobs.bad_max", gettext_noop("the number of answers is at least 1, not %(n)s")
)
BAD_ASPECTS = define(
    "answer_jobs.bad_aspects", gettext_noop("judge nugget, support or both, not %(aspects)s")
)
GONE = define(
    "answer_jobs.gone",
    gettext_noop("the answer, citation or nuggets asked about were removed since"),
)


@dataclass(frozen=True)
class Question:
    """One call of a job: an answer's nuggets (``citation`` None) or one citation."""

    query_pk: int
    answer_pk: int
    citation_pk: int | None
    prompt: str
    nugget_pks: tuple[int, ...] = ()


@dataclass
class AnswerPlan:
    """What an answers job will ask, before it starts."""

    judge: Judge
    runs: list[str]
    qids: list[str]
    answers: int  # answers chosen
    questions: list[Question]  # still to ask this version
    already: int  # questions this version has answered before (skipped)
    without_nuggets: int  # answers whose query has no nuggets (no nugget question)
    aspects: tuple[str, ...] = ASPECTS
    _tokens: int | None = field(default=None, repr=False)

    @property
    def version(self):
        return self.judge.current

    @property
    def nugget_questions(self) -> int:
        return sum(1 for q in self.questions if q.citation_pk is None)

    @property
    def support_questions(self) -> int:
        return len(self.questions) - self.nugget_questions

    @property
    def calls(self) -> int:
        """Calls without retries, the budget taken into account."""
        return min(len(self.questions), self.judge.budget)

    def prompt_tokens(self) -> int:
        if self._tokens is None:
            self._tokens = sum(estimate_tokens(q.prompt) for q in self.questions[: self.calls])
        return self._tokens

    @property
    def max_output_tokens(self) -> int:
        return self.calls * answer_tokens(self.version.max_tokens)

    def as_json(self) -> dict:
        return {
            "judge": self.judge.slug,
            "version": self.version.number,
            "runs": self.runs,
            "answers": self.answers,
            "nugget_calls": self.nugget_questions,
            "support_calls": self.support_questions,
            "already": self.already,
            "without_nuggets": self.without_nuggets,
            "calls": self.calls,
            "budget": self.judge.budget,
            "prompt_tokens": self.prompt_tokens(),
            "max_output_tokens": self.max_output_tokens,
        }


def answer_tokens(judge_tokens: int) -> int:
    return max(judge_tokens, ANSWER_TOKENS)


def _people_judged(project) -> set[int]:
    pseudo = Membership.objects.filter(project=project, is_pseudo=True).values("user_id")
    return set(
        AnswerJudgment.objects.filter(answer__run__project=project)
        .exclude(annotator_id__in=pseudo)
        .values_list("answer_id", flat=True)
        .distinct()
    )


def questions_for(answers: list[Answer], aspects=ASPECTS) -> list[Question]:
    """The questions of ``answers`` (loaded with their queries): the nuggets of each whose
    query has some, then each citation, in the order of the answers."""
    nuggets: dict[int, list[Nugget]] = {}
    for nugget in Nugget.objects.filter(query_id__in={a.query_id for a in answers}).order_by(
        "query_id", "order", "pk"
    ):
        nuggets.setdefault(nugget.query_id, []).append(nugget)
    cited: dict[int, list[Citation]] = {}
    if Aspect.SUPPORT in aspects:
        for citation in (
            Citation.objects.filter(answer__in=answers)
            .select_related("sentence", "document")
            .order_by("sentence__number", "number")
        ):
            cited.setdefault(citation.answer_id, []).append(citation)
    questions = []
    for answer in answers:
        query = answer.query
        found = nuggets.get(answer.query_id, [])
        if Aspect.NUGGET in aspects and found:
            questions.append(
                Question(
                    query.pk,
                    answer.pk,
                    None,
                    nugget_prompt(query.text, answer.text, [n.text for n in found]),
                    tuple(n.pk for n in found),
                )
            )
        for citation in cited.get(answer.pk, []):
            document = citation.document
            questions.append(
                Question(
                    query.pk,
                    answer.pk,
                    citation.pk,
                    support_prompt(
                        query.text,
                        citation.sentence.text,
                        document.text[citation.start : citation.end],
                        document.title or document.doc_id,
                    ),
                )
            )
    return questions


def answered_by(version, questions: list[Question]) -> set[tuple[int, int | None]]:
    """The (answer, citation or None) of ``questions`` this version has answered: every
    nugget of the question judged, or the citation's support."""
    if not questions:
        return set()
    rows = AnswerJudgment.objects.filter(
        annotator=version.annotator,
        answer_id__in={q.answer_pk for q in questions},
        aspect__in=ASPECTS,
    ).values_list("answer_id", "aspect", "nugget_id", "citation_id")
    nuggets: dict[int, set[int]] = {}
    done = set()
    for answer, aspect, nugget, citation in rows:
        if aspect == Aspect.SUPPORT:
            done.add((answer, citation))
        else:
            nuggets.setdefault(answer, set()).add(nugget)
    for q in questions:
        if q.citation_pk is None and set(q.nugget_pks) <= nuggets.get(q.answer_pk, set()):
            done.add((q.answer_pk, None))
    return done & {(q.answer_pk, q.citation_pk) for q in questions}


def plan_answers(
    judge: Judge,
    *,
    runs: list[str] | None = None,
    qids: list[str] | None = None,
    max_answers: int | None = None,
    aspects=ASPECTS,
) -> AnswerPlan:
    """The answers of the runs named (default: every active answer run) to the queries
    named (default: all), at most ``max_answers`` of them — those people have judged first
    (so the judge can be calibrated on them), then by query and run. ``JudgeError`` on an
    unknown run or query or a bad number."""
    project = judge.project
    if judge.current is None:
        raise JudgeError(NO_JUDGE_VERSION())
    aspects = tuple(a for a in ASPECTS if a in set(aspects or ()))
    if not aspects:
        raise JudgeError(BAD_ASPECTS(aspects=repr(aspects)))
    if max_answers is not None and max_answers < 1:
        raise JudgeError(BAD_MAX(n=max_answers))
    chosen_runs = AnswerRun.objects.filter(project=project)
    if runs:
        found = set(chosen_runs.filter(name__in=runs).values_list("name", flat=True))
        missing = [name for name in runs if name not in found]
        if missing:
            raise JudgeError(UNKNOWN_RUNS(names=", ".join(missing[:20])))
        chosen_runs = chosen_runs.filter(name__in=runs)
    else:
        chosen_runs = chosen_runs.active()
    answers = Answer.objects.filter(run__in=chosen_runs).select_related("query", "run")
    if qids:
        found = set(project.queries.filter(qid__in=qids).values_list("qid", flat=True))
        missing = [q for q in qids if q not in found]
        if missing:
            raise JudgeError(UNKNOWN_QUERIES(qids=", ".join(missing[:20])))
        answers = answers.filter(query__qid__in=qids)
    judged = _people_judged(project)
    chosen = sorted(answers, key=lambda a: (a.pk not in judged, a.query.qid, a.run.name))
    if max_answers is not None:
        chosen = chosen[:max_answers]
    with_nuggets = set(
        Nugget.objects.filter(query_id__in={a.query_id for a in chosen}).values_list(
            "query_id", flat=True
        )
    )
    questions = questions_for(chosen, aspects)
    done = answered_by(judge.current, questions)
    return AnswerPlan(
        judge=judge,
        runs=sorted({a.run.name for a in chosen}),
        qids=list(qids or []),
        answers=len(chosen),
        questions=[q for q in questions if (q.answer_pk, q.citation_pk) not in done],
        already=len(done),
        without_nuggets=sum(1 for a in chosen if a.query_id not in with_nuggets)
        if Aspect.NUGGET in aspects
        else 0,
        aspects=aspects,
    )


def start_answers(plan: AnswerPlan, *, created_by=None, enqueue: bool = True) -> JudgeJob:
    """Record the job (one pair per question) and queue it for the worker."""
    return record_job(
        [
            JudgePair(query_id=q.query_pk, answer=q.answer_pk, citation=q.citation_pk)
            for q in plan.questions
        ],
        enqueue=enqueue,
        version=plan.version,
        kind=JobKind.ANSWERS,
        qids=plan.qids,
        level="",
        budget=plan.judge.budget,
        created_by=created_by,
    )


def _questions_of(pending: list[JudgePair]) -> dict[int, Question | None]:
    """Each pair's question as it stands now (None: its answer or citation is gone)."""
    answers = {
        a.pk: a
        for a in Answer.objects.filter(pk__in={p.answer for p in pending}).select_related("query")
    }
    by_key = {(q.answer_pk, q.citation_pk): q for q in questions_for(list(answers.values()))}
    return {pair.pk: by_key.get((pair.answer, pair.citation)) for pair in pending}


def run_answer_job(job: JudgeJob, sleep) -> None:
    """The worker's part (``judges.engine`` claims the job and calls this)."""
    pending = list(job.pairs.filter(status=PairStatus.PENDING).order_by("pk"))
    questions = _questions_of(pending)
    done = answered_by(job.version, [q for q in questions.values() if q is not None])
    skipped = {p.pk for p in pending if questions[p.pk] and (p.answer, p.citation) in done}
    JudgePair.objects.filter(pk__in=skipped).update(status=PairStatus.SKIPPED)
    pending = [p for p in pending if p.pk not in skipped]
    if not pending:
        finish(job, JobStatus.DONE)
        return
    caller = caller_or_fail(
        job, pending, sleep, lambda p, o: _write(job, p, None, o), min_tokens=ANSWER_TOKENS
    )
    if caller is None:
        return

    def call(pair: JudgePair) -> Outcome:
        question = questions[pair.pk]
        if question is None:
            return Outcome(failure=Failure.GONE, detail=GONE())
        return caller.ask(question.prompt)

    run_calls(
        job,
        pending,
        call,
        lambda pair, outcome: _write(job, pair, questions[pair.pk], outcome, caller.secret),
    )


def _judge(job: JudgeJob, question: Question, reply: str) -> tuple[int | None, str]:
    """Read the reply and write its judgements (inside the caller's transaction); the
    citation's value and reason, or (None, "") for nuggets. ``UnreadableReply`` or
    ``JudgmentRefused`` (a nugget or citation removed since): nothing written."""
    answer = Answer.objects.select_related("query").get(pk=question.answer_pk)
    annotator = job.version.annotator
    if question.citation_pk is None:
        assignment = read_nuggets(reply, len(question.nugget_pks))
        with transaction.atomic():
            for nugget_pk, value in zip(question.nugget_pks, assignment.values, strict=True):
                change_judgment(
                    answer=answer,
                    annotator=annotator,
                    target=Target(Aspect.NUGGET, nugget_pk),
                    value=value,
                )
        return None, ""
    support = read_support(reply)
    change_judgment(
        answer=answer,
        annotator=annotator,
        target=Target(Aspect.SUPPORT, question.citation_pk),
        value=support.value,
        note=support.reason,
    )
    return support.value, support.reason


def _write(
    job: JudgeJob, pair: JudgePair, question: Question | None, outcome: Outcome, secret=""
) -> None:
    """The pair's judgements, its outcome and the job's counters, in one transaction; a
    reply that is not the JSON asked for fails the pair (its reply kept) and writes no
    judgement."""
    with transaction.atomic():
        pair.status, pair.failure, pair.detail = PairStatus.FAILED, outcome.failure, outcome.detail
        pair.raw_reply = outcome.raw
        if not outcome.failure and question is not None:
            try:
                pair.grade, pair.reason = _judge(job, question, outcome.answer)
            except UnreadableReply as error:
                pair.failure, pair.detail = Failure.MALFORMED, error.problem
                pair.raw_reply = clip_raw(outcome.answer, secret)
            except (JudgmentRefused, Answer.DoesNotExist):
                pair.failure, pair.detail = Failure.GONE, GONE()
            else:
                pair.status, pair.failure, pair.detail = PairStatus.JUDGED, "", None
        pair.save(update_fields=["status", "failure", "detail", "raw_reply", "grade", "reason"])
        count_outcome(job, pair, outcome)


def answer_jobs(project) -> list[JudgeJob]:
    """The project's answers jobs, newest first (the answers page lists them)."""
    return list(
        JudgeJob.objects.filter(version__judge__project=project, kind=JobKind.ANSWERS)
        .select_related("version__judge")
        .order_by("-pk")
    )
