"""Span-true judging in a real browser: one card per piece of text, labels that cover what
they overlap (live, across tabs), and disagreements adjudicated on units."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.importing import run_import
from annotator.models import Chunk, Chunking, Document, Judgment, Query
from gold.export import build_export, render_export
from gold.models import GoldSet
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import log_in
from .test_labelling import select_with_mouse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = (
    "Lift comes from the pressure difference between the two wing surfaces. "
    "Camber helps.\n"
    "Drag slows the aircraft down; thrust from the engines pushes it forward again.\n"
)
FIRST, SECOND = "pressure difference between the two", "between the two wing surfaces"


@pytest.fixture
def overlapping(personas, tmp_path):
    """One document cut by two chunkings (halves, and overlapping windows), a run over each."""
    project = personas["project"]
    document = Document.objects.create(project=project, doc_id="d7", title="Lift", text=TEXT)
    middle = TEXT.index("Drag")
    cuts = {
        "halves": [(0, middle), (middle, len(TEXT))],
        "windows": [(0, 50), (40, middle), (middle, middle + 60), (middle + 50, len(TEXT))],
    }
    query = Query.objects.create(project=project, qid="q1", text="Where does lift come from?")
    for name, spans in cuts.items():
        chunking = Chunking.objects.create(project=project, name=name)
        chunks = [
            Chunk.objects.create(
                chunking=chunking, chunk_id=f"{name[0]}{i}", document=document, start=s, end=e
            )
            for i, (s, e) in enumerate(spans)
        ]
        run = Run(project=project, name=f"run-{name}", level="chunk", chunking=chunking)
        run.set_results(
            np.full(len(chunks), query.pk),
            np.array([c.pk for c in chunks]),
            np.arange(len(chunks), 0, -1, dtype=float),
        )
        run.save()
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d7 2\n")
    run_import("labels", project, qrels, options={"annotator": "assessors", "level": "document"})
    return {"document": document, "query": query, "middle": middle}


def document_url(live_server, overlapping) -> str:
    query, document = overlapping["query"], overlapping["document"]
    return (
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", query.pk])
        + f"?document={document.pk}"
    )


def grade_passage(page, needle: str, key: str) -> None:
    select_with_mouse(page, needle)
    page.wait_for_selector("#passage-form:not([hidden])")
    page.keyboard.press(key)
    page.wait_for_selector("#save-status.ok")


def test_each_piece_once_and_a_passage_covers_candidates_live(
    page, live_server, personas, overlapping
):
    query = overlapping["query"]
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(live_server.url + reverse("annotator:label_query", args=["acme", query.pk]))
    page.wait_for_selector("#candidates .candidate")
    spans = page.evaluate(
        "Array.from(document.querySelectorAll('#candidates .candidate'))"
        ".map(c => [c.dataset.docId, Number(c.dataset.start), Number(c.dataset.end)])"
    )
    # Six chunks from two chunkings, two pieces of text: each shown once.
    assert sorted(spans) == [
        ["d7", 0, overlapping["middle"]],
        ["d7", overlapping["middle"], len(TEXT)],
    ]
    assert page.locator("#n-judged").inner_text() == "0"
    assert page.locator("#n-candidates").inner_text() == "2"
    page.evaluate("window.notReloaded = true")
    # A passage graded in the document view, in another tab.
    viewer = page.context.new_page()
    viewer.goto(document_url(live_server, overlapping))
    grade_passage(viewer, FIRST, "2")
    assert Judgment.objects.get(annotator=personas["annotator"]).granularity == "passage"
    # The screen's covering candidate switches to judged and the counter moves, live.
    first = "#candidates .candidate[data-start='0']"
    page.wait_for_selector(f"{first}.judged[data-covered-grade='2']")
    page.wait_for_function("() => document.getElementById('n-judged').innerText === '1'")
    assert "by passage" in page.locator(f"{first} .cand-grade").inner_text()
    assert page.locator("#candidates .candidate.judged").count() == 1
    assert page.evaluate("window.notReloaded") is True
    viewer.close()


def test_overlapping_passages_disputed_on_a_unit_adjudicated_and_frozen(
    browser, page, live_server, personas, overlapping
):
    # anna grades one passage 3, arno an overlapping but different one 1.
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(document_url(live_server, overlapping))
    grade_passage(page, FIRST, "3")
    other_context = browser.new_context(locale="en-US")
    arno = other_context.new_page()
    log_in(arno, live_server, "arno", PASSWORD)
    arno.goto(document_url(live_server, overlapping))
    grade_passage(arno, SECOND, "1")
    other_context.close()
    spans = set(Judgment.objects.filter(granularity="passage").values_list("start", "end"))
    assert len(spans) == 2  # different spans: they never were "the same evidence"

    lead_context = browser.new_context(locale="en-US")
    lead = lead_context.new_page()
    log_in(lead, live_server, "adam", PASSWORD)
    lead.goto(live_server.url + reverse("gold:queue", args=["acme"]) + "?level=halves")
    lead.wait_for_selector("[data-item].focused")
    assert lead.locator("[data-item]").count() == 1
    item = lead.locator("[data-item]")
    assert item.get_attribute("data-unit") == "h0"
    marks = {
        name: "".join(item.locator(f"blockquote mark[data-annotators~='{name}']").all_inner_texts())
        for name in ("anna", "arno")
    }
    assert FIRST in marks["anna"] and SECOND in marks["arno"]  # both highlights
    assert item.locator("a.document-link").count() == 1
    lead.keyboard.press("r")
    lead.keyboard.type("cites the pressure difference, partly")
    lead.keyboard.press("Escape")
    lead.keyboard.press("2")
    lead.wait_for_selector("text=Final grade 2 (by adam)")
    assert (
        "cites the pressure difference, partly" in lead.locator(".adjudication-reason").inner_text()
    )
    lead_context.close()

    out = StringIO()
    call_command("freeze_gold", "acme", "--name", "release", "--humans-only", stdout=out)
    gold_set = GoldSet.objects.get(name="release")
    assert gold_set.policy["annotators"] == ["anna", "arno"]  # not the imported assessors
    assert "assessors" not in set(gold_set.labels.values_list("annotator", flat=True))
    line = json.loads(render_export(build_export(gold_set, "halves"), "jsonl").decode())
    assert line["rel_map"] == {"h0": 2}  # the adjudicated grade
    adjudicated = [e for e in line["evidence"] if e["grade"] == 2]
    assert adjudicated and adjudicated[0]["units"] == ["h0"]
    assert adjudicated[0]["start"] == 0 and adjudicated[0]["end"] == overlapping["middle"]
    assert line["policy"]["annotators"] == ["anna", "arno"]
