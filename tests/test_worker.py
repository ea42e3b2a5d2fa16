"""The background worker outlives every failure: a task that raises, a busy database.

A worker that died left every later import "Waiting" until someone restarted it.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db.utils import OperationalError
from django_tasks import task
from django_tasks_db.models import DBTaskResult, DBTaskResultQuerySet

from annotator import file_store
from annotator.import_jobs import execute_job
from annotator.models import ImportJob, ImportStatus

pytestmark = pytest.mark.django_db(transaction=True)


@task()
def explode() -> None:
    raise ValueError("the task's own failure")


@task()
def succeed() -> int:
    return 7


def run_worker() -> None:
    call_command(
        "db_worker", batch=True, reload=False, startup_delay=False, interval=0, verbosity=0
    )


def test_the_worker_goes_on_after_a_database_failure_and_a_failing_task(monkeypatch):
    failing, fine = explode.enqueue(), succeed.enqueue()
    original = DBTaskResultQuerySet.get_locked
    calls = {"n": 0}

    def flaky(self):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OperationalError("disk I/O error")
        return original(self)

    monkeypatch.setattr(DBTaskResultQuerySet, "get_locked", flaky)
    monkeypatch.setattr("operations.worker.RETRY_SECONDS", 0)
    run_worker()
    failed = DBTaskResult.objects.get(pk=failing.id)
    assert failed.status == "FAILED"
    assert failed.exception_class_path == "builtins.ValueError"
    assert "the task's own failure" in failed.traceback
    assert DBTaskResult.objects.get(pk=fine.id).status == "SUCCESSFUL"
    assert DBTaskResult.objects.get(pk=fine.id).return_value == 7


def test_an_import_that_crashes_fails_with_its_reason_and_the_next_one_runs(
    monkeypatch, personas, tmp_path
):
    def crash(*args, **kwargs):
        raise RuntimeError("disk full")

    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(f'{{"doc_id": "{name}", "text": "x"}}\n')
        paths.append(path)
    jobs = [
        ImportJob.objects.create(
            project=personas["project"],
            kind="documents",
            filename=path.name,
            path=file_store.put(f"uploads/imports/{path.name}", path),
            size=path.stat().st_size,
            created_by=personas["owner"],
        )
        for path in paths
    ]
    monkeypatch.setattr("annotator.import_jobs.run_import", crash)
    with pytest.raises(RuntimeError):
        execute_job(jobs[0].pk)
    jobs[0].refresh_from_db()
    assert jobs[0].status == ImportStatus.FAILED
    assert jobs[0].errors == ["internal error: disk full"]
    monkeypatch.undo()
    assert execute_job(jobs[1].pk).status == ImportStatus.DONE
