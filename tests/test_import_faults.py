"""An import whose worker is killed half way: the project is left as it was, and the next
worker runs the import again to the end (real worker processes, ``kill -9``)."""

from __future__ import annotations

import json
import signal

import pytest
from django.db import connection

from annotator import file_store
from annotator.import_jobs import start_job
from annotator.models import Document, ImportJob, ImportStatus
from tests import worker_process

pytestmark = pytest.mark.django_db(transaction=True)

# Several staging batches and progress steps, and more bytes than one read: the kill
# lands half way through the file.
ROWS = 3000


def test_an_import_killed_half_way_leaves_nothing_then_the_next_worker_completes_it(
    personas, tmp_path
):
    project = personas["project"]
    before = set(project.documents.values_list("doc_id", flat=True))
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "".join(
            json.dumps({"doc_id": f"k{i}", "text": f"text {i} " + "x" * 1000}) + "\n"
            for i in range(ROWS)
        )
    )
    job = ImportJob.objects.create(
        project=project,
        kind="documents",
        filename=path.name,
        path=file_store.put("uploads/imports/faults.jsonl", path),
        size=path.stat().st_size,
        created_by=personas["owner"],
    )
    start_job(job)
    marker = tmp_path / "half-way"
    first = worker_process.start(
        connection,
        tmp_path,
        "first",
        env={"ASSAY_WORKER_HANG_IMPORT": str(marker)},
        ASSAY_JOB_LEASE_SECONDS=2,
    )
    try:
        worker_process.wait_for(marker.exists, what="the import half way")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    job.refresh_from_db()
    assert job.status == ImportStatus.RUNNING
    # Half way through the file, the project has none of its documents.
    assert set(project.documents.values_list("doc_id", flat=True)) == before
    second = worker_process.start(
        connection,
        tmp_path,
        "second",
        env={"ASSAY_WORKER_HANG_IMPORT": str(marker)},  # already passed: no second stall
        ASSAY_JOB_LEASE_SECONDS=2,
    )
    try:
        worker_process.wait_for(
            lambda: ImportJob.objects.get(pk=job.pk).status != ImportStatus.RUNNING,
            what="the second worker to finish the import",
        )
    finally:
        second.kill()
        second.wait(timeout=30)
    job.refresh_from_db()
    assert (job.status, job.takeovers, job.created_count) == (ImportStatus.DONE, 1, ROWS)
    docs = Document.objects.filter(project=project).exclude(doc_id__in=before)
    assert docs.count() == ROWS == len(set(docs.values_list("doc_id", flat=True)))
