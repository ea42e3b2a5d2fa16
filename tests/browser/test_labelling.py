"""Labelling in a real browser: keyboard grading, mouse passages in Chinese, blind labels."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from annotator.models import Assignment, Chunk, Chunking, Document, Judgment, Query
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import SwitchedRoute, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# An astral character (CJK Extension B) before the passage: one code point in Python,
# two UTF-16 units in the browser. The offsets must still match.
ZH_TEXT = (
    "第一章 总则\n𠀋 古字在前。机翼的形状决定了气流。\n"
    "升力来自上下表面的压力差，<b>不是</b>魔法 & 奇迹。\n"
    "第二章 其他内容。\n"
)
PASSAGE = "升力来自上下表面的压力差"


@pytest.fixture
def labelling(personas):
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="para")
    en = Document.objects.create(
        project=project,
        doc_id="en",
        title="Wings <i>&</i> lift",
        text="Lift comes from pressure.\nDrag slows the aircraft.\nThrust pushes it forward.\n",
    )
    zh = Document.objects.create(project=project, doc_id="zh", title="机翼与升力", text=ZH_TEXT)
    chunks = []
    for document in (en, zh):
        start = 0
        for i, line in enumerate(document.text.splitlines(keepends=True)):
            chunks.append(
                Chunk.objects.create(
                    chunking=chunking,
                    chunk_id=f"{document.doc_id}#{i}",
                    document=document,
                    start=start,
                    end=start + len(line),
                )
            )
            start += len(line)
    query = Query.objects.create(
        project=project, qid="q1", text="升力从哪里来？ Where does lift come from?"
    )
    run = Run(project=project, name="bm25", level="chunk", chunking=chunking)
    run.set_results(
        np.full(len(chunks), query.pk),
        np.array([c.pk for c in chunks]),
        np.arange(len(chunks), 0, -1, dtype=float),
    )
    run.save()
    for persona in ("annotator", "annotator2"):
        Assignment.objects.create(project=project, query=query, annotator=personas[persona])
    return {"query": query, "zh": zh, "chunks": chunks}


def label_url(live_server, query):
    return live_server.url + reverse("annotator:label_query", args=["acme", query.pk])


def graded(page):
    return page.evaluate(
        "Array.from(document.querySelectorAll('#candidates .candidate'))"
        ".map(c => c.dataset.grade === undefined ? null : Number(c.dataset.grade))"
    )


def wait_graded(page, n):
    page.wait_for_function(
        f"() => document.querySelectorAll('#candidates .candidate.graded').length === {n}"
        " && !document.querySelector('.htmx-request')"
    )


def select_with_mouse(page, needle: str) -> None:
    """Drag the mouse over ``needle`` in the page text, as a person would."""
    box = page.evaluate(
        """(needle) => {
            const container = document.getElementById("doc-page-text");
            const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
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
                return {x1: first.left + 2, y1: first.top + first.height / 2,
                        x2: last.right - 2, y2: last.top + last.height / 2};
            }
            return null;
        }""",
        needle,
    )
    assert box is not None
    page.mouse.move(box["x1"], box["y1"])
    page.mouse.down()
    page.mouse.move(box["x2"], box["y2"], steps=8)
    page.mouse.up()


def wait_for_passage(page) -> Judgment:
    """The passage label, once the page says it was saved. The server commits before it
    answers; reading while it writes would find the table locked (SQLite's in-memory test
    database locks whole tables across threads)."""
    page.wait_for_selector("#save-status.ok")
    return Judgment.objects.get(granularity="passage")


def test_keyboard_grading_mouse_passage_reload_and_blindness(
    browser, page, live_server, personas, labelling
):
    query = labelling["query"]
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(label_url(live_server, query))
    page.wait_for_selector("#candidates .candidate.is-current")
    # Three grades, keyboard only: each grades the current candidate and moves on.
    for key in ("3", "2", "1"):
        page.keyboard.press(key)
    wait_graded(page, 3)
    assert graded(page)[:3] == [3, 2, 1]
    assert "Saved" in page.locator("#save-status").inner_text()
    # u undoes the last grade and makes its card the current one: 1 grades it again.
    page.keyboard.press("u")
    wait_graded(page, 2)
    page.wait_for_function(
        "() => document.querySelectorAll('#candidates .candidate')[2]"
        ".classList.contains('is-current')"
    )
    assert "Undone on card 3" in page.locator("#save-status").inner_text()
    page.keyboard.press("1")
    wait_graded(page, 3)
    assert graded(page)[:3] == [3, 2, 1]
    # n: a note, typed without triggering shortcuts.
    page.keyboard.press("k")
    third = "document.querySelectorAll('#candidates .candidate')[2]"
    page.wait_for_function(f"() => {third}.classList.contains('is-current')")
    page.keyboard.press("n")
    page.wait_for_function("() => document.activeElement.matches('.note textarea')")
    page.keyboard.type("j k 0 1 笔记")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        f"() => {third}.querySelector('.note-text') && !document.querySelector('.htmx-request')"
    )
    assert Judgment.objects.filter(annotator=personas["annotator"]).count() == 3
    assert Judgment.objects.get(note="j k 0 1 笔记").grade == 1

    # A passage of the Chinese document, selected with the mouse.
    page.goto(
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", query.pk])
        + f"?document={labelling['zh'].pk}"
    )
    select_with_mouse(page, PASSAGE)
    page.wait_for_selector("#passage-form:not([hidden])")
    assert page.locator("#passage-form .selection-preview").inner_text() == PASSAGE
    page.keyboard.press("2")
    passage = wait_for_passage(page)
    start = ZH_TEXT.index(PASSAGE)
    assert (passage.start, passage.end, passage.grade) == (start, start + len(PASSAGE), 2)
    marks = page.locator(f'#doc-page-text .hl[data-judgments~="{passage.pk}"]')
    marks.first.wait_for()
    assert "".join(marks.all_inner_texts()) == PASSAGE
    # Each segment shows the best grade of the labels covering it: the passage's 2, or
    # the grade given above to the chunk holding it, if higher. Which chunk got which
    # grade follows the pool's shuffle, keyed by pks; PostgreSQL's pks (and SQLite's,
    # after other tests) differ from run to run, and when the holder was graded 3 this
    # test used to wait for a g2 mark that never came.
    holder = Judgment.objects.filter(
        granularity="chunk",
        annotator=personas["annotator"],
        document=labelling["zh"],
        start__lte=start,
        end__gte=start + len(PASSAGE),
    ).first()
    best = max(2, holder.grade if holder else 0)
    assert all(f"g{best}" in m.get_attribute("class").split() for m in marks.all())

    # Reload: all four labels are there.
    page.goto(label_url(live_server, query))
    page.wait_for_selector("#candidates .candidate")
    assert graded(page)[:3] == [3, 2, 1] and graded(page)[3:] == [None] * (len(graded(page)) - 3)
    assert PASSAGE in page.locator("#my-evidence").inner_text()
    page.reload()
    page.wait_for_selector("#my-evidence .evidence-row")
    assert sum(g is not None for g in graded(page)) == 3

    # Another annotator sees none of them.
    context = browser.new_context(locale="en-US")
    other = context.new_page()
    log_in(other, live_server, "arno", PASSWORD)
    other.goto(label_url(live_server, query))
    other.wait_for_selector("#candidates .candidate")
    assert all(g is None for g in graded(other))
    assert other.locator("#my-evidence .evidence-row").count() == 0
    other.goto(
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", query.pk])
        + f"?document={labelling['zh'].pk}"
    )
    assert other.locator("#doc-page-text .hl").count() == 0
    assert PASSAGE in other.locator("#doc-page-text").inner_text()
    context.close()


def test_offsets_count_code_points_not_utf16_units(page, live_server, personas, labelling):
    """Selections after an astral character map to the same offsets Python uses."""
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(
        live_server.url
        + reverse("annotator:label_query_document", args=["acme", labelling["query"].pk])
        + f"?document={labelling['zh'].pk}"
    )
    for needle in ("𠀋 古字", "古字在前", "<b>不是</b>魔法 & 奇迹。\n第二章", PASSAGE):
        picked = page.evaluate(
            """(needle) => {
                const container = document.getElementById("doc-page-text");
                const text = container.textContent;
                const at = text.indexOf(needle);
                const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
                walker.nextNode();
                const range = document.createRange();
                range.setStart(walker.currentNode, at);
                range.setEnd(walker.currentNode, at + needle.length);
                const selection = window.getSelection();
                selection.removeAllRanges();
                selection.addRange(range);
                return window.assayLabel.selectionOffsets(container);
            }""",
            needle,
        )
        start = ZH_TEXT.index(needle)
        assert picked == {"start": start, "end": start + len(needle), "text": needle}, needle
    assert page.evaluate("window.assayLabel.codePoints('𠀋a升')") == 3


def test_a_failed_save_is_shown_not_dropped(page, live_server, personas, labelling):
    saves = SwitchedRoute(page, "**/judge/")
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(label_url(live_server, labelling["query"]))
    page.wait_for_selector("#candidates .candidate.is-current")
    # Quiet first: in one CI run a refresh of the queue status and the judged counter
    # (a label-change event) ran as "3" was pressed, and no save was sent; the request
    # expected below says so if it happens again, and the trail shows the events.
    page.wait_for_load_state("networkidle")
    saves.answer = lambda route: route.fulfill(status=500, body="boom")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/judge/")):
        page.keyboard.press("3")
    page.wait_for_selector("#save-status.error")
    assert "Not saved" in page.locator("#save-status").inner_text()
    assert page.locator("#candidates .candidate.save-failed").count() == 1
    assert graded(page)[0] is None
    saves.answer = lambda route: route.abort()
    page.keyboard.press("k")
    page.keyboard.press("3")
    page.wait_for_function(
        "() => document.getElementById('save-status').textContent.includes('could not be reached')"
    )
    assert not Judgment.objects.exists()


def test_queue_next_key_and_shortcuts_ignore_typing(page, live_server, personas, labelling):
    log_in(page, live_server, "anna", PASSWORD)
    page.goto(live_server.url + reverse("annotator:queue", args=["acme"]))
    assert "0 / 1" in page.locator("#n-done").inner_text()
    page.keyboard.press("n")
    page.wait_for_url(label_url(live_server, labelling["query"]))
    page.wait_for_selector("#candidates .candidate.is-current")
    page.keyboard.press("/")
    page.keyboard.type("3 j 升力")
    assert page.locator("#search-input").input_value() == "3 j 升力"
    assert not Judgment.objects.exists()
    page.fill("#search-input", "升力 压力")
    page.keyboard.press("Enter")
    page.wait_for_selector("#search-results .candidate")
    assert page.locator("#search-results mark").first.inner_text() == "升力"
