"""Whole folders of document files: choosing files, setting bad ones aside, recognising
unchanged ones by checksum, telling a file's type from its bytes, ids without whitespace,
and a replacement that never slips under a label being saved."""

from __future__ import annotations

import gzip
import io
import threading

import pytest
from django.core.management import call_command
from django.db import close_old_connections, connection
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.importing import files as files_module
from annotator.importing.files import Source, import_files
from annotator.labels import change_label
from annotator.models import Document, Judgment
from formats import FileRejected
from formats.documents.extract import ReadOptions
from tests.document_files import write_docx, write_image_only_pdf, write_pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(personas):
    return personas["project"]


def doc_ids(project) -> set[str]:
    return set(project.documents.values_list("doc_id", flat=True))


def command(*args) -> tuple[str, int]:
    """What ``import_files`` prints and its exit status."""
    out = io.StringIO()
    try:
        call_command("import_files", *args, stdout=out)
    except SystemExit as stop:
        return out.getvalue(), stop.code
    return out.getvalue(), 0


@pytest.fixture
def folder(tmp_path):
    """A package's documentation folder: good files, a scan, a bad zip, non-documents."""
    root = tmp_path / "doc"
    (root / "guide").mkdir(parents=True)
    write_pdf(root / "manual.pdf", [["Pump manual."]])
    write_docx(root / "guide" / "policy.docx", [["Travel policy."]])
    (root / "guide" / "faq.html").write_text("<h1>FAQ</h1><p>Close the valve.</p>")
    (root / "notes.txt").write_text("Oil the bearings.\n")
    write_image_only_pdf(root / "guide" / "scan.pdf")
    (root / "broken.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 10)
    (root / "README.md.gz").write_bytes(gzip.compress(b"# Read me\n\nStart here.\n"))
    (root / "changelog.Debian.gz").write_bytes(gzip.compress(b"pump (1.0) unstable\n"))
    (root / "copyright").write_text("Copyright 2024 Acme\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    return root


def test_one_bad_file_sinks_the_batch_without_skip_bad(project, folder):
    from django.core.management import CommandError

    with pytest.raises(CommandError) as raised:
        call_command("import_files", project.slug, str(folder), "--recursive")
    assert str(raised.value) == (
        "nothing imported:\n"
        "broken.zip: not a readable .zip archive\n"
        "guide/scan.pdf: no text layer on any of its 2 pages (a scanned document?); Assay does "
        "not do OCR: run OCR first (for example ocrmypdf) and import the result"
    )
    assert not project.documents.exists()


def test_skip_bad_imports_the_good_files_and_names_each_bad_one(project, folder):
    out, status = command(project.slug, str(folder), "--recursive", "--skip-bad")
    assert status == 2
    assert doc_ids(project) == {
        "manual.pdf",
        "guide/policy.docx",
        "guide/faq.html",
        "notes.txt",
        "README.md.gz",
    }
    lines = out.splitlines()
    assert lines[-1] == "5 imported, 2 skipped"
    assert "skipped broken.zip: not a readable .zip archive" in lines
    assert any(line.startswith("skipped guide/scan.pdf: no text layer") for line in lines)
    for name in ("changelog.Debian.gz", "copyright", "logo.png"):
        assert f"not a document, passed over: {name}" in lines
    readme = project.documents.get(doc_id="README.md.gz")
    assert readme.text == "Read me\n\nStart here." and readme.title == "Read me"


def test_include_and_exclude_choose_the_files(project, folder):
    out, status = command(
        project.slug, str(folder), "--recursive", "--include", "*.html", "copyright", "*.txt",
        "--exclude", "notes*",
    )  # fmt: skip
    assert status == 0 and out.splitlines()[-1] == "2 imported, 0 skipped"
    assert doc_ids(project) == {"guide/faq.html", "copyright"}
    # Named by --include, a file without a document type is read for what it is: text.
    assert project.documents.get(doc_id="copyright").text == "Copyright 2024 Acme\n"


def test_reimporting_an_unchanged_folder_reads_no_file_again(project, folder, monkeypatch):
    command(project.slug, str(folder), "--recursive", "--skip-bad")
    calls = []
    real = files_module.extract
    monkeypatch.setattr(
        files_module, "extract", lambda *a, **k: calls.append(a[1]) or real(*a, **k)
    )
    out, _ = command(project.slug, str(folder), "--recursive", "--skip-bad")
    assert calls == ["guide/scan.pdf"]  # the bad PDF is read again, no good file is
    assert "5 unchanged" in out and out.splitlines()[-1] == "0 imported, 2 skipped"
    # The same bytes read another way give other text: a change, replaced when asked.
    calls.clear()
    page = Source(folder / "guide" / "faq.html", "guide/faq.html")
    result = import_files(project, [page], replace=True, options=ReadOptions(html_whole_page=True))
    assert calls == ["guide/faq.html"] and result.detail == "1 replaced"


def test_a_changed_file_is_refused_unless_replace(project, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("First version.")
    import_files(project, [Source(path, "notes.txt")])
    path.write_text("Second version.")
    with pytest.raises(FileRejected) as raised:
        import_files(project, [Source(path, "notes.txt")])
    assert raised.value.errors == [
        "notes.txt: document 'notes.txt' already exists with other content; import with "
        "--replace (or tick “Replace changed files”) to replace it"
    ]
    result = import_files(project, [Source(path, "notes.txt")], replace=True)
    assert result.created == 1 and result.detail == "1 replaced"
    assert project.documents.get(doc_id="notes.txt").text == "Second version."


def test_the_type_comes_from_the_bytes(project, tmp_path):
    docx = write_docx(tmp_path / "real.docx", [["Word text."]])
    (tmp_path / "report.pdf").write_bytes(docx.read_bytes())
    (tmp_path / "page.html").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    pdf = write_pdf(tmp_path / "real.pdf", [["PDF text."]])
    (tmp_path / "letter.docx").write_bytes(pdf.read_bytes())
    (tmp_path / "old.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64)
    (tmp_path / "saved.md").write_text(
        "<!DOCTYPE html><html><head><title>Saved page</title><script>var x = 1;</script>"
        "</head><body><nav>Home</nav><main><p>Saved text.</p></main></body></html>"
    )
    names = ["report.pdf", "page.html", "letter.docx", "old.docx", "saved.md"]
    with pytest.raises(FileRejected) as raised:
        import_files(project, [Source(tmp_path / n, n) for n in names])
    assert raised.value.errors == [
        "report.pdf is a Word document (DOCX), not a PDF",
        "page.html is a PNG image, not an HTML page",
        "letter.docx is a PDF, not a Word document (DOCX)",
        "old.docx is an old Microsoft Office file (.doc, .xls or .ppt), not a Word document (DOCX)",
    ]
    import_files(project, [Source(tmp_path / "saved.md", "saved.md")])
    saved = project.documents.get(doc_id="saved.md")
    assert (saved.text, saved.title) == ("Saved text.", "Saved page")


def test_whitespace_in_file_names_becomes_underscores(project, personas, login, tmp_path):
    (tmp_path / "Annual report.txt").write_text("Revenue rose.")
    import_files(
        project, [Source(tmp_path / "Annual report.txt", "2024 reports/Annual report.txt")]
    )
    document = project.documents.get()
    assert document.doc_id == "2024_reports/Annual_report.txt"
    assert document.metadata["file_name"] == "Annual report.txt"
    (tmp_path / "Annual_report.txt").write_text("Other.")
    with pytest.raises(FileRejected) as raised:
        import_files(
            project,
            [
                Source(tmp_path / "Annual report.txt", "Annual report.txt"),
                Source(tmp_path / "Annual_report.txt", "Annual_report.txt"),
            ],
        )
    assert raised.value.errors == [
        "Annual_report.txt: given twice (as Annual report.txt and Annual_report.txt)"
    ]


def test_a_qrels_download_never_writes_a_five_field_line(project, personas, login):
    """A document imported before ids were made single tokens keeps its id; the qrels
    download writes it as the import would name it now."""
    document = Document.objects.create(project=project, doc_id="Annual report.txt", text="Text.")
    query = project.queries.create(qid="q1", text="revenue")
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_document(document),
        grade=2,
    )
    response = login(personas["owner"]).get(
        reverse("metrics:qrels_file", args=["acme"]), {"level": "documents"}
    )
    lines = response.content.decode().splitlines()
    assert lines == ["q1 0 Annual_report.txt 2"]
    from gold.services import ConsensusPolicy, freeze_gold_set

    gold_set = freeze_gold_set(project, "g", policy=ConsensusPolicy("median"))
    frozen = login(personas["owner"]).get(
        reverse("gold:export", args=["acme", gold_set.pk]),
        {"level": "documents", "format": "qrels"},
    )
    assert b"".join(
        frozen.streaming_content if frozen.streaming else [frozen.content]
    ).decode().splitlines() == ["q1 0 Annual_report.txt 2"]


# --- replacing while people label --------------------------------------------------------


def _first_version(project, tmp_path):
    path = tmp_path / "pump.txt"
    path.write_text("Check the seal before starting the pump.")
    import_files(project, [Source(path, "pump.txt")])
    path.write_text("Revised.")
    return path, project.documents.get(doc_id="pump.txt")


@pytest.mark.django_db(transaction=True)
def test_a_label_saved_while_the_files_are_read_stops_the_replacement(
    personas, tmp_path, monkeypatch
):
    """The label comes after the import checked the document and before it writes."""
    project = personas["project"]
    path, document = _first_version(project, tmp_path)
    query = project.queries.create(qid="q1", text="seal")
    write = files_module._write

    def label_first(*args, **kwargs):
        change_label(
            query=query,
            annotator=personas["annotator"],
            evidence=Evidence.for_passage(document, 6, 14),
            grade=3,
        )
        return write(*args, **kwargs)

    monkeypatch.setattr(files_module, "_write", label_first)
    with pytest.raises(FileRejected) as raised:
        import_files(project, [Source(path, "pump.txt")], replace=True)
    assert raised.value.errors == [
        "pump.txt: changed since it was imported, and it holds 1 label by anna (1) for queries "
        "q1; not replaced (labels would be orphaned)"
    ]
    document.refresh_from_db()
    assert document.text[6:14] == "the seal"


@pytest.mark.django_db(transaction=True)
def test_a_label_being_saved_in_another_session_stops_the_replacement(personas, tmp_path):
    """Another session is inside its transaction, the label written and not yet
    committed, when the replacement starts: the replacement waits for it and sees it."""
    project = personas["project"]
    path, document = _first_version(project, tmp_path)
    query = project.queries.create(qid="q1", text="seal")
    written, release, errors = threading.Event(), threading.Event(), []

    def save_slowly():
        from django.db import transaction

        try:
            with transaction.atomic():
                change_label(
                    query=query,
                    annotator=personas["annotator"],
                    evidence=Evidence.for_passage(document, 6, 14),
                    grade=3,
                )
                written.set()
                release.wait(10)
        except Exception as error:  # reported below
            errors.append(error)
            written.set()
        finally:
            connection.close()

    saver = threading.Thread(target=save_slowly)
    saver.start()
    assert written.wait(10)
    timer = threading.Timer(0.5, release.set)  # the replacement is waiting by then
    timer.start()
    try:
        with pytest.raises(FileRejected) as raised:
            import_files(project, [Source(path, "pump.txt")], replace=True)
    finally:
        release.set()
        saver.join(10)
        timer.cancel()
        close_old_connections()
    assert not errors
    assert "holds 1 label by anna (1)" in raised.value.errors[0]
    assert Judgment.objects.get().document.text[6:14] == "the seal"
