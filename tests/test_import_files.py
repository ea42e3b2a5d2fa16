"""Importing document files: real PDFs and Word files (English and Chinese) with known text on
known pages; every bad file a clear error naming it, and nothing written."""

from __future__ import annotations

import hashlib
import zipfile

import pytest
from django.core.management import CommandError, call_command

from annotator.evidence import Evidence
from annotator.importing.files import Source, import_files
from annotator.labels import change_label
from annotator.models import Document
from annotator.originals import original_path
from formats import FileRejected
from tests.document_files import (
    write_docx,
    write_image_only_pdf,
    write_pdf,
    write_zip,
)

pytestmark = pytest.mark.django_db

ENGLISH = [
    ["Pump manual", "Check the seal before starting."],
    ["Page two: the impeller turns clockwise."],
    ["Page three: drain the casing in winter."],
]
CHINESE = [["水泵手册", "启动前检查密封。"], ["第二页：叶轮顺时针旋转。"]]


@pytest.fixture(autouse=True)
def originals(tmp_path):
    """Where the file store (a folder in the test's own, tests/conftest.py) keeps originals."""
    return tmp_path / "store" / "originals"


@pytest.fixture
def project(personas):
    return personas["project"]


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pages_of(document: Document) -> list[str]:
    return [document.text[s:e].strip("\n") for s, e in document.page_spans()]


def state(project, originals) -> tuple:
    stored = sorted(p.name for p in originals.rglob("*")) if originals.exists() else []
    return list(project.documents.values_list("doc_id", "text", "page_starts")), stored


def refused(project, originals, sources, **kwargs) -> list[str]:
    before = state(project, originals)
    with pytest.raises(FileRejected) as raised:
        import_files(project, sources, **kwargs)
    assert state(project, originals) == before, "a refused import writes nothing"
    return raised.value.errors


# --- what a good file becomes -----------------------------------------------------------


def test_pdf_english_and_chinese_text_pages_title_checksum(project, tmp_path):
    english = write_pdf(tmp_path / "pump.pdf", ENGLISH, title="Pump manual (PDF)")
    chinese = write_pdf(tmp_path / "泵.pdf", CHINESE, chinese=True)
    result = import_files(project, [Source(english, "pump.pdf"), Source(chinese, "泵.pdf")])
    assert result.created == 2
    pump = Document.objects.get(project=project, doc_id="pump.pdf")
    assert pages_of(pump) == ["\n".join(lines) for lines in ENGLISH]
    assert pump.page_starts[0] == 0 and len(pump.page_starts) == 3
    assert pump.text[pump.page_starts[1] :].startswith("Page two: the impeller")
    assert pump.page_of(pump.text.index("drain")) == 3
    assert pump.title == "Pump manual (PDF)"
    assert pump.metadata["sha256"] == sha(english)
    assert pump.metadata["page_count"] == 3
    assert pump.metadata["file_size"] == english.stat().st_size
    assert pump.metadata["producer"].startswith("ReportLab")
    zh = Document.objects.get(project=project, doc_id="泵.pdf")
    assert pages_of(zh) == ["水泵手册\n启动前检查密封。", "第二页：叶轮顺时针旋转。"]
    assert zh.page_of(zh.text.index("叶轮")) == 2
    assert zh.title == "水泵手册"  # no metadata title: the first line
    assert original_path(zh).read_bytes() == chinese.read_bytes()


def test_docx_page_breaks_heading_title_and_chinese(project, tmp_path):
    path = write_docx(
        tmp_path / "policy.docx",
        [["Scope of the policy."], ["第二页：适用范围。", "Second paragraph."]],
        heading="Travel policy 出差",
    )
    import_files(project, [Source(path, "policy.docx")])
    document = Document.objects.get(doc_id="policy.docx")
    assert document.title == "Travel policy 出差"
    assert pages_of(document) == [
        "Travel policy 出差\nScope of the policy.",
        "第二页：适用范围。\nSecond paragraph.",
    ]
    assert document.metadata["sha256"] == sha(path)
    assert document.metadata["page_count"] == 2


