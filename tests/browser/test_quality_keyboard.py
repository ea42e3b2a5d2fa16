"""Grading relevance and source quality with the keyboard, in English and Chinese: Shift+digit
(read from the key's code, whatever sign it types) grades the current card's site, the
other card of that site shows the grade at once, the digit grades relevance, and the undo
key takes back both, newest first; screenshots of each language."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotator.models import Judgment
from quality.models import QualityDimension, QualityGrade
from tests.conftest import PASSWORD
from tests.test_quality_labelling import screen  # noqa: F401

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PAIR = {"a1": "a2", "a2": "a1"}


def current_doc(page) -> str:
    return page.evaluate(
        "document.querySelector('#candidates .candidate.is-current').dataset.docId"
    )


def go_to_site_a(page) -> str:
    """Move down (j) to a card of site court-a: the cards' order is shuffled."""
    for _ in range(5):
        doc = current_doc(page)
        if doc in PAIR:
            return doc
        page.keyboard.press("j")
    raise AssertionError("no card of site court-a")


def card_quality(page, doc_id: str):
    return page.evaluate(
        f"""() => {{
            const row = document.querySelector(
                '#candidates .candidate[data-doc-id="{doc_id}"] .quality-row');
            return row && row.dataset.qualityGrade !== undefined ? row.dataset.qualityGrade : null;
        }}"""
    )


def wait_quality(page, doc_id: str, grade: str | None) -> None:
    want = "null" if grade is None else f"'{grade}'"
    page.wait_for_function(
        f"""() => {{
            const row = document.querySelector(
                '#candidates .candidate[data-doc-id="{doc_id}"] .quality-row');
            const shown = row && row.dataset.qualityGrade !== undefined
                ? row.dataset.qualityGrade : null;
            return shown === {want} && !document.querySelector('.htmx-request');
        }}"""
    )


