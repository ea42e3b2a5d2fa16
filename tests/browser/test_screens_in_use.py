"""Screens as people use them, in a real browser: long cards say there is more, a mis-drag
asks before it is saved, the dashboard leaves a selection alone, adjudication says "Saved"
only after a save, the document view's keycaps say what the keys do."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Assignment, Chunk, Chunking, Document, Judgment, Query
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import SwitchedRoute, log_in, server_error

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = "".join(
    f"Line {i}: the lift of a wing comes from the pressure difference.\n" for i in range(26)
)


@pytest.fixture
def long_card(personas):
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="para")
    document = Document.objects.create(project=project, doc_id="long", text=LONG)
    chunk = Chunk.objects.create(
        chunking=chunking, chunk_id="long#0", document=document, start=0, end=len(LONG)
    )
    query = Query.objects.create(project=project, qid="1", text="Where does lift come from?")
    run = Run(project=project, name="bm25", level="chunk", chunking=chunking)
    run.set_results(np.array([query.pk]), np.array([chunk.pk]), np.array([1.0]))
    run.save()
    Assignment.objects.create(project=project, query=query, annotator=personas["annotator"])
    return {"query": query, "document": document}


def settled(page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-request')")


def test_a_long_card_says_how_much_more_and_the_keyboard_opens_it(page, live_server, long_card):
    """Before, a card was cut at 14 lines mid-sentence with no cue, and j/k could not
    reach the rest."""
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(
        live_server.url + reverse("annotator:label_query", args=["acme", long_card["query"].pk])
    )
    page.wait_for_selector("#candidates .candidate.is-current")
    more = page.locator("#candidates .candidate .more-lines")
    more.wait_for()
    assert more.inner_text() == "… 12 more lines"  # 26 lines in a box of 14
    assert more.get_attribute("aria-expanded") == "false"
    text = page.locator("#candidates .cand-text")
    assert not text.evaluate("t => t.scrollHeight <= t.clientHeight + 1")
    page.keyboard.press("e")
    assert more.get_attribute("aria-expanded") == "true"
    assert text.evaluate("t => t.scrollHeight <= t.clientHeight + 1")  # all of it shows
    assert "Line 25" in text.inner_text()
    page.keyboard.press("e")
    assert more.inner_text() == "… 12 more lines"
    # A grade redraws the card: it says so again.
    page.keyboard.press("2")
    page.wait_for_selector("#candidates .candidate.graded .more-lines")


def test_a_one_character_passage_asks_before_it_is_saved(page, live_server, long_card):
    """A mis-drag selected "L" and saved it as a grade-3 passage."""
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", long_card["query"].pk])
        + f"?document={long_card['document'].pk}"
    )
    page.evaluate(
        """() => {
            const node = document.querySelector('#doc-page-text .seg').firstChild;
            const range = document.createRange();
            range.setStart(node, 0); range.setEnd(node, 1);
            window.getSelection().removeAllRanges();
            window.getSelection().addRange(range);
        }"""
    )
    page.mouse.click(5, 5)  # a mouseup elsewhere: the page reads the selection
    page.evaluate(
        """() => {
            const node = document.querySelector('#doc-page-text .seg').firstChild;
            const range = document.createRange();
            range.setStart(node, 0); range.setEnd(node, 1);
            window.getSelection().removeAllRanges();
            window.getSelection().addRange(range);
            document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
        }"""
    )
    page.wait_for_selector("#passage-form:not([hidden])")
    assert page.locator("#passage-form .selection-length").inner_text() == "1 character selected"
    page.keyboard.press("3")
    ask = page.locator("#passage-form .short-confirm")
    ask.wait_for()
    assert "Only 1 character is selected. Press 3 again" in ask.inner_text()
    settled(page)
    assert not Judgment.objects.exists()
    page.keyboard.press("3")
    page.wait_for_selector("#save-status.ok")
    label = Judgment.objects.get()
    assert (label.granularity, label.start, label.end, label.grade) == ("passage", 0, 1, 3)


def test_document_view_keycaps_are_only_on_buttons_the_keys_press(page, live_server, long_card):
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", long_card["query"].pk])
        + f"?document={long_card['document'].pk}"
    )
    page.wait_for_selector("form.doc-grade")
    assert page.locator("form.doc-grade kbd").count() == 0
    assert page.locator("#passage-form .grade-btn kbd").count() == 4
    # A saved passage's row: clicked, never pressed by a digit (a digit grades the selection).
    page.evaluate(
        """() => {
            const node = document.querySelector('#doc-page-text .seg').firstChild;
            const range = document.createRange();
            range.setStart(node, 0); range.setEnd(node, 10);
            window.getSelection().removeAllRanges();
            window.getSelection().addRange(range);
            document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
        }"""
    )
    page.wait_for_selector("#passage-form:not([hidden])")
    page.keyboard.press("2")
    page.wait_for_selector(".evidence-panel .evidence-row .grade-btn")
    assert page.locator(".evidence-panel .evidence-row .grade-btn").count() == 4
    assert page.locator(".evidence-panel .evidence-row kbd").count() == 0
    assert "previous / next" not in page.locator("#keys-help").inner_text()
    # A document without pages: no "Page 1 of 1", no pager.
    assert page.locator(".doc-pager").count() == 0
    assert "Page" not in page.locator("#doc-view").inner_text()


@pytest.fixture
def dashboard(personas, corpus):
    project, chunking, query = personas["project"], corpus["chunking"], corpus["query"]
    other = Document.objects.create(project=project, doc_id="d2", text="Flaps.")
    second = Chunk.objects.create(
        chunking=chunking, chunk_id="d2#0", document=other, start=0, end=len(other.text)
    )
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=0,
    )
    run = Run(project=project, name="r", level="chunk", chunking=chunking)
    run.set_results(
        np.array([query.pk, query.pk]),
        np.array([second.pk, corpus["chunk"].pk]),
        np.array([2.0, 1.0]),
    )
    run.save()
    return {"query": query, "second": second}


def polls(page) -> int:
    return page.evaluate("window.polls")


def wait_for_polls(page, count: int) -> None:
    page.wait_for_function(f"() => window.polls >= {count}", timeout=30000)


def refresh_now(page) -> int:
    """Ask the dashboard for a refresh now (the ``labels-changed`` event its hx-trigger
    listens for besides the 5-second timer: the same request, the same pause and swap
    rules) rather than waiting for the timer; the number of polls before it."""
    seen = polls(page)
    page.evaluate("() => document.body.dispatchEvent(new CustomEvent('labels-changed'))")
    return seen


def test_the_dashboard_refresh_leaves_a_selection_and_the_table_alone(
    page, live_server, personas, dashboard
):
    """Before, the 5-second refresh replaced the table and wiped the selection, so numbers
    could not be copied."""
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("metrics:dashboard", args=["acme"]) + "?level=c256")
    cell = 'tr[data-run="r"] td[data-measure="Hit@10"]'
    page.wait_for_selector(cell)
    page.evaluate(
        """() => {
            window.polls = 0;
            document.body.addEventListener('htmx:beforeRequest', (event) => {
                if (event.detail.elt.id === 'dashboard') window.polls += 1;
            });
            window.cellBefore = document.querySelector(
                'tr[data-run="r"] td[data-measure="Hit@10"]');
        }"""
    )
    # Nothing changed: a refresh leaves the table as it is (the same elements).
    refresh_now(page)
    wait_for_polls(page, 1)
    settled(page)
    assert page.evaluate("() => document.contains(window.cellBefore)")
    # Text selected in the table: refreshes wait, though the figures changed meanwhile.
    page.evaluate(
        """() => {
            const range = document.createRange();
            range.selectNodeContents(window.cellBefore);
            window.getSelection().removeAllRanges();
            window.getSelection().addRange(range);
        }"""
    )
    change_label(
        query=dashboard["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(dashboard["second"]),
        grade=3,
    )
    seen = refresh_now(page)
    wait_for_polls(page, seen + 1)
    assert page.evaluate("() => document.contains(window.cellBefore)")
    assert page.evaluate("() => window.getSelection().toString()").startswith("0.0000")
    assert "paused" in page.locator("#refresh-state").inner_text()
    # Selection gone, pointer elsewhere: the next refresh brings the new figure.
    page.evaluate("() => window.getSelection().removeAllRanges()")
    page.mouse.move(2, 2)
    refresh_now(page)
    page.wait_for_function(
        f"() => document.querySelector('{cell}').innerText.startsWith('1.0000')", timeout=30000
    )
    # The pointer on the table holds it too.
    page.hover(cell)
    change_label(
        query=dashboard["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(dashboard["second"]),
        grade=0,
    )
    seen = refresh_now(page)
    wait_for_polls(page, seen + 1)
    assert page.locator(cell).inner_text().startswith("1.0000")


def test_adjudication_says_saved_only_after_a_save(page, live_server, personas, corpus):
    """Before, any swap (changing the Units filter) wrote "Saved"."""
    for persona, grade in (("annotator", 3), ("annotator2", 0)):
        change_label(
            query=corpus["query"],
            annotator=personas[persona],
            evidence=Evidence.for_chunk(corpus["chunk"]),
            grade=grade,
        )
    saves = SwitchedRoute(page, "**/adjudicate/save/**")
    log_in(page, live_server, "adam", PASSWORD)
    page.goto(live_server.url + reverse("gold:queue", args=["acme"]))
    page.wait_for_selector("[data-item].focused")
    page.select_option("#queue-filter select[name=level]", "documents")
    settled(page)
    page.wait_for_selector("[data-item]")
    assert page.locator("#save-status").inner_text() == ""
    page.keyboard.press("2")
    page.wait_for_function("() => document.getElementById('save-status').textContent === 'Saved'")
    # The line is fixed in the window, where it is seen from any item, and read out.
    status = page.locator("#save-status")
    assert status.evaluate("s => getComputedStyle(s).position") == "fixed"
    assert status.get_attribute("aria-live") == "polite"
    # A save that fails says so beside the item it was for.
    saves.answer = server_error
    page.keyboard.press("k")
    with page.expect_request(lambda r: r.method == "POST" and "/adjudicate/save/" in r.url):
        page.keyboard.press("3")
    error = page.locator("[data-item].focused .grade-error")
    error.wait_for()
    assert error.inner_text() == "Not saved (500). Try again."
    assert error.get_attribute("role") == "alert"