def test_html_markdown_text_and_zip_members_named_by_their_path(project, tmp_path):
    html = (
        b"<html><head><title>Valve FAQ</title><script>var x = 1;</script></head>"
        b"<body><h1>FAQ</h1><p>Close the <b>valve</b>\n first.</p></body></html>"
    )
    markdown = b"Preface\n\n# Maintenance log\n\nOil the bearings.\n"
    archive = write_zip(
        tmp_path / "bundle.zip",
        {"faq/valves.html": html, "log.md": markdown, "notes.txt": "维护记录\n换油。".encode()},
    )
    result = import_files(project, [Source(archive, "bundle.zip")])
    assert result.created == 3
    docs = {d.doc_id: d for d in project.documents.all()}
    assert docs["faq/valves.html"].text == "FAQ\n\nClose the valve first."
    assert docs["faq/valves.html"].title == "Valve FAQ"
    assert docs["log.md"].text == "Preface\n\nMaintenance log\n\nOil the bearings."
    assert docs["log.md"].title == "Maintenance log"
    assert docs["notes.txt"].title == "维护记录" and docs["notes.txt"].page_starts == []


def test_command_imports_a_folder_recursively(project, tmp_path):
    folder = tmp_path / "manuals"
    (folder / "sub").mkdir(parents=True)
    write_pdf(folder / "a.pdf", ENGLISH)
    write_pdf(folder / "sub" / "b.pdf", CHINESE, chinese=True)
    call_command("import_files", project.slug, str(folder))
    assert set(project.documents.values_list("doc_id", flat=True)) == {"a.pdf"}
    call_command("import_files", project.slug, str(folder), "--recursive")
    assert set(project.documents.values_list("doc_id", flat=True)) == {"a.pdf", "sub/b.pdf"}


def test_unchanged_file_is_left_alone(project, tmp_path, originals):
    path = write_pdf(tmp_path / "pump.pdf", ENGLISH)
    import_files(project, [Source(path, "pump.pdf")])
    result = import_files(project, [Source(path, "pump.pdf")])
    assert result.created == 0 and "1 unchanged" in result.detail


# --- changed files ----------------------------------------------------------------------


def test_changed_file_with_labels_is_refused_with_how_many_and_where(
    project, personas, tmp_path, originals
):
    path = write_pdf(tmp_path / "pump.pdf", ENGLISH)
    import_files(project, [Source(path, "pump.pdf")])
    document = Document.objects.get(doc_id="pump.pdf")
    query = project.queries.create(qid="q7", text="impeller direction")
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_page(document, 2),
        grade=3,
    )
    changed = write_pdf(tmp_path / "pump2.pdf", [["New text."]])
    errors = refused(project, originals, [Source(changed, "pump.pdf")], replace=True)
    assert errors == [
        "pump.pdf: changed since it was imported, and it holds 1 label by anna (1) for "
        "queries q7; pages 2; not replaced (labels would be orphaned)"
    ]


def test_changed_file_needs_replace_and_then_replaces(project, tmp_path, originals):
    path = write_pdf(tmp_path / "pump.pdf", ENGLISH)
    import_files(project, [Source(path, "pump.pdf")])
    (tmp_path / "v2").mkdir()
    changed = write_pdf(tmp_path / "v2" / "pump.pdf", [["Revised manual."]])
    errors = refused(project, originals, [Source(changed, "pump.pdf")])
    assert errors[0].startswith("pump.pdf: document 'pump.pdf' already exists with other content")
    call_command("import_files", project.slug, str(changed), "--replace")
    document = Document.objects.get(doc_id="pump.pdf")
    assert document.text == "Revised manual." and document.metadata["sha256"] == sha(changed)


# --- bad input: a clear error naming the file, nothing written --------------------------


def test_encrypted_pdf(project, tmp_path, originals):
    path = write_pdf(tmp_path / "secret.pdf", ENGLISH, password="s3cret")
    assert refused(project, originals, [Source(path, "secret.pdf")]) == [
        "secret.pdf: the PDF is encrypted (password-protected); "
        "save an unprotected copy and import that"
    ]


