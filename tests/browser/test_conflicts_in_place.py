"""Two tabs on one label, in a real browser: a refused save says why where it was made, and
the next try works without a reload (the document view's page and document buttons too)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.models import Judgment
from tests.conftest import PASSWORD

from .conftest import log_in
from .test_labelling import label_url, labelling  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def two_tabs(browser, live_server):
    contexts = [browser.new_context(locale="en-US") for _ in range(2)]
    tabs = []
    for context in contexts:
        tab = context.new_page()
        tab.set_default_timeout(15000)
        log_in(tab, live_server, "anna", PASSWORD)
        tabs.append(tab)
    yield tabs
    for context in contexts:
        context.close()


def settled(page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-request')")


def document_url(live_server, labelling) -> str:  # noqa: F811
    return (
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", labelling["query"].pk])
        + f"?document={labelling['zh'].pk}"
    )


def pressed(page, form: str) -> list[str]:
    return page.locator(f"{form} .grade-btn.is-set").evaluate_all(
        "buttons => buttons.map(b => b.value)"
    )


@pytest.mark.parametrize("granularity", ["document", "page"])
def test_a_refused_whole_document_grade_can_be_retried_in_place(
    live_server,
    personas,
    labelling,  # noqa: F811
    two_tabs,
    granularity,
):
    """Two sessions on one document: before, the refused tab kept its old highlight and
    version, and every further click was refused again until a reload. The same for the
    grade of a page."""
    form = "form.doc-grade" if granularity == "document" else "form.page-grade"
    if granularity == "page":
        document = labelling["zh"]
        document.page_starts = [0, document.text.index("第二章")]
        document.save()
    tab_a, tab_b = two_tabs
    for tab in two_tabs:
        tab.goto(document_url(live_server, labelling))
        tab.wait_for_selector(form)
    tab_b.locator(f'{form} button[value="1"]').click()
    tab_b.wait_for_selector("#save-status.ok")
    tab_a.locator(f'{form} button[value="3"]').click()
    tab_a.wait_for_function(
        "() => document.getElementById('save-status').textContent"
        ".includes('changed in another session to 1')"
    )
    settled(tab_a)
    # The buttons show the grade as it is now, carrying its version.
    tab_a.wait_for_function(
        "(form) => document.querySelector(form + ' button[value=\"1\"]')"
        ".classList.contains('is-set')",
        arg=form,
    )
    assert pressed(tab_a, form) == ["1"]
    assert Judgment.objects.get(granularity=granularity).grade == 1
    # The message stays in view: the status line is fixed in the window.
    assert tab_a.locator("#save-status").is_visible()
    # A deliberate second click now goes through.
    tab_a.locator(f'{form} button[value="3"]').click()
    tab_a.wait_for_function(
        "() => document.getElementById('save-status').textContent.includes('Saved')"
    )
    settled(tab_a)
    assert Judgment.objects.get(granularity=granularity).grade == 3
    assert pressed(tab_a, form) == ["3"]


def test_a_note_refused_as_a_conflict_is_kept_with_the_reason_beside_it(
    live_server,
    personas,
    labelling,  # noqa: F811
    two_tabs,
):
    """Before, the card was redrawn with an empty, closed note and the message sat above
    the first card, out of view."""
    tab_a, tab_b = two_tabs
    address = label_url(live_server, labelling["query"])
    tab_a.goto(address)
    tab_a.wait_for_selector("#candidates .candidate.is-current")
    tab_a.keyboard.press("2")  # the first card: graded 2 in tab A
    tab_a.wait_for_selector("#save-status.ok")
    settled(tab_a)
    chunk = Judgment.objects.get().chunk_id
    tab_b.goto(address)
    place = f"#cand-{chunk}"
    tab_b.locator(f'{place} .grade-form button[value="3"]').click()
    tab_b.wait_for_selector("#save-status.ok")
    tab_a.locator(f"{place} .candidate").click(position={"x": 5, "y": 5})
    tab_a.keyboard.press("n")
    tab_a.wait_for_function("() => document.activeElement.matches('.note textarea')")
    tab_a.keyboard.type("Answers it in the second sentence")
    tab_a.keyboard.press("Control+Enter")
    tab_a.wait_for_selector(f"{place} .note .refused")
    settled(tab_a)
    assert "changed in another session to 3" in tab_a.locator(f"{place} .refused").inner_text()
    assert tab_a.locator(f"{place} details.note").get_attribute("open") is not None
    typed = tab_a.locator(f"{place} .note textarea").input_value()
    assert typed == "Answers it in the second sentence"
    assert Judgment.objects.get().note == ""
    # Saving it again keeps it, on the label as it now is (grade 3 from tab B).
    tab_a.locator(f"{place} .note textarea").focus()
    tab_a.keyboard.press("Control+Enter")
    tab_a.wait_for_function(
        "() => document.getElementById('save-status').textContent.includes('Saved')"
    )
    settled(tab_a)
    label = Judgment.objects.get()
    assert (label.grade, label.note) == (3, "Answers it in the second sentence")
