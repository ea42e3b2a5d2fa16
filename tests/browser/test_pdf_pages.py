"""PDF pages in a real browser: grade a page by its image, see a selected passage on it,
and find both, with their page numbers, in the gold JSONL export."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotator.importing.files import Source, import_files
from annotator.models import Assignment, Judgment
from gold.export import build_export, render_export
from gold.services import ConsensusPolicy, freeze_gold_set
from tests.conftest import PASSWORD
from tests.document_files import write_pdf

from .conftest import log_in
from .test_labelling import select_with_mouse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = [
    ["Pump manual", "Read every page before you start."],
    ["Page two: safety.", "Wear gloves when the casing is hot."],
    ["Page three: maintenance.", "Replace the shaft seal every two thousand hours."],
]
PASSAGE = "Replace the shaft seal"


def test_grade_page_two_by_its_image_and_see_a_passage_on_page_three(
    page, live_server, personas, tmp_path
):
    project = personas["project"]
    pdf = write_pdf(tmp_path / "pump.pdf", PAGES, title="Pump manual")
    import_files(project, [Source(pdf, "pump.pdf")])
    document = project.documents.get(doc_id="pump.pdf")
    query = project.queries.create(qid="q1", text="How often is the seal replaced?")
    Assignment.objects.create(project=project, query=query, annotator=personas["annotator"])
    view = live_server.url + reverse("annotator:label_query_document", args=["acme", query.pk])

    log_in(page, live_server, "anna", PASSWORD)
    page.goto(f"{view}?document={document.pk}&page=2")
    image = page.locator("#page-picture img.page-image")
    image.wait_for()
    assert "/pages/2.png" in image.get_attribute("src")
    # The page's policy forbids evaluated strings (wait_for_function): poll the element.
    expect(image).to_have_js_property("complete", True)
    assert image.evaluate("img => img.naturalWidth") > 0
    assert "Wear gloves" in page.locator("#doc-page-text").inner_text()

    # Grade page 2 from the form under its image.
    page.click('#page-picture button[name="grade"][value="2"]')
    page.locator(".page-number .grade.g2").wait_for()  # saved, and the view says so

    # Turn the page: text and image move together.
    page.click("#next-page")
    expect(page.locator("#page-picture img")).to_have_attribute("src", re.compile("/pages/3.png"))
    assert "Replace the shaft seal" in page.locator("#doc-page-text").inner_text()

    # Select a passage in the text: it is outlined on the page image.
    select_with_mouse(page, PASSAGE)
    page.wait_for_selector("#passage-form:not([hidden])")
    box = page.locator("#page-selection .box").first
    box.wait_for()
    frame = page.locator("#page-picture .page-frame").bounding_box()
    drawn = box.bounding_box()
    # drawString(72, 740) on an A4 page of 842 pt: the line is ~12% down, ~12% in.
    assert 0.08 < (drawn["y"] - frame["y"]) / frame["height"] < 0.16
    assert 0.10 < (drawn["x"] - frame["x"]) / frame["width"] < 0.15
    page.screenshot(path=str(tmp_path / "pdf-page-view.png"), full_page=True)
    page.keyboard.press("3")
    page.locator("#page-picture .page-box.hl.g3").first.wait_for()  # saved: drawn for good
    page.close()  # no more requests while the database is read below
    graded_page = Judgment.objects.get(granularity="page")
    assert (graded_page.grade, document.page_of(graded_page.start)) == (2, 2)
    passage = Judgment.objects.get(granularity="passage")
    start = document.text.index(PASSAGE)
    assert (passage.start, passage.end, passage.grade) == (start, start + len(PASSAGE), 3)

    # The gold JSONL export at page level holds both, with their page numbers (at
    # document level only the evidence giving the document its final grade is listed).
    gold = freeze_gold_set(project, "pages", policy=ConsensusPolicy())
    lines = render_export(build_export(gold, "pages"), "jsonl").decode().splitlines()
    evidence = json.loads(lines[0])["evidence"]
    found = {(e["granularity"], e["page"], e["grade"]) for e in evidence}
    assert found == {("page", 2, 2), ("passage", 3, 3)}
    assert next(e["text"] for e in evidence if e["granularity"] == "passage") == PASSAGE