def wait_for(check, what: str) -> None:
    for _ in range(150):
        if check():
            return
        import time

        time.sleep(0.1)
    raise AssertionError(f"never: {what}")


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_grading_relevance_and_quality_with_the_keyboard(browser, live_server, screen, language):  # noqa: F811
    context = browser.new_context(locale=language, viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    blocked = []
    page.on(
        "console",
        lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None,
    )
    log_in(page, live_server, "anna", PASSWORD)
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(live_server.url + reverse("annotator:label_query", args=["acme", screen["query"].pk]))
    page.wait_for_selector("#candidates .candidate.is-current .quality-row.is-active")
    doc = go_to_site_a(page)
    other = PAIR[doc]
    # Shift+2: the key's code is Digit2, whatever sign it types ("@" here).
    page.keyboard.press("Shift+Digit2")
    wait_for(lambda: QualityGrade.objects.filter(site="court-a", grade=2).exists(), "graded 2")
    wait_quality(page, doc, "2")
    wait_quality(page, other, "2")  # the other card of the site, live
    assert current_doc(page) == doc  # a quality grade does not move on
    # The digit grades relevance and moves to the next card.
    page.keyboard.press("3")
    wait_for(lambda: Judgment.objects.filter(grade=3).exists(), "relevance 3")
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    assert current_doc(page) != doc
    status = page.locator("#save-status").inner_text()
    assert status
    # caret="initial": Playwright's caret hiding writes a style attribute that htmx would
    # carry over into a swapped element, which the Content-Security-Policy refuses.
    page.locator("#candidates").screenshot(
        path=str(folder / "quality_labelling_cards.png"), caret="initial"
    )
    page.screenshot(path=str(folder / "quality_labelling.png"), caret="initial")
    # Undo takes back the relevance grade first, then the quality grade (by its action).
    page.keyboard.press("u")
    wait_for(lambda: not Judgment.objects.exists(), "relevance undone")
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    page.keyboard.press("u")
    wait_for(lambda: not QualityGrade.objects.exists(), "quality undone")
    wait_quality(page, doc, None)
    wait_quality(page, other, None)
    undone = page.locator("#save-status").inner_text()
    assert ("Undone" in undone) if language == "en-US" else ("已撤销" in undone)
    # Shift+D with a second dimension: the Shift keys now grade it (per document).
    QualityDimension.objects.create(
        project=screen["project"],
        key="freshness",
        name="Freshness",
        name_zh="时效",
        max_grade=2,
        labels=["Old", "Recent", "Current"],
        labels_zh=["陈旧", "较新", "最新"],
        unit="document",
    )
    page.reload()
    page.wait_for_selector("#candidates .candidate.is-current .quality-row.is-active")
    page.keyboard.press("Shift+KeyD")
    page.wait_for_selector(
        "#candidates .candidate.is-current .quality-row.is-active[data-dimension=freshness]"
    )
    doc = current_doc(page)
    page.keyboard.press("Shift+Digit1")
    wait_for(
        lambda: QualityGrade.objects.filter(dimension__key="freshness", grade=1).exists(),
        "freshness 1",
    )
    assert QualityGrade.objects.get().document.doc_id == doc
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    page.locator("#candidates .candidate.is-current").screenshot(
        path=str(folder / "quality_labelling_two_dimensions.png")
    )
    # The document view: the document's quality rows, graded with the same keys.
    page.goto(
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", screen["query"].pk])
        + f"?document={screen['documents']['b'].pk}"
    )
    page.wait_for_selector("#doc-view .quality-row.is-active[data-dimension=freshness]")
    page.keyboard.press("Shift+KeyD")  # back to source quality
    page.wait_for_selector("#doc-view .quality-row.is-active[data-dimension=source_quality]")
    page.keyboard.press("Shift+Digit3")
    wait_for(lambda: QualityGrade.objects.filter(site="court-b", grade=3).exists(), "site b 3")
    page.wait_for_selector("#doc-view .quality-row[data-quality-grade='3']")
    page.screenshot(path=str(folder / "quality_document_view.png"), full_page=False)
    assert blocked == []
    context.close()


def test_two_sessions_a_stale_quality_grade_is_refused_and_the_saved_one_shown(
    browser,
    live_server,
    screen,  # noqa: F811
):
    """Two tabs on the same screen: the second, showing the site ungraded, presses Shift+1
    after the first saved 3; nothing is saved, the card shows 3 and says why, and the next
    press (now with the saved version) goes through."""
    contexts = [browser.new_context(locale="en-US") for _ in range(2)]
    tabs = []
    for context in contexts:
        tab = context.new_page()
        tab.set_default_timeout(15000)
        log_in(tab, live_server, "anna", PASSWORD)
        tab.goto(
            live_server.url + reverse("annotator:label_query", args=["acme", screen["query"].pk])
        )
        tab.wait_for_selector("#candidates .candidate.is-current .quality-row.is-active")
        tabs.append(tab)
    first, second = tabs
    doc = go_to_site_a(first)
    go_to_site_a(second)
    first.keyboard.press("Shift+Digit3")
    wait_for(lambda: QualityGrade.objects.filter(grade=3).exists(), "first tab's 3")
    second.keyboard.press("Shift+Digit1")
    second.wait_for_function(
        "() => document.getElementById('save-status').textContent"
        ".includes('changed in another session to 3')"
    )
    second.wait_for_selector("#candidates .candidate.is-current .quality-row .refused")
    assert card_quality(second, current_doc(second)) == "3"
    wait_quality(second, PAIR[current_doc(second)], "3")  # the site's other card too
    assert QualityGrade.objects.get().grade == 3
    second.keyboard.press("Shift+Digit1")
    wait_for(lambda: QualityGrade.objects.get().grade == 1, "the retry saved")
    assert doc in PAIR
    for context in contexts:
        context.close()


def test_another_tab_of_the_project_shows_the_site_grade_at_once(browser, live_server, screen):  # noqa: F811
    """Two tabs of one browser: the document view of a court-a document, and the screen of
    another query; a grade given on the query's card shows in the document view unreloaded."""
    from annotator.models import Query

    context = browser.new_context(locale="zh-CN")
    reader = context.new_page()
    reader.set_default_timeout(15000)
    log_in(reader, live_server, "anna", PASSWORD)
    writer = context.new_page()
    writer.set_default_timeout(15000)
    writer.goto(
        live_server.url + reverse("annotator:label_query", args=["acme", screen["query"].pk])
    )
    writer.wait_for_selector("#candidates .candidate.is-current .quality-row.is-active")
    doc = go_to_site_a(writer)
    other = Query.objects.create(project=screen["project"], qid="q2", text="Who signed it?")
    reader.goto(
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", other.pk])
        + f"?document={screen['documents'][PAIR[doc]].pk}"
    )
    reader.wait_for_selector("#doc-view .quality-row.is-active")
    writer.bring_to_front()
    writer.keyboard.press("Shift+Digit0")
    wait_for(lambda: QualityGrade.objects.filter(grade=0).exists(), "graded 0")
    reader.wait_for_selector("#doc-view .quality-row[data-quality-grade='0']")
    # Refreshed in place: the rest of the document view is still there (a refresh once
    # inherited the toolbar's target and replaced the whole view).
    assert reader.locator("#doc-view .doc-toolbar form.doc-grade").count() == 1
    assert reader.locator("#doc-page-text").count() == 1
    context.close()