def test_corrupt_pdf_and_docx(project, tmp_path, originals):
    good = write_pdf(tmp_path / "good.pdf", ENGLISH)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(good.read_bytes()[:400])
    docx = tmp_path / "broken.docx"
    docx.write_bytes(b"PK\x03\x04 not really a zip")
    errors = refused(
        project,
        originals,
        [Source(good, "good.pdf"), Source(broken, "broken.pdf"), Source(docx, "broken.docx")],
    )
    assert errors == [
        "broken.pdf: not a readable PDF (corrupt or truncated)",
        "broken.docx: not a Word .docx file (corrupt, password-protected, or an old .doc; "
        "save it as .docx without a password)",
    ]


def test_pdf_without_text_layer_is_refused(project, tmp_path, originals):
    path = write_image_only_pdf(tmp_path / "scan.pdf", n_pages=3)
    [error] = refused(project, originals, [Source(path, "scan.pdf")])
    assert error.startswith("scan.pdf: no text layer on any of its 3 pages")
    assert "does not do OCR" in error


def test_pdf_with_some_empty_pages_imports_with_a_warning(project, tmp_path):
    path = write_pdf(tmp_path / "mixed.pdf", [["Text page."], [], ["Third."]])
    result = import_files(project, [Source(path, "mixed.pdf")])
    assert "mixed.pdf: no text on page(s) 2" in result.detail
    document = Document.objects.get(doc_id="mixed.pdf")
    assert len(document.page_starts) == 3
    assert document.metadata["extraction_warnings"] == [
        "mixed.pdf: no text on page(s) 2 (images only? Assay does not OCR)"
    ]


def test_empty_oversized_and_unsupported_files(project, tmp_path, originals, settings):
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    exe = tmp_path / "tool.exe"
    exe.write_bytes(b"MZ")
    big = write_pdf(tmp_path / "big.pdf", ENGLISH)
    settings.ASSAY_MAX_UPLOAD_BYTES = big.stat().st_size - 1
    errors = refused(
        project,
        originals,
        [Source(empty, "empty.pdf"), Source(exe, "tool.exe"), Source(big, "big.pdf")],
    )
    assert errors == [
        "empty.pdf: the file is empty (0 bytes)",
        "tool.exe is a program, not a document; use PDF, DOCX, HTML, Markdown or text",
        f"big.pdf: the file is {big.stat().st_size:,} bytes, over the limit of "
        f"{big.stat().st_size - 1:,} bytes",
    ]


def test_page_character_and_time_limits(project, tmp_path, originals, settings):
    path = write_pdf(tmp_path / "pump.pdf", ENGLISH)
    settings.ASSAY_MAX_PAGES = 2
    assert refused(project, originals, [Source(path, "pump.pdf")]) == [
        "pump.pdf: 3 pages, over the limit of 2 pages per file"
    ]
    settings.ASSAY_MAX_PAGES = 10
    settings.ASSAY_MAX_DOCUMENT_CHARS = 50
    assert refused(project, originals, [Source(path, "pump.pdf")]) == [
        "pump.pdf, page 2: more than 50 characters of text, over the limit"
    ]
    settings.ASSAY_MAX_DOCUMENT_CHARS = 10_000
    settings.ASSAY_EXTRACT_SECONDS = 0  # every check is already past the deadline
    assert refused(project, originals, [Source(path, "pump.pdf")]) == [
        "pump.pdf: extraction took longer than 0 seconds (stopped at page 1)"
    ]


def test_zip_path_traversal_and_absolute_names(project, tmp_path, originals):
    archive = write_zip(tmp_path / "evil.zip", {"../escape.txt": b"x", "ok.txt": b"fine"})
    with zipfile.ZipFile(archive, "a") as handle:
        handle.writestr("/etc/passwd.txt", b"root")
    errors = refused(project, originals, [Source(archive, "evil.zip")])
    assert errors == [
        "evil.zip: '../escape.txt' is an unsafe path (absolute or outside the archive)",
        "evil.zip: '/etc/passwd.txt' is an unsafe path (absolute or outside the archive)",
    ]
    assert not (tmp_path.parent / "escape.txt").exists()


