"""Background imports for the web upload page.

The upload is saved under ``MEDIA_ROOT/imports``, an ``ImportJob`` row records it, and a
django-tasks task runs the same ``run_import`` the commands use. The importer writes in
one transaction, so progress goes to a small side file that the status page reads (a row
updated inside that transaction would not be visible until the end).
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from django.conf import settings
from django.utils import timezone
from django_tasks import task

from formats import FileRejected
from formats.errors import define, gettext_noop

from .importing import ImportResult, run_import
from .importing import uploads as importing_uploads
from .models import ImportJob, ImportStatus

INTERNAL_ERROR = define("import.internal_error", gettext_noop("internal error: %(error)s"))
# A job keeps what became of at most this many files (a .zip may hold thousands).
MAX_REPORTED_FILES = 5000


def upload_dir() -> Path:
    path = Path(settings.MEDIA_ROOT) / "imports"
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_upload(uploaded) -> Path:
    """Store an uploaded file under a random name, keeping only its extension."""
    suffix = Path(uploaded.name).suffix.lower()[:10]
    path = upload_dir() / f"{uuid.uuid4().hex}{suffix}"
    with path.open("wb") as handle:
        for block in uploaded.chunks():
            handle.write(block)
    return path


def save_uploads(uploads) -> Path:
    """Store several uploaded files in a folder of their own (``importing.uploads``)."""
    folder = upload_dir() / uuid.uuid4().hex
    importing_uploads.save_uploads(folder, uploads)
    return folder


def upload_name(uploads) -> str:
    """What the job list calls an upload: the file's name, or the first and how many more."""
    first = Path(uploads[0].name).name
    return first if len(uploads) == 1 else f"{first} + {len(uploads) - 1}"


def progress_path(job: ImportJob) -> Path:
    return Path(job.path + ".progress")


class JobProgress:
    """Writes a job's progress to its side file: the share done and, for kinds that read
    several files (a .zip of documents), each file's share."""

    def __init__(self, job: ImportJob):
        self.side = progress_path(job)
        self.fraction = 0.0
        self.files: dict[str, float] = {}

    def __call__(self, fraction: float) -> None:
        self.fraction = fraction
        self._write()

    def file(self, name: str, fraction: float) -> None:
        self.files[name] = fraction
        self._write()

    def _write(self) -> None:
        state = {"fraction": round(self.fraction, 4), "files": list(self.files.items())}
        self.side.write_text(json.dumps(state))


def _read_side(job: ImportJob) -> dict:
    try:
        state = json.loads(progress_path(job).read_text())
    except (OSError, ValueError):
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


def execute_job(job_id: int) -> ImportJob:
    job = ImportJob.objects.select_related("project", "created_by").get(pk=job_id)
    if job.status != ImportStatus.PENDING:
        return job
    job.status = ImportStatus.RUNNING
    job.save(update_fields=["status"])
    side = progress_path(job)
    progress = JobProgress(job)
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
        job.finished_at = timezone.now()
        job.processed_bytes = job.size if job.status == ImportStatus.DONE else 0
        job.save(
            update_fields=[
                "status",
                "problems",
                "created_count",
                "notes",
                "finished_at",
                "processed_bytes",
                "report",
            ]
        )
        if Path(job.path).is_dir():
            shutil.rmtree(job.path, ignore_errors=True)
        else:
            Path(job.path).unlink(missing_ok=True)
        side.unlink(missing_ok=True)
    return job


def _import(job: ImportJob, progress) -> ImportResult:
    options = job.options
    result = run_import(
        job.kind,
        job.project,
        job.path,
        format=options.get("format") or None,
        options=options,
        progress=progress,
        changed_by=job.created_by,
        source_name=job.filename,
    )
    return result
