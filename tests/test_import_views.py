"""Upload page: owners import in the background, progress and errors are shown, CSRF holds."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from annotator.models import Document, ImportJob, ImportStatus
from metrics.models import Run

pytestmark = pytest.mark.django_db


def upload(client, name: str, content: bytes, **data):
    url = reverse("annotator:import_upload", args=["acme"])
    return client.post(url, {"file": SimpleUploadedFile(name, content), **data})


def work_off_queue():
    """Run the queued import tasks as `manage.py db_worker` would (its own loop closes
    the test's database connection, so the queued calls are made here)."""
    queued = DBTaskResult.objects.filter(status="READY", task_path__endswith="process_import")
    assert queued.exists(), "the upload must queue a task"
    for result in queued:
        result.task.call(*result.args_kwargs["args"], **result.args_kwargs["kwargs"])
        queued.filter(pk=result.pk).update(status="SUCCESSFUL")


def test_owner_uploads_documents_and_sees_the_result(login, personas):
    client = login(personas["owner"])
    response = upload(client, "docs.jsonl", b'{"doc_id": "n1", "text": "new"}\n', kind="documents")
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("annotator:import_status", args=["acme", job.pk])
    assert job.status == ImportStatus.PENDING and job.created_by == personas["owner"]
    page = client.get(response["Location"])
    assert b'hx-trigger="every 1s"' in page.content  # polls while waiting
    work_off_queue()
    job.refresh_from_db()
    assert job.status == ImportStatus.DONE and job.created_count == 1
    assert Document.objects.get(doc_id="n1").text == "new"
    partial = client.get(response["Location"], HTTP_HX_REQUEST="true")
    assert b"<html" not in partial.content
    assert b"1 item imported." in partial.content
    assert b"every 1s" not in partial.content  # done: polling stops
    full = client.get(response["Location"])
    assert b"<html" in full.content and b"1 item imported." in full.content


def test_failed_upload_lists_bad_lines_and_writes_nothing(login, personas):
    client = login(personas["owner"])
    content = b'{"doc_id": "a", "text": "<script>x</script>"}\n{"doc_id": "a"}\nnot json\n'
    upload(client, "docs.jsonl", content, kind="documents")
    work_off_queue()
    job = ImportJob.objects.get()
    assert job.status == ImportStatus.FAILED
    assert job.errors[0] == "line 2: document 'a' repeats line 1"
    assert job.errors[1].startswith("line 3: malformed JSON")
    assert not Document.objects.exists()
    body = client.get(reverse("annotator:import_status", args=["acme", job.pk])).content
    assert b"line 2: document &#x27;a&#x27; repeats line 1" in body
    assert b"Nothing was imported" in body


def test_run_upload_records_parameters_and_dropped_lines(login, personas, corpus):
    client = login(personas["owner"])
    run_text = b"q1 Q0 d1#0 1 2.5 x\nq9 Q0 d1#0 1 2.5 x\n"
    upload(
        client,
        "run.trec",
        run_text,
        kind="run",
        run_name="dense",
        chunking="c256",
        parameters="model=e5\nk=10",
        keep_known="on",
    )
    work_off_queue()
    run = Run.objects.get(name="dense")
    assert run.parameters == {"model": "e5", "k": "10"}
    assert run.n_results == 1 and run.n_dropped == 1 and run.source == "run.trec"


def test_form_errors_are_400_and_queue_nothing(login, personas, settings):
    client = login(personas["owner"])
    assert upload(client, "c.jsonl", b"{}\n", kind="chunks").status_code == 400
    assert upload(client, "l.txt", b"q 0 d 1\n", kind="labels").status_code == 400
    response = upload(client, "r.trec", b"x\n", kind="run", run_name="r", chunking="nope")
    assert b"No chunking with this name." in response.content
    settings.ASSAY_MAX_UPLOAD_BYTES = 3
    response = upload(client, "d.jsonl", b"1234", kind="documents")
    assert response.status_code == 400 and b"larger than the limit" in response.content
    assert not ImportJob.objects.exists()


def test_uploads_need_the_csrf_token(personas):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["owner"])
    response = upload(client, "d.jsonl", b'{"doc_id": "1"}\n', kind="documents")
    assert response.status_code == 403
    assert not ImportJob.objects.exists()


@pytest.mark.parametrize("persona", ["adjudicator", "annotator", "viewer"])
def test_only_owners_upload(login, personas, persona):
    response = upload(login(personas[persona]), "d.jsonl", b'{"doc_id": "1"}\n', kind="documents")
    assert response.status_code == 403
    assert not ImportJob.objects.exists()


def test_jobs_of_another_project_are_404(login, personas):
    job = ImportJob.objects.create(project=personas["other"], kind="documents", filename="x")
    client = login(personas["owner"])
    assert client.get(reverse("annotator:import_status", args=["acme", job.pk])).status_code == 404


def test_the_run_kind_comes_from_the_metrics_app():
    """annotator never imports metrics: runs reach the import page through the kind the
    metrics app registers when it starts."""
    from annotator.forms import ImportForm
    from annotator.importing import kinds
    from metrics.run_import import RUN_KIND

    assert [kind.name for kind in kinds()] == [
        "documents",
        "chunks",
        "queries",
        "labels",
        "files",
        "run",
        "nuggets",  # registered by the nuggets app, which sits above metrics
        "answers",  # registered by the answers app, on top of everything
    ]
    assert kinds()[5] is RUN_KIND
    assert [value for value, _ in ImportForm().fields["kind"].choices][-3:] == [
        "run",
        "nuggets",
        "answers",
    ]