def test_zip_bomb_is_refused_before_unpacking(project, tmp_path, originals):
    archive = write_zip(tmp_path / "bomb.zip", {"zeros.txt": b"0" * (8 * 1024**2)})
    [error] = refused(project, originals, [Source(archive, "bomb.zip")])
    packed = sum(i.compress_size for i in zipfile.ZipFile(archive).infolist())
    assert error == (
        f"bomb.zip: unpacks to 8,388,608 bytes from {packed:,}, {8 * 1024**2 // packed:,} to 1, "
        "over the limit of 100 to 1 (a zip bomb?)"
    )


def test_many_small_members_are_bounded_by_the_whole_archive_ratio(project, tmp_path, originals):
    """20 members of 1 MiB each, none over the per-member threshold, in a 30 KB zip."""
    members = {f"m{i}.txt": b"0" * 1024**2 for i in range(20)}
    archive = write_zip(tmp_path / "many.zip", members)
    assert archive.stat().st_size < 40_000
    [error] = refused(project, originals, [Source(archive, "many.zip")])
    assert error.startswith("many.zip: unpacks to 20,971,520 bytes from ")
    assert error.endswith("over the limit of 100 to 1 (a zip bomb?)")


def test_the_zips_of_one_import_share_one_unpacked_size_limit(
    project, tmp_path, originals, settings
):
    one = write_zip(tmp_path / "one.zip", {"a.txt": b"first " * 100})
    two = write_zip(tmp_path / "two.zip", {"b.txt": b"second " * 100})
    settings.ASSAY_MAX_UNPACKED_BYTES = 1000
    errors = refused(project, originals, [Source(one, "one.zip"), Source(two, "two.zip")])
    assert errors == ["two.zip: unpacks to 700 bytes, over the limit of 400 (a zip bomb?)"]


def test_corrupt_zip_and_unsupported_member(project, tmp_path, originals):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x05\x06" + b"\x00" * 10)
    mixed = write_zip(tmp_path / "mixed.zip", {"a.txt": b"text", "b.xlsx": b"cells"})
    errors = refused(project, originals, [Source(bad, "bad.zip"), Source(mixed, "mixed.zip")])
    assert errors == ["bad.zip: not a readable .zip archive"]
    # A member that is no document is passed over, as in a folder.
    result = import_files(project, [Source(mixed, "mixed.zip")])
    assert result.created == 1 and result.detail == ""
    assert [(r.name, r.outcome) for r in result.report] == [
        ("a.txt", "imported"),
        ("b.xlsx", "passed over"),
    ]


def test_command_reports_every_problem_and_writes_nothing(project, tmp_path, originals):
    good = write_pdf(tmp_path / "good.pdf", ENGLISH)
    scan = write_image_only_pdf(tmp_path / "scan.pdf")
    with pytest.raises(CommandError) as raised:
        call_command("import_files", project.slug, str(good), str(scan))
    assert str(raised.value).startswith("nothing imported:\nscan.pdf: no text layer")
    assert not project.documents.exists()
    with pytest.raises(CommandError, match="no project with slug 'nope'"):
        call_command("import_files", "nope", str(good))


def test_chunking_by_page_lines_chunks_up_with_pages(project, tmp_path):
    path = write_pdf(tmp_path / "pump.pdf", ENGLISH)
    import_files(project, [Source(path, "pump.pdf")])
    call_command("chunk_documents", project.slug, "--size", "4", "--overlap", "1", "--by-page")
    call_command("chunk_documents", project.slug, "--size", "4", "--overlap", "1")
    document = Document.objects.get(doc_id="pump.pdf")
    by_page = document.chunks.filter(chunking__name="tokens-4-1-pages")
    spans = document.page_spans()
    for chunk in by_page:
        assert {document.page_of(chunk.start), document.page_of(chunk.end - 1)} == {
            document.page_of(chunk.start)
        }
    assert {document.page_of(c.start) for c in by_page} == {1, 2, 3}
    crossing = [
        c
        for c in document.chunks.filter(chunking__name="tokens-4-1")
        if document.page_of(c.start) != document.page_of(c.end - 1)
    ]
    assert crossing, "without the option, windows run over page breaks"
    assert len(spans) == 3
