"""Undo in a real browser while a save is still in flight: it reverses what the person just
did, says which card it changed and brings that card into view."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from django.urls import reverse

from annotator.models import Assignment, Chunk, Chunking, Document, Judgment, JudgmentHistory, Query
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import SwitchedRoute, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N_CARDS = 10


@pytest.fixture
def pool(personas):
    """A query with ten candidate cards, one document each (no card covers another)."""
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="para")
    chunks = []
    for i in range(N_CARDS):
        text = f"Paragraph {i} about the lift of wings.\n" * 6
        document = Document.objects.create(project=project, doc_id=f"d{i}", text=text)
        chunks.append(
            Chunk.objects.create(
                chunking=chunking, chunk_id=f"d{i}#0", document=document, start=0, end=len(text)
            )
        )
    query = Query.objects.create(project=project, qid="1", text="What produces lift?")
    run = Run(project=project, name="bm25", level="chunk", chunking=chunking)
    run.set_results(
        np.full(N_CARDS, query.pk),
        np.array([c.pk for c in chunks]),
        np.arange(N_CARDS, 0, -1, dtype=float),
    )
    run.save()
    Assignment.objects.create(project=project, query=query, annotator=personas["annotator"])
    return {"query": query}


class HeldSaves:
    """From ``hold`` on, holds every label save the page posts until ``release``: a slow
    server. Made before the page loads (see SwitchedRoute for why)."""

    def __init__(self, page):
        self.page, self.routes = page, []
        self.route = SwitchedRoute(page, "**/judge/")

    def hold(self) -> None:
        self.route.answer = self.handle

    def handle(self, route):
        if route.request.method == "POST":
            self.routes.append(route)
        else:
            route.continue_()

    def wait_for_one(self, again=None):
        """Wait up to 15 s for a held save (a loaded machine may take seconds to post).
        ``again``: called once half-way if nothing came, with a warning. A grade key that
        posted nothing was seen once in CI (2026-11-27) and not in 9 runs on a machine
        kept busy; every key posting its save is the keyboard tests' subject, this test's
        is the undo that follows."""
        for step in range(600):
            if self.routes:
                return
            if step == 300 and again is not None:
                warnings.warn("no save posted in 7.5 s: the grade key pressed again", stacklevel=2)
                again()
            self.page.wait_for_timeout(25)
        raise AssertionError("the save was never posted")

    def release(self):
        self.route.answer = None
        for route in self.routes:
            route.continue_()


def card(page, n: int):
    return page.locator("#candidates .candidate").nth(n - 1)


def chunk_of(page, n: int) -> int:
    return int(card(page, n).get_attribute("data-chunk"))


def press_if_still_current(page, n: int, key: str) -> None:
    """Press ``key`` again only if card ``n`` is still the current one: a grade key that
    was seen moves on to the next card, and pressing again would grade that one (CI,
    2026-11-28: a save held back more than 7.5 s, the key pressed again, card 9 graded)."""
    if "is-current" not in (card(page, n).get_attribute("class") or "").split():
        return
    page.keyboard.press(key)


def settled(page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-request')")


def in_view(page, n: int) -> bool:
    return page.evaluate(
        """(n) => {
            const box = document.querySelectorAll('#candidates .candidate')[n - 1]
                .getBoundingClientRect();
            return box.bottom > 0 && box.top < window.innerHeight;
        }""",
        n,
    )


def test_undo_pressed_while_a_save_is_in_flight_undoes_that_save(
    browser, live_server, personas, pool
):
    """Cranfield Q1 in the report: 3 on card 7, wait; 1 on card 8 and u 60 ms later. Before,
    card 8 stayed 1 and card 7's grade was deleted, with "Undone." said off-screen."""
    context = browser.new_context(locale="en-US", viewport={"width": 1200, "height": 700})
    page = context.new_page()
    page.set_default_timeout(15000)
    held = HeldSaves(page)
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(live_server.url + reverse("annotator:label_query", args=["acme", pool["query"].pk]))
    page.wait_for_selector("#candidates .candidate.is-current")
    seventh, eighth = chunk_of(page, 7), chunk_of(page, 8)
    card(page, 7).click(position={"x": 5, "y": 5})  # the current card: 7
    page.keyboard.press("3")  # grades card 7, moves to card 8
    page.wait_for_selector("#save-status.ok")
    settled(page)
    held.hold()
    page.keyboard.press("1")  # card 8, its save held by the slow server
    held.wait_for_one(again=lambda: press_if_still_current(page, 8, "1"))
    page.evaluate("window.scrollTo(0, 0)")  # the person looks elsewhere
    page.wait_for_timeout(60)
    page.keyboard.press("u")
    held.release()
    page.wait_for_function(
        "() => document.getElementById('save-status').textContent.includes('Undone')"
    )
    settled(page)
    status = page.locator("#save-status").inner_text()
    assert "card 8" in status, status
    assert Judgment.objects.get(chunk_id=seventh).grade == 3
    assert not Judgment.objects.filter(chunk_id=eighth).exists()
    # Card 7 was never touched again; card 8 was graded, then ungraded.
    assert list(
        JudgmentHistory.objects.filter(judgment__chunk_id=seventh).values_list("event", flat=True)
    ) == ["create"]
    assert list(
        JudgmentHistory.objects.filter(query=pool["query"])
        .order_by("pk")
        .values_list("event", "new_grade")
    ) == [("create", 3), ("create", 1), ("delete", None)]
    # The changed card is brought back into view and is the current one.
    page.wait_for_function(
        "() => document.querySelectorAll('#candidates .candidate')[7]"
        ".classList.contains('is-current')"
    )
    assert in_view(page, 8)
    assert card(page, 8).get_attribute("data-grade") is None
    assert card(page, 7).get_attribute("data-grade") == "3"
    # The status line sits where it is seen, and is read out.
    box = page.locator("#save-status").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 700
    assert page.locator("#save-status").get_attribute("aria-live") == "polite"
    # Undo again: card 7's grade, the action before.
    page.keyboard.press("u")
    page.wait_for_function(
        "() => document.getElementById('save-status').textContent.includes('card 7')"
    )
    settled(page)
    assert not Judgment.objects.exists()
    context.close()


def test_two_quick_grades_and_two_undos_reverse_both(page, live_server, personas, pool):
    """Two saves queued behind a slow one, then two undos: each undo takes its own action."""
    held = HeldSaves(page)
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(live_server.url + reverse("annotator:label_query", args=["acme", pool["query"].pk]))
    page.wait_for_selector("#candidates .candidate.is-current")
    first, second = chunk_of(page, 1), chunk_of(page, 2)
    # The first card is current; a click on it makes sure the page has the keyboard.
    card(page, 1).click(position={"x": 5, "y": 5})
    held.hold()
    page.keyboard.press("2")  # card 1: its save held
    held.wait_for_one()
    page.keyboard.press("0")  # card 2: queued behind it
    page.keyboard.press("u")
    page.keyboard.press("u")
    held.release()
    page.wait_for_function(
        "() => document.getElementById('save-status').textContent.includes('card 1')"
    )
    settled(page)
    assert not Judgment.objects.filter(chunk_id__in=[first, second]).exists()
    events = list(JudgmentHistory.objects.order_by("pk").values_list("judgment__chunk_id", "event"))
    assert [e for _, e in events] == ["create", "create", "delete", "delete"]
