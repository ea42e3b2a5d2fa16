"""Nuggets in a real browser: a lead selects a passage (document view or card) and makes a
nugget of it with "m" or links it with "l", by keyboard; the dashboard's nugget section and
the drill-down's covered nuggets; screenshots of each screen in English and Chinese."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from judges.engine import execute_job
from judges.services import create_judge
from metrics.models import Run
from nuggets.changes import Span, create_nugget
from nuggets.models import Nugget
from nuggets.proposal_jobs import plan_proposals, start_proposals
from nuggets.proposals import passages_for, read_answer, store
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
TEXT = (
    "Lift comes from the pressure difference between the upper and lower surfaces of the "
    "wing. Camber and the angle of attack both raise it.\n"
    "A stall follows when the flow separates from the upper surface at a high angle of "
    "attack; lift then falls sharply.\n"
    "升力来自机翼上下表面的压力差。攻角过大时气流分离，导致失速。\n"
)


@pytest.fixture
def wing(personas):
    project = personas["project"]
    document = Document.objects.create(
        project=project, doc_id="wing", title="Wing theory", text=TEXT
    )
    chunking = Chunking.objects.create(project=project, name="lines")
    starts = [0, TEXT.index("A stall"), TEXT.index("升力")]
    ends = [*starts[1:], len(TEXT)]
    chunks = [
        Chunk.objects.create(
            chunking=chunking, chunk_id=f"wing#{i}", document=document, start=a, end=b
        )
        for i, (a, b) in enumerate(zip(starts, ends, strict=True))
    ]
    query = Query.objects.create(
        project=project, qid="1", text="Where does lift come from, and when is it lost?"
    )
    run = Run(project=project, name="bm25", level="chunk", chunking=chunking)
    run.set_results(
        np.full(3, query.pk), np.array([c.pk for c in chunks[::-1]]), np.array([3.0, 2.0, 1.0])
    )
    run.save()
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(chunks[0]),
        grade=3,
    )
    return {
        "project": project,
        "document": document,
        "query": query,
        "chunks": chunks,
        "run": run,
        **personas,
    }


def drag_over(page, container: str, needle: str) -> None:
    """Drag the mouse over ``needle`` inside the element matching ``container`` that holds it
    (scrolled to the middle first, so that focusing the card moves nothing)."""
    box = page.evaluate(
        """([selector, needle]) => {
            const root = Array.from(document.querySelectorAll(selector)).find(
                (element) => element.textContent.includes(needle));
            if (!root) return null;
            root.scrollIntoView({block: "center"});
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) {
                const node = walker.currentNode;
                const at = node.data.indexOf(needle);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(node, at); range.setEnd(node, at + 1);
                const first = range.getBoundingClientRect();
                const end = at + needle.length;
                range.setStart(node, end - 1); range.setEnd(node, end);
                const last = range.getBoundingClientRect();
                return {x1: first.left + 1, y1: first.top + first.height / 2,
                        x2: last.right - 1, y2: last.top + last.height / 2};
            }
            return null;
        }""",
        [container, needle],
    )
    assert box is not None, needle
    page.mouse.move(box["x1"], box["y1"])
    page.mouse.down()
    page.mouse.move(box["x2"], box["y2"], steps=8)
    page.mouse.up()


def test_a_selection_becomes_a_nugget_and_another_is_linked_by_keyboard(page, live_server, wing):
    log_in(page, live_server, "adam", PASSWORD)
    query, document = wing["query"], wing["document"]
    url = reverse("annotator:label_query_document", args=["acme", query.pk])
    page.goto(f"{live_server.url}{url}?document={document.pk}")
    needle = "pressure difference between the upper and lower surfaces"
    drag_over(page, "#doc-page-text", needle)
    page.wait_for_selector("#nugget-selection:not([hidden])")
    page.keyboard.press("m")
    assert page.evaluate("document.activeElement.id") == "nugget-new-text"
    page.fill("#nugget-new-text", "Lift comes from a pressure difference")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#nugget-message")
    nugget = Nugget.objects.get()
    start = TEXT.index(needle)
    assert list(nugget.evidence.values_list("start", "end")) == [(start, start + len(needle))]
    # The Chinese sentence: characters are code points, as the server counts them.
    chinese = "升力来自机翼上下表面的压力差"
    drag_over(page, "#doc-page-text", chinese)
    page.wait_for_selector("#nugget-selection:not([hidden])")
    page.keyboard.press("l")
    assert page.evaluate("document.activeElement.id") == "nugget-link-select"
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('.nugget-evidence li[data-start]').length === 2"
    )
    at = TEXT.index(chinese)
    assert sorted(nugget.evidence.values_list("start", "end")) == [
        (start, start + len(needle)),
        (at, at + len(chinese)),
    ]


def test_passages_of_cards_are_linked_and_made_nuggets_by_keyboard(page, live_server, wing):
    nugget = create_nugget(
        wing["query"],
        text="A stall follows flow separation",
        importance="vital",
        changed_by=wing["owner"],
    )
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("annotator:label_query", args=["acme", wing["query"].pk]))
    needle = "the flow separates from the upper surface"
    drag_over(page, ".cand-text", needle)
    page.wait_for_selector("#nugget-selection:not([hidden])")
    page.keyboard.press("l")
    page.keyboard.press("Enter")
    page.wait_for_selector("#nugget-message")
    at = TEXT.index(needle)
    assert list(nugget.evidence.values_list("start", "end")) == [(at, at + len(needle))]
    # "m" on a passage of another card: a new nugget with the card's offsets in the document.
    chinese = "攻角过大时气流分离"
    drag_over(page, ".cand-text", chinese)
    page.wait_for_function(
        "() => document.querySelector('.nugget-selection-text').textContent.includes('攻角')"
    )
    page.keyboard.press("m")
    assert page.evaluate("document.activeElement.id") == "nugget-new-text"
    page.fill("#nugget-new-text", "攻角过大导致失速")
    page.keyboard.press("Control+Enter")
    page.wait_for_function("() => document.querySelectorAll('li.nugget').length === 2")
    made = Nugget.objects.get(text="攻角过大导致失速")
    at = TEXT.index(chinese)
    assert list(made.evidence.values_list("start", "end")) == [(at, at + len(chinese))]


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_screens_in_both_languages(browser, live_server, wing, language):
    owner = wing["owner"]
    doc = wing["document"]
    create_nugget(
        wing["query"],
        text="Lift comes from a pressure difference",
        importance="vital",
        evidence=[Span(doc, 0, 90)],
        changed_by=owner,
    )
    create_nugget(
        wing["query"],
        text="A stall follows flow separation",
        importance="okay",
        evidence=[Span(doc, TEXT.index("A stall"), TEXT.index("lift then"))],
        changed_by=owner,
    )
    create_nugget(
        wing["query"],
        text="升力来自压力差",
        importance="okay",
        evidence=[Span(doc, TEXT.index("升力"), TEXT.index("攻角"))],
        changed_by=owner,
    )
    # A second lead's nuggets (for the agreement page) and an LLM judge's proposal.
    create_nugget(
        wing["query"],
        text="Pressure difference makes lift",
        importance="vital",
        evidence=[Span(doc, 20, 60)],
        changed_by=wing["adjudicator"],
    )
    answer = json.dumps(
        {"nuggets": [{"text": "Camber raises lift", "importance": "okay", "passages": [1]}]}
    )
    passages = passages_for(wing["query"])
    store(wing["query"], passages, read_answer(answer, len(passages), 5))
    # A judge, so that the owner's query page offers to ask it for nuggets.
    judge = create_judge(
        wing["project"],
        slug="gemma",
        name="Gemma judge",
        base_url="http://127.0.0.1:9/v1",
        model="gemma",
        api_key_env="ASSAY_JUDGE_KEY_UNSET",
        by_operator=True,
    )
    # A proposal job of that judge, its key not set where the worker runs: the job page
    # names the query and why it failed.
    job = start_proposals(plan_proposals(judge, qids=["1"]), enqueue=False)
    execute_job(job.pk, sleep=lambda seconds: None)
    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    log_in(page, live_server, "alice", PASSWORD)
    query = wing["query"]
    shots = {
        "nuggets-query-page": (
            reverse("annotator:query_detail", args=["acme", query.pk]),
            "#nugget-propose-form",
        ),
        "nuggets-editor": (
            reverse("nuggets:query_nuggets", args=["acme", query.pk]),
            "#nugget-list",
        ),
        "nuggets-overview": (reverse("nuggets:overview", args=["acme"]), "#nugget-queries"),
        "nuggets-proposal-job": (reverse("judges:job", args=["acme", job.pk]), "#job-failures"),
        "nuggets-agreement": (reverse("gold:agreement", args=["acme"]), "#nugget-agreement"),
        "nuggets-dashboard": (
            reverse("metrics:dashboard", args=["acme"]) + "?level=lines&k=2",
            "#nugget-table",
        ),
        "nuggets-drilldown": (
            reverse("metrics:run_query", args=["acme", wing["run"].pk, "1"]) + "?level=lines&k=2",
            "#nugget-coverage-table",
        ),
    }
    for name, (url, selector) in shots.items():
        response = page.goto(live_server.url + url)
        assert response.status == 200, name
        page.wait_for_selector(selector)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
    url = reverse("annotator:label_query_document", args=["acme", query.pk])
    page.goto(f"{live_server.url}{url}?document={doc.pk}")
    drag_over(page, "#doc-page-text", "the angle of attack both raise it")
    page.wait_for_selector("#nugget-selection:not([hidden])")
    page.keyboard.press("m")
    page.screenshot(path=str(folder / "nuggets-link-from-selection.png"), full_page=True)
    page.keyboard.press("Escape")
    drag_over(page, "#doc-page-text", "lift then falls sharply")
    page.keyboard.press("l")
    assert page.evaluate("document.activeElement.id") == "nugget-link-select"
    page.screenshot(path=str(folder / "nuggets-link-to-nugget.png"), full_page=True)
    context.close()
