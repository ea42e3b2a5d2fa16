"""Judges and their jobs: configure, version, plan (with the cost before it starts), start,
cancel, resume and retry. The calls themselves run in the worker (``judges.engine``)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotator.models import (
    Chunk,
    Chunking,
    Document,
    Judgment,
    Membership,
    Project,
    Role,
    SourceKind,
)
from formats.errors import Problem, define, gettext_noop

from .endpoints import HostPolicy, key_problem, url_problem
from .models import JobStatus, Judge, JudgeJob, JudgePair, JudgeVersion, PairStatus
from .prompts import (
    DEFAULT_PROMPT,
    labels_for,
    language_of,
    normalise_prompt,
    render,
    template_for,
    unknown_placeholders,
    values_for,
)
from .scope import Pair, ScopeKeys, scope_keys

VERSIONED = ("prompt", "model", "temperature", "max_tokens")
SETTINGS = (
    "base_url",
    "api_key_env",
    "timeout_seconds",
    "concurrency",
    "rpm",
    "budget",
    "logprobs",
)


UNKNOWN_PLACEHOLDERS = define(
    "judge.unknown_placeholders", gettext_noop("unknown placeholders in the prompt: %(names)s")
)
NAME_TAKEN = define(
    "judge.name_taken", gettext_noop("the name %(name)s is taken by another account")
)
JUDGE_EXISTS = define(
    "judge.exists", gettext_noop("project %(project)s already has a judge %(slug)s")
)
BAD_LEVEL = define(
    "judge.bad_level", gettext_noop("level must be chunk or document, not %(level)s")
)
NO_SUCH_CHUNKING = define(
    "judge.no_such_chunking", gettext_noop("no chunking %(name)s in this project")
)
NO_CHUNKING = define("judge.no_chunking", gettext_noop("the project has no chunking"))
SAMPLE_SIZE = define("judge.sample_size", gettext_noop("a sample needs its size N"))
UNKNOWN_QUERIES = define("judge.unknown_queries", gettext_noop("unknown query ids: %(qids)s"))
STILL_RUNNING = define("judge.still_running", gettext_noop("the job is still running"))
PAUSED_ON_REQUEST = define("judge_job.paused", gettext_noop("paused on request"))


class JudgeError(ValueError):
    """A judge or job that cannot be configured or started as asked; ``problem`` says why
    (a code and its values, shown in the reader's language)."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem


def host_policy() -> HostPolicy:
    """The hosts web-configured judges may call: ASSAY_JUDGE_ALLOWED_HOSTS, never Assay's
    own host (ALLOWED_HOSTS)."""
    return HostPolicy.parse(settings.ASSAY_JUDGE_ALLOWED_HOSTS, settings.ALLOWED_HOSTS)


def check_settings(
    *, project: Project, api_key_env: str, base_url: str, prompt: str, by_operator: bool
) -> None:
    """The key and endpoint rules (``judges.endpoints``) and the prompt's placeholders."""
    problem = key_problem(api_key_env, project=project.slug, by_operator=by_operator)
    if problem is None and not by_operator:
        problem = url_problem(base_url, host_policy())
    if problem is not None:
        raise JudgeError(problem)
    unknown = unknown_placeholders(prompt)
    if unknown:
        raise JudgeError(UNKNOWN_PLACEHOLDERS(names=", ".join(unknown)))


def annotator_name(judge: Judge, number: int) -> str:
    return f"judge-{judge.project.slug}-{judge.slug}-v{number}"[:150]


def _new_version(judge: Judge) -> JudgeVersion:
    latest = judge.current
    number = latest.number + 1 if latest else 1
    User = get_user_model()
    name = annotator_name(judge, number)
    if User.objects.filter(username=name).exists():
        raise JudgeError(NAME_TAKEN(name=repr(name)))
    user = User(username=name)
    user.set_unusable_password()
    user.save()
    # A pseudo-annotator: holds labels, never logs in, left out of gold unless named; its
    # label source is this version of this judge (``judge:<slug>@<number>``).
    Membership.objects.create(
        project=judge.project,
        user=user,
        role=Role.ANNOTATOR,
        is_pseudo=True,
        source=SourceKind.JUDGE,
        judge_slug=judge.slug,
        judge_version=number,
    )
    return JudgeVersion.objects.create(
        judge=judge,
        number=number,
        prompt=judge.prompt,
        model=judge.model,
        temperature=judge.temperature,
        max_tokens=judge.max_tokens,
        annotator=user,
    )


def create_judge(
    project: Project,
    *,
    slug: str,
    name: str,
    prompt: str | None = None,
    by_operator: bool = False,
    **fields,
) -> Judge:
    """A new judge; ``by_operator`` when the server's operator configures it (``add_judge``),
    else (the web) its key must be allowed for the project and its host public or allowed."""
    prompt = normalise_prompt(prompt or DEFAULT_PROMPT)
    check_settings(
        project=project,
        api_key_env=fields.get("api_key_env", ""),
        base_url=fields.get("base_url", ""),
        prompt=prompt,
        by_operator=by_operator,
    )
    if Judge.objects.filter(project=project, slug=slug).exists():
        raise JudgeError(JUDGE_EXISTS(project=project.slug, slug=repr(slug)))
    with transaction.atomic():
        judge = Judge(
            project=project,
            slug=slug,
            name=name,
            prompt=prompt,
            configured_by_operator=by_operator,
            **fields,
        )
        judge.full_clean(exclude=["project"])
        judge.save()
        _new_version(judge)
    return judge


def shaping(source: Judge | JudgeVersion) -> dict:
    """What shapes a judge's answers, as compared to decide on a new version: the prompt
    normalised (``normalise_prompt``: line endings, trailing spaces), the model without
    surrounding spaces, the temperature and the output limit. The timeout, rate limit,
    concurrency, budget, endpoint and key name are settings: they never make a version."""
    return {
        "prompt": normalise_prompt(source.prompt),
        "model": source.model.strip(),
        "temperature": float(source.temperature),
        "max_tokens": int(source.max_tokens),
    }


def update_judge(judge: Judge, *, by_operator: bool = False, **fields) -> JudgeVersion:
    """Change a judge; a real change to what shapes its answers (``shaping``) starts a new
    version, anything else (the same prompt sent back with other line endings, the
    timeout, the rate limit …) changes the settings only. A judge the operator configured
    stays the operator's until its endpoint or key is changed from elsewhere (the web);
    then the web's rules apply to it."""
    merged = {f: fields.get(f, getattr(judge, f)) for f in (*VERSIONED, *SETTINGS, "name")}
    merged["prompt"] = normalise_prompt(merged["prompt"])
    merged["model"] = merged["model"].strip()
    moved = any(merged[f] != getattr(judge, f) for f in ("base_url", "api_key_env"))
    operator = by_operator or (judge.configured_by_operator and not moved)
    check_settings(
        project=judge.project,
        api_key_env=merged["api_key_env"],
        base_url=merged["base_url"],
        prompt=merged["prompt"],
        by_operator=operator,
    )
    merged["configured_by_operator"] = operator
    with transaction.atomic():
        for field, value in merged.items():
            setattr(judge, field, value)
        judge.full_clean(exclude=["project"])
        judge.save()
        current = judge.current
        if current is None or shaping(current) != shaping(judge):
            return _new_version(judge)
        return current


@dataclass(frozen=True)
class Change:
    """One thing a version changed from the version before it."""

    field: str  # prompt | model | temperature | max_tokens
    before: str
    after: str


@dataclass(frozen=True)
class VersionHistory:
    """A version and what it changed from the one before (nothing for the first)."""

    version: JudgeVersion
    changes: list[Change]
    prompt_diff: list[str]  # the unified diff of the prompts, line by line; [] if the same

    @property
    def changed_fields(self) -> list[str]:
        return [c.field for c in self.changes]


def version_history(judge: Judge) -> list[VersionHistory]:
    """Each version of ``judge``, oldest first, with what changed from the one before:
    the prompt (its diff, compared normalised), the model, the temperature, the output
    limit."""
    history = []
    previous = None
    for version in judge.versions.select_related("annotator").order_by("number"):
        changes, diff = [], []
        if previous is not None:
            before, after = shaping(previous), shaping(version)
            for field in VERSIONED:
                if before[field] != after[field]:
                    shown = ("", "") if field == "prompt" else (before[field], after[field])
                    changes.append(Change(field, str(shown[0]), str(shown[1])))
            if before["prompt"] != after["prompt"]:
                diff = list(
                    difflib.unified_diff(
                        before["prompt"].splitlines(),
                        after["prompt"].splitlines(),
                        f"v{previous.number}",
                        f"v{version.number}",
                        lineterm="",
                    )
                )
        history.append(VersionHistory(version, changes, diff))
        previous = version
    return history


@dataclass
class Plan:
    version: JudgeVersion
    scope: str
    level: str
    chunking: Chunking | None
    qids: list[str]
    sample_size: int | None
    todo: ScopeKeys  # the pairs still to judge by this version, as arrays
    already: int  # pairs in scope this version has judged before (skipped)

    @property
    def n_pairs(self) -> int:
        return len(self.todo)

    @cached_property
    def pairs(self) -> list[Pair]:
        """The pairs still to judge by this version (made only when asked: an estimate
        counts them and renders only the first ``calls``)."""
        return self.todo.pairs()

    @property
    def calls(self) -> int:
        """Calls the job makes without retries, the budget taken into account."""
        return min(self.n_pairs, self.version.judge.budget)

    def prompt_tokens(self) -> int:
        prompts = prompts_for(self.version, self.todo.pairs(self.calls))
        return sum(estimate_tokens(p) for p in prompts.values())

    @property
    def max_output_tokens(self) -> int:
        return self.calls * self.version.max_tokens


def estimate_tokens(text: str) -> int:
    """Rough token count: about four ASCII characters, or one other character, per token."""
    ascii_chars = len(text.encode("ascii", "ignore"))  # the ASCII characters, counted in C
    return (ascii_chars + 3) // 4 + (len(text) - ascii_chars)


def judged_by(version: JudgeVersion, pairs: list[Pair]) -> set[Pair]:
    """The pairs of ``pairs`` this version has a label for already, at the pair's own level:
    a chunk label answers only its (query, chunk), a document label only its (query,
    document), never the other level's pair."""
    if not pairs:
        return set()
    labels = Judgment.objects.filter(
        annotator=version.annotator, query_id__in={p.query for p in pairs}
    ).values_list("query_id", "granularity", "document_id", "chunk_id")
    done = set()
    for query, granularity, document, chunk in labels:
        if granularity == "chunk":
            done.add(Pair(query, document, chunk))
        elif granularity == "document":
            done.add(Pair(query, document, None))
    return done & set(pairs)


def judged_mask(version: JudgeVersion, keys: ScopeKeys) -> np.ndarray:
    """``judged_by`` for a scope's arrays: which of its pairs this version has a label
    for at the pairs' own level."""
    chunk = keys.chunk
    granularity = "document" if chunk is None else "chunk"
    item = keys.document if chunk is None else chunk
    labels = np.array(
        Judgment.objects.filter(annotator=version.annotator, granularity=granularity)
        .values_list("query_id", "document_id" if chunk is None else "chunk_id")
        .order_by()
        .distinct(),
        dtype=np.int64,
    ).reshape(-1, 2)
    return np.isin(
        (keys.query.astype(np.int64) << 32) | item,
        (labels[:, 0] << 32) | labels[:, 1],
    )


def plan_job(
    judge: Judge,
    *,
    scope: str = "holes",
    level: str = "chunk",
    chunking: str | None = None,
    qids: list[str] | None = None,
    sample_size: int | None = None,
) -> Plan:
    project = judge.project
    version = judge.current
    if level not in ("chunk", "document"):
        raise JudgeError(BAD_LEVEL(level=repr(level)))
    chunking_obj = None
    if level == "chunk":
        chunking_obj = (
            Chunking.objects.filter(project=project, name=chunking).first()
            if chunking
            else project.chunkings.order_by("pk").first()
        )
        if chunking_obj is None:
            raise JudgeError(NO_SUCH_CHUNKING(name=repr(chunking)) if chunking else NO_CHUNKING())
    if scope == "sample" and not sample_size:
        raise JudgeError(SAMPLE_SIZE())
    query_pks = None
    if qids:
        found = dict(project.queries.filter(qid__in=qids).values_list("qid", "pk"))
        missing = [q for q in qids if q not in found]
        if missing:
            raise JudgeError(UNKNOWN_QUERIES(qids=", ".join(missing[:20])))
        query_pks = set(found.values())
    keys = scope_keys(
        project,
        scope=scope,
        level=level,
        chunking=chunking_obj,
        query_pks=query_pks,
        sample_size=sample_size,
    )
    done = judged_mask(version, keys)
    return Plan(
        version,
        scope,
        level,
        chunking_obj,
        list(qids or []),
        sample_size,
        keys.take(~done),
        int(done.sum()),
    )


def prompts_for(version: JudgeVersion, pairs: list[Pair]) -> dict[Pair, str]:
    """The rendered prompt of every pair (documents and queries loaded once), the default
    prompt in each query's language (``prompts.language_of``)."""
    project = version.judge.project
    documents = {
        d.pk: d
        for d in Document.objects.filter(pk__in={p.document for p in pairs}).only(
            "pk", "title", "text"
        )
    }
    spans = {
        pk: (start, end)
        for pk, start, end in Chunk.objects.filter(
            pk__in={p.chunk for p in pairs if p.chunk}
        ).values_list("pk", "start", "end")
    }
    queries = dict(
        project.queries.filter(pk__in={p.query for p in pairs}).values_list("pk", "text")
    )
    # Each query's language, and each language's template and labels, worked out once.
    languages = {pk: language_of(text) for pk, text in queries.items()}
    labels = {lang: labels_for(project.grade_labels, lang) for lang in set(languages.values())}
    templates = {lang: template_for(version.prompt, lang) for lang in labels}
    prompts = {}
    for pair in pairs:
        document = documents[pair.document]
        if pair.chunk:
            start, end = spans[pair.chunk]
            text = document.text[start:end]
        else:
            text = document.text
        language = languages[pair.query]
        values = values_for(
            query=queries[pair.query],
            passage=text,
            title=document.title,
            guidelines=project.guidelines,
            grade_labels=labels[language],
        )
        prompts[pair] = render(templates[language], values)
    return prompts


def start_job(plan: Plan, *, created_by=None, enqueue: bool = True) -> JudgeJob:
    """Record the job and its pairs, then queue it for the worker."""
    return record_job(
        [JudgePair(query_id=p.query, document_id=p.document, chunk_id=p.chunk) for p in plan.pairs],
        enqueue=enqueue,
        version=plan.version,
        scope=plan.scope,
        sample_size=plan.sample_size,
        qids=plan.qids,
        level=plan.level,
        chunking=plan.chunking,
        budget=plan.version.judge.budget,
        n_pairs=plan.n_pairs,
        created_by=created_by,
    )


def record_job(pairs: list[JudgePair], *, enqueue: bool = True, **fields) -> JudgeJob:
    """Record a job (``fields``; ``n_pairs`` the number of pairs unless given) and its
    pairs (unsaved, without their job) in one transaction, then queue it for the worker
    once that transaction commits (unless ``enqueue`` is false). Every kind of judging job
    starts here."""
    with transaction.atomic():
        job = JudgeJob.objects.create(**{"n_pairs": len(pairs), **fields})
        for pair in pairs:
            pair.job = job
        JudgePair.objects.bulk_create(pairs, batch_size=2000)
    if enqueue:
        queue(job)
    return job


def queue(job: JudgeJob) -> None:
    from .engine import run_judge_job

    transaction.on_commit(lambda: run_judge_job.enqueue(job.pk))


def _worker_alive(now) -> Q:
    """A running job whose worker still renews its lease."""
    return Q(status=JobStatus.RUNNING, lease_until__gte=now)


def _worker_gone(now) -> Q:
    """A running job whose worker died: its lease has passed (or it never had one)."""
    return Q(status=JobStatus.RUNNING) & (Q(lease_until__lt=now) | Q(lease_until__isnull=True))


def cancel_job(job: JudgeJob) -> None:
    """Ask a running job to stop after the calls in flight; a waiting or paused one, or
    one whose worker died, stops at once."""
    now = timezone.now()
    jobs = JudgeJob.objects.filter(pk=job.pk)
    jobs.filter(_worker_alive(now)).update(cancel_requested=True)
    jobs.filter(Q(status__in=[JobStatus.PENDING, JobStatus.PAUSED]) | _worker_gone(now)).update(
        status=JobStatus.CANCELLED, finished_at=now, lease_until=None
    )


def pause_job(job: JudgeJob) -> None:
    """Ask a running job to pause after the calls in flight; a waiting one, or one whose
    worker died, pauses at once. A paused job goes on with ``resume_job``."""
    now = timezone.now()
    jobs = JudgeJob.objects.filter(pk=job.pk)
    jobs.filter(_worker_alive(now)).update(pause_requested=True)
    jobs.filter(Q(status=JobStatus.PENDING) | _worker_gone(now)).update(
        status=JobStatus.PAUSED, error=PAUSED_ON_REQUEST(), lease_until=None
    )


def resume_job(job: JudgeJob, *, failed: bool = False, enqueue: bool = True) -> int:
    """Run a paused, finished or cancelled job again, or one whose worker died, over its
    waiting pairs (and, with ``failed``, its failed ones); pairs this version has judged
    meanwhile are skipped. The job's calls so far count against its budget (the judge's
    budget now). Returns how many pairs will be tried."""
    now = timezone.now()
    with transaction.atomic():
        updated = JudgeJob.objects.filter(pk=job.pk).filter(
            Q(status__in=[JobStatus.PAUSED, JobStatus.DONE, JobStatus.CANCELLED, JobStatus.FAILED])
            | _worker_gone(now)
        )
        if not updated.update(
            status=JobStatus.PENDING,
            cancel_requested=False,
            pause_requested=False,
            finished_at=None,
            lease_until=None,
            error=None,
            budget=job.version.judge.budget,
        ):
            raise JudgeError(STILL_RUNNING())
        if failed:
            job.pairs.filter(status=PairStatus.FAILED).update(
                status=PairStatus.PENDING, failure="", detail=None
            )
        count = job.pairs.filter(status=PairStatus.PENDING).count()
    job.refresh_from_db()
    if enqueue:
        queue(job)
    return count
