"""Background imports for the web upload page.

The upload is put into the file store (``uploads/imports/``; shared by every machine
when it is object storage), an ``ImportJob`` row records its name, and a django-tasks
task runs the same ``run_import`` the commands use, on a copy on the worker's disk. The
importer writes in one transaction, so progress goes to a small side file in the file
store that the status page reads (a row updated inside that transaction would not be
visible until the end).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from django.utils import timezone
from django_tasks import task

from formats import FileRejected
from formats.errors import define, gettext_noop
from operations import leases

from . import file_store
from .importing import ImportResult, run_import
from .importing import uploads as importing_uploads
from .models import ImportJob, ImportStatus

INTERNAL_ERROR = define("import.internal_error", gettext_noop("internal error: %(error)s"))
# A job keeps what became of at most this many files (a .zip may hold thousands).
MAX_REPORTED_FILES = 5000
UPLOADS = "uploads/imports"
PROGRESS_SECONDS = 0.5  # the side file is written at most this often (object storage: a PUT)


def save_upload(uploaded) -> str:
    """Put an uploaded file into the file store under a random name, keeping only its
    extension; returns the name the job records."""
    suffix = Path(uploaded.name).suffix.lower()[:10]
    return file_store.put(f"{UPLOADS}/{uuid.uuid4().hex}{suffix}", uploaded)


def save_uploads(uploads) -> str:
    """Put several uploaded files into the file store under one name of their own, each
    under a number, with the list of names they were uploaded under (``importing.uploads``
    reads such a folder); returns the name the job records."""
    prefix = f"{UPLOADS}/{uuid.uuid4().hex}"
    names = []
    for number, uploaded in enumerate(uploads):
        stored = f"{number:05d}{Path(uploaded.name).suffix.lower()[:10]}"
        file_store.put(f"{prefix}/{stored}", uploaded)
        names.append([stored, Path(uploaded.name).name])
    file_store.put_bytes(f"{prefix}/{importing_uploads.MANIFEST}", json.dumps(names).encode())
    return prefix


def upload_name(uploads) -> str:
    """What the job list calls an upload: the file's name, or the first and how many more."""
    first = Path(uploads[0].name).name
    return first if len(uploads) == 1 else f"{first} + {len(uploads) - 1}"


def _upload_files(job: ImportJob) -> list[str]:
    """The file store's names of a job's upload: one file, or a folder's files and list."""
    manifest = f"{job.path}/{importing_uploads.MANIFEST}"
    if not file_store.exists(manifest):
        return [job.path]
    names = json.loads(file_store.read_bytes(manifest) or b"[]")
    return [manifest] + [f"{job.path}/{stored}" for stored, _ in names]


def _local_upload(job: ImportJob) -> Path:
    """The upload on the worker's disk: the file, or the folder holding the files."""
    files = _upload_files(job)
    copies = [file_store.local_copy(name) for name in files]
    return copies[0].parent if len(files) > 1 else copies[0]


def progress_name(job: ImportJob) -> str:
    return job.path + ".progress"


class JobProgress:
    """Writes a job's progress to its side file: the share done and, for kinds that read
    several files (a .zip of documents), each file's share."""

    def __init__(self, job: ImportJob):
        self.side = progress_name(job)
        self.fraction = 0.0
        self.files: dict[str, float] = {}
        self.written = 0.0

    def __call__(self, fraction: float) -> None:
        self.fraction = fraction
        self._write()

    def file(self, name: str, fraction: float) -> None:
        self.files[name] = fraction
        self._write()

    def _write(self) -> None:
        now = time.monotonic()
        if now - self.written < PROGRESS_SECONDS and self.fraction < 1:
            return
        self.written = now
        state = {"fraction": round(self.fraction, 4), "files": list(self.files.items())}
        file_store.put_bytes(self.side, json.dumps(state).encode())


def _read_side(job: ImportJob) -> dict:
    if not job.path:
        return {}
    try:
        state = json.loads(file_store.read_bytes(progress_name(job)) or b"")
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def read_progress(job: ImportJob) -> int:
    """Percent done of a running job, from its side file (0 when not started)."""
    if job.status == ImportStatus.DONE:
        return 100
    try:
        fraction = float(_read_side(job).get("fraction", 0))
    except (TypeError, ValueError):
        return 0
    return max(0, min(99, int(fraction * 100)))


def read_file_progress(job: ImportJob) -> list[tuple[str, int]]:
    """Each file of a running job with its percent done (empty for one-file kinds)."""
    files = _read_side(job).get("files", [])
    try:
        return [(str(name), max(0, min(100, int(float(share) * 100)))) for name, share in files]
    except (TypeError, ValueError):
        return []


def start_job(job: ImportJob) -> None:
    """Queue the job on the task backend (runs at once with the immediate backend)."""
    process_import.enqueue(job.pk)


@task()
def process_import(job_id: int) -> None:
    execute_job(job_id)


def _load(job_id: int) -> ImportJob:
    return ImportJob.objects.select_related("project", "created_by").get(pk=job_id)


def execute_job(job_id: int) -> ImportJob:
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportStatus.PENDING).update(
        status=ImportStatus.RUNNING, **leases.lease_fields()
    )
    job = _load(job_id)
    if not claimed:
        return job
    return _execute(job)


def take_over(job_id: int) -> None:
    """Run again an import whose worker died. Its rows were staged or written in one
    transaction, so nothing of the first try reached the project: the import starts
    from the beginning, on the upload still in the file store."""
    _execute(_load(job_id))


def _execute(job: ImportJob) -> ImportJob:
    """Import the upload, renewing the job's lease meanwhile; the outcome is recorded
    only while this worker still holds the job."""
    progress = JobProgress(job)
    heartbeat = leases.Heartbeat(ImportJob, job.pk).__enter__()
    try:
        result = _import(job, progress)
    except FileRejected as failure:
        job.status, job.problems = ImportStatus.FAILED, failure.problems
    except Exception as error:  # an unexpected failure must still end the job visibly
        job.status, job.problems = ImportStatus.FAILED, [INTERNAL_ERROR(error=str(error)[:500])]
        raise
    else:
        job.status, job.created_count = ImportStatus.DONE, result.created
        job.notes = list(result.notes)
        job.report = [line.as_json() for line in result.report][:MAX_REPORTED_FILES]
    finally:
        heartbeat.__exit__(None, None, None)
        job.finished_at = timezone.now()
        job.processed_bytes = job.size if job.status == ImportStatus.DONE else 0
        ImportJob.objects.filter(pk=job.pk, worker=leases.worker_name()).update(
            status=job.status,
            problems=job.problems,
            created_count=job.created_count,
            notes=job.notes,
            finished_at=job.finished_at,
            processed_bytes=job.processed_bytes,
            report=job.report,
            lease_until=None,
        )
        for name in _upload_files(job):
            file_store.delete(name)
            file_store.forget_local_copy(name)
        file_store.delete(progress_name(job))
    return job


def _import(job: ImportJob, progress) -> ImportResult:
    options = job.options
    result = run_import(
        job.kind,
        job.project,
        _local_upload(job),
        format=options.get("format") or None,
        options=options,
        progress=progress,
        changed_by=job.created_by,
        source_name=job.filename,
    )
    return result
