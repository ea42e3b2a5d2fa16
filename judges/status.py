"""What every long job of a project is doing, for ``manage.py jobs`` and ``judge --wait``:
judging jobs and imports alike, as plain data (problems rendered in English here; pages
render them in the reader's language)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from annotator.import_jobs import read_progress
from annotator.models import ImportJob, ImportStatus, Project

from .models import JobStatus, JudgeJob, PairStatus

RAW_SHOWN = 2048
SETTLED = (JobStatus.DONE, JobStatus.CANCELLED, JobStatus.FAILED, JobStatus.PAUSED)


@dataclass
class FailedPair:
    query: str
    unit: str
    failure: str
    detail: str
    raw_reply: str


@dataclass
class JobState:
    id: int
    kind: str  # "judge" or "import"
    what: str  # the judge and version, or the import's kind and file
    state: str
    percent: int
    done: int | None
    left: int | None
    failures: dict[str, int]
    calls: int | None
    budget: int | None
    started: str | None
    updated: str | None
    worker: str
    takeovers: int
    reason: str = ""
    failed_pairs: list[FailedPair] = field(default_factory=list)

    def as_json(self) -> dict:
        return asdict(self)


def _iso(moment) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None


def judge_job_state(job: JudgeJob, *, failed_pairs: bool = False) -> JobState:
    counts = Counter(job.pairs.values_list("status", flat=True))
    failures = Counter(job.pairs.filter(status=PairStatus.FAILED).values_list("failure", flat=True))
    left = counts[PairStatus.PENDING]
    done = job.n_pairs - left
    state = JobState(
        id=job.pk,
        kind="judge",
        what=f"{job.version.judge.slug} v{job.version.number}"
        + (f" {job.dimension.key}" if job.dimension_id else ""),
        state=job.status,
        percent=int(100 * done / job.n_pairs) if job.n_pairs else 100,
        done=done,
        left=left,
        failures=dict(sorted(failures.items())),
        calls=job.calls,
        budget=job.budget,
        started=_iso(job.started_at),
        updated=_iso(job.finished_at or job.heartbeat_at or job.started_at),
        worker=job.worker,
        takeovers=job.takeovers,
        reason=str(job.error) if job.error else "",
    )
    if failed_pairs:
        rows = job.pairs.filter(status=PairStatus.FAILED).select_related(
            "query", "document", "chunk"
        )
        state.failed_pairs = [
            FailedPair(
                query=p.query.qid if p.query_id else "",  # quality jobs grade no query
                unit=_unit(p),
                failure=p.failure,
                detail=str(p.detail) if p.detail else "",
                raw_reply=p.raw_reply[:RAW_SHOWN],
            )
            for p in rows
        ]
    return state


def _unit(pair) -> str:
    """What a pair judged beside its query: a chunk or document id, an answer or one of
    its citations (answers jobs), a site (quality jobs graded per site), nothing (a nugget
    proposal's query)."""
    if pair.citation is not None:
        return f"answer {pair.answer} citation {pair.citation}"
    if pair.answer is not None:
        return f"answer {pair.answer}"
    if pair.chunk_id:
        return pair.chunk.chunk_id
    return pair.document.doc_id if pair.document_id else pair.site  # site: quality jobs


def import_job_state(job: ImportJob) -> JobState:
    finished = job.status == ImportStatus.DONE
    return JobState(
        id=job.pk,
        kind="import",
        what=f"{job.kind} {job.filename}",
        state=job.status,
        percent=read_progress(job) if job.status == ImportStatus.RUNNING else job.percent,
        done=job.created_count if finished else None,
        left=0 if finished else None,
        failures={},
        calls=None,
        budget=None,
        started=_iso(job.created_at),
        updated=_iso(job.finished_at or job.heartbeat_at),
        worker=job.worker,
        takeovers=job.takeovers,
        reason="; ".join(job.errors),
    )


def project_jobs(project: Project, *, failed_pairs: bool = False) -> list[JobState]:
    """The project's judging jobs, then its imports, newest first."""
    judging = JudgeJob.objects.filter(version__judge__project=project).select_related(
        "version__judge", "dimension"
    )
    states = [judge_job_state(job, failed_pairs=failed_pairs) for job in judging]
    states += [import_job_state(job) for job in ImportJob.objects.filter(project=project)]
    return states


def exit_code(state: JobState) -> int:
    """0 all done, 1 some failed, 2 paused or cancelled (what ``--wait`` exits with)."""
    if state.state in (JobStatus.PAUSED, JobStatus.CANCELLED):
        return 2
    if state.state == JobStatus.FAILED or sum(state.failures.values()):
        return 1
    return 0
