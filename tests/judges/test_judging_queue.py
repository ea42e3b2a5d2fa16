"""Judging has its own task queue: an import is taken by the imports' worker while a judging
job holds the judging worker (the security review saw an import wait 67 s behind a job
whose endpoint never answered)."""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command
from django.db import connection

from annotator import file_store
from annotator.import_jobs import process_import
from annotator.models import ImportJob, ImportStatus
from judges.engine import run_judge_job
from judges.models import JobStatus, Judge, JudgeJob
from judges.services import plan_job, start_job
from operations.worker import ResilientWorker

from .fake_llm import serving_thread

pytestmark = pytest.mark.django_db(transaction=True)


class Hanging:
    """An endpoint that accepts the call and answers only when released (with a 500)."""

    def __init__(self):
        self.arrived, self.release = threading.Event(), threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                owner.arrived.set()
                owner.release.wait(120)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        serving_thread(self.httpd).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def test_tasks_go_to_their_queues():
    assert run_judge_job.queue_name == "judging"
    assert process_import.queue_name == "default"


def test_an_import_is_taken_while_a_judging_job_is_running(judging, tmp_path, settings):
    settings.ASSAY_JUDGE_ATTEMPTS = 1
    hanging = Hanging()
    judge = judging["judge"]
    Judge.objects.filter(pk=judge.pk).update(base_url=hanging.base_url, timeout_seconds=120)
    judge.refresh_from_db()
    job = start_job(
        plan_job(judge, scope="pool", level="chunk", chunking="c", qids=["q1"]), enqueue=False
    )
    run_judge_job.enqueue(job.pk)
    source = tmp_path / "docs.jsonl"
    source.write_text('{"doc_id": "new", "text": "queued behind nothing"}\n')
    imported = ImportJob.objects.create(
        project=judging["project"],
        kind="documents",
        filename=source.name,
        path=file_store.put(f"uploads/imports/{source.name}", source),
        size=source.stat().st_size,
        created_by=judging["owner"],
    )
    process_import.enqueue(imported.pk)

    judging_worker = ResilientWorker(
        queue_names=["judging"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=1,
        worker_id="judging-worker",
        excluded_queue_names=[],
    )

    def work() -> None:
        try:
            judging_worker.run()
        finally:
            connection.close()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        assert hanging.arrived.wait(60), "the judging worker did not take the judging job"
        # The imports' worker, while the judging job waits on its endpoint.
        call_command(
            "db_worker",
            queue_name="default",
            batch=True,
            reload=False,
            startup_delay=False,
            interval=0,
            verbosity=0,
        )
        imported.refresh_from_db()
        assert imported.status == ImportStatus.DONE
        assert JudgeJob.objects.get(pk=job.pk).status == JobStatus.RUNNING
        assert judging["project"].documents.filter(doc_id="new").exists()
    finally:
        hanging.close()
        thread.join(120)
    assert JudgeJob.objects.get(pk=job.pk).status != JobStatus.RUNNING
