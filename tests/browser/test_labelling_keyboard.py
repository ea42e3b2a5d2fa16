"""Labelling with the keyboard only: a note before the grade, search results, card numbers."""

from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from annotator.models import Chunk, Judgment, KeptNote
from tests.conftest import PASSWORD

from .conftest import log_in
from .test_labelling import graded, label_url, labelling, wait_graded  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def numbers(page) -> list[str]:
    """The number each candidate card shows, as a person reads it."""
    return page.locator("#candidates .candidate .cand-pos").all_inner_texts()


def settled(page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-request')")


def test_keyboard_only_note_without_grade_and_a_search_result(page, live_server, labelling):  # noqa: F811
    query = labelling["query"]
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(label_url(live_server, query))
    page.wait_for_selector("#candidates .candidate.is-current")
    # n on an ungraded card: a note, kept with Ctrl+Enter although no grade is given yet.
    page.keyboard.press("n")
    page.wait_for_function("() => document.activeElement.matches('.note textarea')")
    page.keyboard.type("Says where lift comes from")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => document.querySelector('#save-status').innerText.includes('Note kept')"
    )
    assert KeptNote.objects.get().text == "Says where lift comes from"
    assert not Judgment.objects.exists()
    # The server keeps it: after a reload the card shows the note, and its next grade
    # takes the note with it.
    page.reload()
    page.wait_for_selector("#candidates .candidate.is-current")
    kept = page.locator("#candidates .candidate.is-current .note textarea").input_value()
    assert kept == "Says where lift comes from"
    page.keyboard.press("2")
    wait_graded(page, 1)
    settled(page)
    first = Judgment.objects.get()
    assert (first.grade, first.note) == (2, "Says where lift comes from")
    assert not KeptNote.objects.exists()
    assert "Says where lift comes from" in page.locator("#candidates .candidate").first.inner_text()

    # "/" to search, Enter, and the first result is current: a digit grades it.
    # (Search for a chunk other than the one just graded: the pool order is shuffled.)
    word, chunk_id = ("Thrust", "en#2") if first.chunk.chunk_id == "en#1" else ("Drag", "en#1")
    page.keyboard.press("/")
    page.keyboard.type(word)
    page.keyboard.press("Enter")
    page.wait_for_selector("#search-results .candidate.is-current")
    assert page.evaluate("document.activeElement.closest('#search-results') !== null")
    page.keyboard.press("0")
    found = Chunk.objects.get(chunk_id=chunk_id)
    for _ in range(100):
        if Judgment.objects.filter(chunk=found).exists():
            break
        page.wait_for_timeout(100)
    assert Judgment.objects.get(chunk=found).grade == 0
    # k back into the candidates, then r returns to the results.
    page.keyboard.press("k")
    page.keyboard.press("k")
    page.keyboard.press("r")
    page.wait_for_selector("#search-results .candidate.is-current")
    assert "go to the search results" in page.locator("#keys-help").inner_text()

    # The document view: a digit with nothing selected says what to do.
    page.goto(
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", query.pk])
        + f"?document={labelling['zh'].pk}"
    )
    page.wait_for_selector("#doc-page-text")
    page.keyboard.press("2")
    assert "Nothing is selected" in page.locator("#save-status").inner_text()
    assert Judgment.objects.count() == 2


def test_card_numbers_stay_right_after_grading(page, live_server, labelling):  # noqa: F811
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(label_url(live_server, labelling["query"]))
    page.wait_for_selector("#candidates .candidate.is-current")
    before = numbers(page)
    assert before == [str(i) for i in range(1, len(before) + 1)]
    for key in ("3", "1", "0"):
        page.keyboard.press(key)
    wait_graded(page, 3)
    settled(page)
    assert graded(page)[:3] == [3, 1, 0]
    assert numbers(page) == before
    # Refreshed on another change (undo), they keep their numbers too.
    page.keyboard.press("u")
    wait_graded(page, 2)
    settled(page)
    assert numbers(page) == before


def test_a_digit_pressed_as_search_results_arrive_grades_in_place(page, live_server, labelling):  # noqa: F811
    """A key pressed in the instant after results are swapped in grades through htmx.
    With htmx's default 20 ms settle delay the new forms were not wired yet: the grade
    was posted as a plain form and the whole page reloaded."""
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(label_url(live_server, labelling["query"]))
    page.wait_for_selector("#candidates .candidate.is-current")
    navigations = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    # The fastest typist: "0" the moment the results are on screen (next task).
    page.evaluate(
        """() => document.addEventListener("htmx:afterSwap", (event) => {
            if (event.detail.target.id !== "search-results") return;
            setTimeout(() => document.dispatchEvent(
                new KeyboardEvent("keydown", {key: "0", bubbles: true})), 0);
        })"""
    )
    page.keyboard.press("/")
    page.keyboard.type("Thrust")
    page.keyboard.press("Enter")
    page.wait_for_selector("#search-results .candidate.graded[data-grade='0']")
    settled(page)
    found = Chunk.objects.get(chunk_id="en#2")
    assert Judgment.objects.get(chunk=found).grade == 0
    assert navigations == []  # graded in place: no plain form post, no reload


def test_search_results_come_first_and_their_number_follows(
    page,
    live_server,
    labelling,  # noqa: F811
    monkeypatch,
):
    """Many matches (more than the ranked window): the results are shown with "at least",
    then the page asks for the number and puts it in the heading and the pager."""
    from annotator import search_sql
    from annotator.labelling import search_views
    from annotator.search import search_page

    monkeypatch.setattr(search_sql, "RANK_WINDOW", 2)
    monkeypatch.setattr(search_views, "SEARCH_LIMIT", 1)
    total = search_page(labelling["query"].project, "t").total
    assert total >= 3
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(label_url(live_server, labelling["query"]))
    page.wait_for_selector("#candidates .candidate.is-current")
    targets = []
    page.on("request", lambda request: targets.append(request.headers.get("hx-target")))
    page.keyboard.press("/")
    page.keyboard.type("t")
    page.keyboard.press("Enter")
    page.wait_for_selector("#search-results .candidate")
    heading = page.locator("#search-count")
    heading.filter(has_text=f"{total} chunks found").wait_for()
    assert page.locator("#search-range").inner_text() == f"1–1 of {total}"
    assert page.locator("#search-results .candidate").count() == 1
    assert page.locator("#search-pager a[rel=next]").count() == 1
    if connection.vendor == "sqlite":  # PostgreSQL counts a chunking's matches in one pass
        assert targets.count("search-count") == 1
