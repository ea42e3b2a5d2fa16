"""Real browser: the assignments form keeps errors in place and refreshes its summary;
the import form shows only the chosen kind's options."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotator.models import Assignment, Query
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_assign_errors_stay_in_the_form_and_the_summary_refreshes(page, live_server, personas):
    for i in range(1, 6):
        Query.objects.create(project=personas["project"], qid=str(i), text=f"q {i}")
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("annotator:assign", args=["acme"]))
    summary = page.locator("#assign-summary")
    assert "5 queries, 5 without anybody assigned." in summary.inner_text()
    page.fill("#id_qids", "1 nope 2")
    page.click("#assign-form button.primary")
    page.wait_for_selector("#assign-form .errorlist")
    assert "Unknown query ids: nope" in page.locator("#assign-form").inner_text()
    assert page.input_value("#id_qids").strip() == "1 nope 2"  # what was typed is kept
    assert page.locator("h1").inner_text() == "Assignments"  # still the whole page
    page.fill("#id_qids", "1 2")
    page.select_option("#id_mode", "each")
    page.click("#assign-form button.primary")
    page.wait_for_selector("#assign-form .save-status.ok")
    page.wait_for_selector("#assign-summary:has-text('5 queries, 3 without anybody assigned.')")
    assert Assignment.objects.filter(query__qid__in=["1", "2"]).exists()
    assert not Assignment.objects.filter(query__qid__in=["3", "4", "5"]).exists()


def test_import_form_shows_the_chosen_kinds_options(page, live_server, personas):
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("annotator:import_upload", args=["acme"]))
    page.select_option("#id_kind", "queries")
    assert not page.locator("#id_annotator").is_visible()
    assert not page.locator("#id_run_name").is_visible()
    assert page.locator("#id_file").is_visible() and page.locator("#id_format").is_visible()
    assert page.locator("[data-kind-help][data-kinds=queries]").is_visible()
    assert not page.locator("[data-kind-help][data-kinds=labels]").is_visible()
    page.select_option("#id_kind", "labels")
    assert page.locator("#id_annotator").is_visible() and page.locator("#id_level").is_visible()
    assert not page.locator("#id_run_name").is_visible()
    page.select_option("#id_kind", "files")
    assert page.locator("#id_replace").is_visible() and not page.locator("#id_format").is_visible()


def test_several_document_files_at_once_with_a_report_per_file(
    browser, page, live_server, personas, tmp_path
):
    """The owner picks two good files, a bad one and a .zip, asks to skip bad files, and
    reads what became of each file; the same page in Chinese."""
    from tests.document_files import write_pdf, write_zip
    from tests.test_import_views import work_off_queue

    good = write_pdf(tmp_path / "manual.pdf", [["Pump manual."]])
    (tmp_path / "notes.md").write_text("# Notes\n\nOil the **bearings**.\n")
    (tmp_path / "report.pdf").write_bytes(b"This is not a PDF.")
    bundle = write_zip(tmp_path / "site.zip", {"faq.html": b"<p>Close the valve.</p>"})
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("annotator:import_upload", args=["acme"]))
    page.select_option("#id_kind", "files")
    assert page.locator("#id_skip_bad").is_visible()
    assert page.locator("#id_html_whole_page").is_visible()
    page.set_input_files(
        "#id_file", [str(p) for p in (good, tmp_path / "notes.md", tmp_path / "report.pdf", bundle)]
    )
    page.check("#id_skip_bad")
    page.click("#import-form button.primary")
    page.wait_for_selector("#import-progress")
    work_off_queue()
    page.reload()
    result = page.locator("#import-result")
    assert result.inner_text().startswith("3 imported, 1 skipped")
    rows = page.locator("#file-report tbody tr")
    assert rows.count() == 4
    skipped = page.locator('#file-report tr[data-outcome="skipped"]')
    assert "report.pdf is a text file, not a PDF" in skipped.inner_text()
    status_url = page.url
    chinese = browser.new_context(locale="zh-CN").new_page()
    log_in(chinese, live_server, "alice", PASSWORD)
    chinese.goto(status_url)
    assert chinese.locator("#import-result").inner_text().startswith("已导入 3 个，跳过 1 个")
    assert "report.pdf 是 文本文件，不是 PDF 文件" in chinese.locator("#file-report").inner_text()
    shots = Path("/work/shots/documents")  # for people to look at, outside the repository
    if shots.parent.is_dir():
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / "import-report-en.png"), full_page=True)
        chinese.screenshot(path=str(shots / "import-report-zh.png"), full_page=True)
    chinese.context.close()
    assert set(personas["project"].documents.values_list("doc_id", flat=True)) == {
        "manual.pdf",
        "notes.md",
        "faq.html",
    }
