"""Document files through the import page: background job, progress per file, errors named."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator.import_jobs import JobProgress, read_file_progress, read_progress
from annotator.models import ImportJob, ImportStatus
from tests.document_files import write_pdf, write_zip
from tests.test_import_views import work_off_queue

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def originals(settings, tmp_path):
    settings.ASSAY_ORIGINALS_DIR = tmp_path / "originals"


def upload(client, path, **data):
    url = reverse("annotator:import_upload", args=["acme"])
    content = SimpleUploadedFile(path.name, path.read_bytes())
    return client.post(url, {"file": content, "kind": "files", **data})


def test_owner_uploads_a_zip_of_pdfs(login, personas, tmp_path):
    one = write_pdf(tmp_path / "one.pdf", [["First manual."], ["Its second page."]])
    two = write_pdf(tmp_path / "two.pdf", [["第二本手册。"]], chinese=True)
    archive = write_zip(tmp_path / "manuals.zip", {"a/one.pdf": one, "b/two.pdf": two})
    client = login(personas["owner"])
    response = upload(client, archive)
    assert response.status_code == 302
    work_off_queue()
    job = ImportJob.objects.get()
    assert job.status == ImportStatus.DONE and job.created_count == 2, job.errors
    project = personas["project"]
    assert set(project.documents.values_list("doc_id", flat=True)) == {"a/one.pdf", "b/two.pdf"}
    assert project.documents.get(doc_id="a/one.pdf").page_starts == [0, len("First manual.") + 2]
    body = client.get(response["Location"]).content.decode()
    assert "2 items imported." in body


def test_a_bad_file_in_the_upload_is_named_and_nothing_is_written(login, personas, tmp_path):
    good = write_pdf(tmp_path / "good.pdf", [["Fine."]])
    locked = write_pdf(tmp_path / "locked.pdf", [["Secret."]], password="pw")
    archive = write_zip(tmp_path / "mixed.zip", {"good.pdf": good, "locked.pdf": locked})
    client = login(personas["owner"])
    upload(client, archive)
    work_off_queue()
    job = ImportJob.objects.get()
    assert job.status == ImportStatus.FAILED
    assert job.errors == [
        "locked.pdf: the PDF is encrypted (password-protected); "
        "save an unprotected copy and import that"
    ]
    assert not personas["project"].documents.exists()
    body = client.get(reverse("annotator:import_status", args=["acme", job.pk])).content
    assert b"locked.pdf: the PDF is encrypted" in body


def test_replace_option_reaches_the_import(login, personas, tmp_path):
    client = login(personas["owner"])
    upload(client, write_pdf(tmp_path / "m.pdf", [["Version one."]]))
    (tmp_path / "v2").mkdir()
    upload(client, write_pdf(tmp_path / "v2" / "m.pdf", [["Version two."]]), replace="on")
    work_off_queue()
    _first, second = ImportJob.objects.order_by("pk")
    assert second.options["replace"] is True and second.status == ImportStatus.DONE
    assert personas["project"].documents.get(doc_id="m.pdf").text == "Version two."


def test_progress_is_reported_per_file(personas, tmp_path):
    job = ImportJob.objects.create(
        project=personas["project"],
        kind="files",
        filename="manuals.zip",
        path=str(tmp_path / "upload.zip"),
        status=ImportStatus.RUNNING,
    )
    progress = JobProgress(job)
    progress.file("a/one.pdf", 1.0)
    progress.file("b/two.pdf", 0.0)
    progress(0.5)
    assert read_progress(job) == 50
    assert read_file_progress(job) == [("a/one.pdf", 100), ("b/two.pdf", 0)]
