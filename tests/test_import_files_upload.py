"""Document files through the import page: background job, progress per file, errors named."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator.import_jobs import JobProgress, read_file_progress, read_progress
from annotator.models import ImportJob, ImportStatus
from formats.errors import Problem
from tests.document_files import write_pdf, write_zip
from tests.test_import_views import work_off_queue

pytestmark = pytest.mark.django_db


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
    assert "2 imported, 0 skipped" in body


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


def test_progress_is_reported_per_file(personas, monkeypatch):
    monkeypatch.setattr("annotator.import_jobs.PROGRESS_SECONDS", 0)
    job = ImportJob.objects.create(
        project=personas["project"],
        kind="files",
        filename="manuals.zip",
        path="uploads/imports/upload.zip",
        status=ImportStatus.RUNNING,
    )
    progress = JobProgress(job)
    progress.file("a/one.pdf", 1.0)
    progress.file("b/two.pdf", 0.0)
    progress(0.5)
    assert read_progress(job) == 50
    assert read_file_progress(job) == [("a/one.pdf", 100), ("b/two.pdf", 0)]


def test_several_files_and_a_zip_at_once_with_the_bad_ones_skipped(login, personas, tmp_path):
    client = login(personas["owner"])
    good = write_pdf(tmp_path / "good.pdf", [["Fine."]])
    locked = write_pdf(tmp_path / "locked.pdf", [["Secret."]], password="pw")
    archive = write_zip(
        tmp_path / "more.zip", {"a/notes.md": b"# Notes\n\nOil.", "logo.png": b"\x89PNG\r\n\x1a\n"}
    )
    (tmp_path / "report.pdf").write_bytes((tmp_path / "more.zip").read_bytes()[:0] + b"plain")
    files = [
        SimpleUploadedFile(p.name, p.read_bytes())
        for p in (good, locked, archive, tmp_path / "report.pdf")
    ]
    url = reverse("annotator:import_upload", args=["acme"])
    response = client.post(url, {"file": files, "kind": "files", "skip_bad": "on"})
    assert response.status_code == 302
    work_off_queue()
    job = ImportJob.objects.get()
    assert job.status == ImportStatus.DONE and job.created_count == 2
    assert job.filename == "good.pdf + 3"
    assert [(line["name"], line["outcome"]) for line in job.report] == [
        ("good.pdf", "imported"),
        ("a/notes.md", "imported"),
        ("locked.pdf", "skipped"),
        ("report.pdf", "skipped"),
        ("logo.png", "passed over"),
    ]
    [problem] = job.report[3]["problems"]
    assert str(Problem.from_json(problem)) == "report.pdf is a text file, not a PDF"
    project = personas["project"]
    assert set(project.documents.values_list("doc_id", flat=True)) == {"good.pdf", "a/notes.md"}
    page = client.get(response["Location"]).content.decode()
    assert "2 imported, 2 skipped" in page
    assert "report.pdf is a text file, not a PDF" in page
    assert 'data-outcome="passed over"' in page


def test_several_files_without_skip_bad_are_all_or_nothing(login, personas, tmp_path):
    client = login(personas["owner"])
    good = write_pdf(tmp_path / "good.pdf", [["Fine."]])
    (tmp_path / "bad.docx").write_bytes(b"not a word file")
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in (good, tmp_path / "bad.docx")]
    url = reverse("annotator:import_upload", args=["acme"])
    client.post(url, {"file": files, "kind": "files"})
    work_off_queue()
    job = ImportJob.objects.get()
    assert job.status == ImportStatus.FAILED
    assert job.errors == ["bad.docx is a text file, not a Word document (DOCX)"]
    assert not personas["project"].documents.exists()


def test_only_document_files_come_several_at_once(login, personas):
    client = login(personas["owner"])
    files = [SimpleUploadedFile(n, b'{"qid": "q1", "text": "x"}\n') for n in ("a.jsonl", "b.jsonl")]
    url = reverse("annotator:import_upload", args=["acme"])
    response = client.post(url, {"file": files, "kind": "queries"})
    assert response.status_code == 400
    assert "Only document files can be uploaded several at once." in response.content.decode()
    assert not ImportJob.objects.exists()


def test_more_files_than_a_request_may_carry_is_a_clear_400(login, personas):
    """Django takes at most DATA_UPLOAD_MAX_NUMBER_FILES (100) files per request: more is
    refused before anything is saved (a .zip carries any number)."""
    client = login(personas["owner"])
    files = [SimpleUploadedFile(f"n{i}.txt", b"text") for i in range(101)]
    url = reverse("annotator:import_upload", args=["acme"])
    response = client.post(url, {"file": files, "kind": "files"})
    assert response.status_code == 400
    assert not ImportJob.objects.exists()
