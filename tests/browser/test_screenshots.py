"""Full-page screenshots of every main screen, in English and in Chinese, at 1366×768.

They land in build/screenshots/<language>/ (git-ignored) for a person to look at; the
test itself asserts that each screen loaded (status 200 and an element it must show).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Assignment, Chunk, Chunking, Document, Query
from gold.services import ConsensusPolicy, freeze_gold_set
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import CHROMIUM_ARGS, SwitchedRoute, log_in, server_error  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUT = Path(__file__).resolve().parents[2] / "build" / "screenshots"
VIEWPORT = {"width": 1366, "height": 768}
NOTHING_IN_FLIGHT = (
    "() => !document.querySelector('.htmx-request') && document.fonts.status === 'loaded'"
)
# A LeCaRD-like fact pattern: a long query that must not push the candidates away.
FACTS = (
    "经审理查明：2019年3月至2020年5月间，被告人张某某以投资理财为名，"
    "向被害人李某、王某等十余人虚构高额回报的理财项目，先后骗取钱款共计人民币"
    "一百二十万元，所得款项用于归还个人债务及日常挥霍。案发后，被告人张某某"
    "主动投案，如实供述了自己的罪行，并退赔部分被害人经济损失人民币二十万元。"
) * 3
PARAGRAPH = (
    "The lift of a wing comes from the difference in pressure between its upper and "
    "lower surfaces; a long paragraph keeps going so that the candidate box has to "
    "scroll, and the text must not be cut in the middle of a line. "
) * 6


@pytest.fixture
def screens(personas):
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="para")
    pages = [PARAGRAPH + "\n", "Drag slows the aircraft down.\n" * 5, "推力使飞机前进。\n" * 5]
    text = "".join(pages)
    starts = np.cumsum([0] + [len(p) for p in pages[:-1]]).tolist()
    document = Document.objects.create(
        project=project, doc_id="wing.pdf", title="Wing theory", text=text, page_starts=starts
    )
    chunks = [
        Chunk.objects.create(
            chunking=chunking, chunk_id=f"wing#{i}", document=document, start=a, end=a + len(p)
        )
        for i, (a, p) in enumerate(zip(starts, pages, strict=True))
    ]
    queries = [
        Query.objects.create(
            project=project, qid="1", text="Where does the lift of a wing come from?"
        ),
        Query.objects.create(project=project, qid="2", text=FACTS, tags=["诈骗"]),
    ]
    runs = []
    for name, order in (("bm25", [0, 1, 2]), ("dense", [2, 0, 1])):
        run = Run(project=project, name=name, level="chunk", chunking=chunking)
        qids = np.repeat([q.pk for q in queries], 3)
        items = np.array([chunks[i].pk for i in order] * 2)
        run.set_results(qids, items, np.tile(np.array([3.0, 2.0, 1.0]), 2))
        run.save()
        runs.append(run)
    for persona, grades in (
        ("annotator", [3, 1, 0]),
        ("annotator2", [2, 1, 1]),
        ("owner", [3, 0, 0]),
    ):
        for chunk, grade in zip(chunks, grades, strict=True):
            change_label(
                query=queries[0],
                annotator=personas[persona],
                evidence=Evidence.for_chunk(chunk),
                grade=grade,
            )
        for query in queries:
            Assignment.objects.create(project=project, query=query, annotator=personas[persona])
    change_label(
        query=queries[0],
        annotator=personas["owner"],
        evidence=Evidence.for_passage(document, 4, 60),
        grade=2,
        note="The first sentence says it.",
    )
    freeze_gold_set(project, "release", policy=ConsensusPolicy())
    return {"document": document, "queries": queries, "runs": runs, "chunks": chunks}


def main_screens(objects) -> dict[str, tuple[str, str]]:
    """name → (address, a selector the screen must show)."""
    q1, q2 = objects["queries"]
    bm25, dense = objects["runs"]
    doc = objects["document"].pk
    end = objects["chunks"][0].end  # "o" from the first card: its chunk, outlined

    def url(name, *args):
        return reverse(name, args=["acme", *args])

    return {
        "01-project-list": (reverse("annotator:project_list"), "#project-table"),
        "02-project-home": (url("annotator:project_detail"), "#project-stats"),
        "03-queue": (url("annotator:queue"), "#queue-table"),
        "04-labelling": (url("annotator:label_query", q1.pk), "#candidates .candidate"),
        "05-labelling-long-query": (url("annotator:label_query", q2.pk), "#candidates"),
        "06-document-view": (
            url("annotator:label_query_document", q1.pk) + f"?document={doc}&at=0&end={end}",
            "#doc-page-text",
        ),
        "07-query-page": (url("annotator:query_detail", q1.pk), "#judgment-table"),
        "08-search": (url("annotator:label_query_search", q1.pk) + "?q=wing", "#search-results"),
        "09-assignments": (url("annotator:assign"), "#assign-form"),
        "10-import": (url("annotator:import_upload"), "#import-form"),
        "11-settings": (url("annotator:project_settings"), "form.settings-form, form"),
        "12-agreement": (url("gold:agreement"), "table"),
        "13-adjudication": (url("gold:queue"), "#queue-filter"),
        "14-gold-sets": (url("gold:list"), "#gold-set-table"),
        "15-dashboard": (url("metrics:dashboard"), "#dashboard"),
        "16-run-page": (url("metrics:run_detail", bm25.pk), "#run-summary"),
        "17-drill-down": (url("metrics:run_query", bm25.pk, q1.qid), "#drilldown"),
        "18-comparison": (
            url("metrics:compare") + f"?baseline={bm25.pk}&runs={bm25.pk}&runs={dense.pk}",
            "#compare-form",
        ),
        "19-members": (url("annotator:members"), "input[name=username]"),
    }


@pytest.mark.parametrize("locale,folder", [("en-US", "en"), ("zh-CN", "zh")])
def test_every_main_screen_loads_and_is_photographed(
    browser, live_server, personas, screens, locale, folder
):
    out = OUT / folder
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(locale=locale, viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(15000)
    blocked: list[str] = []
    page.on(
        "console",
        lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None,
    )
    log_in(page, live_server, "alice", PASSWORD)
    marker = "候选" if folder == "zh" else "Candidates"
    for name, (address, selector) in main_screens(screens).items():
        response = page.goto(live_server.url + address)
        assert response is not None and response.status == 200, name
        page.locator(selector).first.wait_for()
        # What the page loads after it shows (htmx partials, fonts) is in: no request of
        # htmx is in flight. (Waiting for the network to be idle costs half a second a page.)
        page.wait_for_function(NOTHING_IN_FLIGHT)
        page.screenshot(path=str(out / f"{name}.png"), full_page=True)
        if name == "04-labelling":
            assert marker in page.locator("#candidates h2").inner_text()
    context.close()
    assert blocked == [], blocked
    assert len(list(out.glob("*.png"))) >= 19


# A LeCaRD-like judgment: two windows of it share 266 characters (47 % of the shorter).
JUDGMENT = "".join(f"第{i}句：被告人以非法占有为目的，骗取他人财物。" for i in range(80))
LONG = "".join(
    f"Line {i}: the lift of a wing comes from the pressure difference.\n" for i in range(26)
)


@pytest.fixture
def day(personas):
    """A query whose cards are a long one and two that share text; anna's grade 0 on the
    long card (one annotator so far); a run over the three cards."""
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="para")
    long_doc = Document.objects.create(project=project, doc_id="long", text=LONG)
    judgment = Document.objects.create(project=project, doc_id="33982", text=JUDGMENT)
    spans = [(long_doc, 0, len(LONG)), (judgment, 490, 1064), (judgment, 798, 1360)]
    chunks = [
        Chunk.objects.create(
            chunking=chunking, chunk_id=f"{d.doc_id}#{i}", document=d, start=a, end=b
        )
        for i, (d, a, b) in enumerate(spans)
    ]
    query = Query.objects.create(project=project, qid="5180", text="诈骗罪的认定 · fraud")
    run = Run(project=project, name="bm25", level="chunk", chunking=chunking)
    run.set_results(
        np.full(3, query.pk), np.array([c.pk for c in chunks]), np.array([3.0, 2.0, 1.0])
    )
    run.save()
    for persona in ("owner", "annotator"):
        Assignment.objects.create(project=project, query=query, annotator=personas[persona])
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(chunks[0]),
        grade=0,
    )
    return {"query": query, "run": run, "long": long_doc, "chunks": chunks}


@pytest.mark.parametrize("locale,folder", [("en-US", "en"), ("zh-CN", "zh")])
def test_the_labelling_screens_in_use_are_photographed(
    browser, live_server, personas, day, locale, folder
):
    """The states people meet while labelling: a long card and shared text, an undo that
    names its card, a refused grade in the document view, a failed grade in the
    drill-down, the dashboard paused, agreement with one annotator, adjudication saved,
    the member form. Viewport pictures, so that fixed status lines show where they sit."""
    out = OUT / folder
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(locale=locale, viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(15000)
    grades = SwitchedRoute(page, "**/judge/**")
    log_in(page, live_server, "alice", PASSWORD)
    query, run = day["query"], day["run"]

    def url(name, *args):
        return live_server.url + reverse(name, args=["acme", *args])

    def shot(name, full_page=False):
        page.wait_for_function(NOTHING_IN_FLIGHT)
        page.screenshot(path=str(out / f"{name}.png"), full_page=full_page)

    page.goto(url("gold:agreement") + "?level=para")
    page.locator("#fleiss-basis").wait_for()
    shot("20-agreement-one-annotator")
    page.goto(url("annotator:members"))
    shot("21-members-add")

    page.goto(url("annotator:label_query", query.pk))
    page.locator("#candidates .more-lines").wait_for()
    shot("22-labelling-long-card-shared-text", full_page=True)
    page.keyboard.press("3")  # the first card to do: the long one
    page.wait_for_selector("#save-status.ok")
    page.keyboard.press("u")
    page.wait_for_selector("#save-status.ok:has-text('1')")
    shot("23-labelling-undone-names-its-card")

    page.goto(url("annotator:label_query_document", query.pk) + f"?document={day['long'].pk}")
    page.locator("form.doc-grade").wait_for()
    change_label(
        query=query,
        annotator=personas["owner"],
        evidence=Evidence.for_document(day["long"]),
        grade=1,
    )  # another session of the same person
    page.locator('form.doc-grade button[value="3"]').click()
    page.wait_for_selector("#save-status.error")
    shot("24-document-view-refused-unpaged")

    page.goto(url("metrics:run_query", run.pk, query.qid) + "?level=para&k=3")
    grades.answer = server_error
    page.locator("li.rank-item.unjudged button[name=grade][value='2']").first.click()
    page.locator(".grade-error").wait_for()
    shot("25-drill-down-failed-grade")
    grades.answer = None

    page.goto(url("metrics:dashboard") + "?level=para")
    page.locator("#dashboard td[data-measure]").first.wait_for()
    page.evaluate(
        """() => {
            const range = document.createRange();
            range.selectNodeContents(document.querySelector('#dashboard td[data-measure]'));
            window.getSelection().removeAllRanges();
            window.getSelection().addRange(range);
        }"""
    )  # a figure being copied: the refresh waits, and says so
    page.wait_for_function(
        "() => document.getElementById('refresh-state').textContent !== ''", timeout=30000
    )
    shot("26-dashboard-paused")

    change_label(
        query=query,
        annotator=personas["owner"],
        evidence=Evidence.for_chunk(day["chunks"][0]),
        grade=3,
    )  # against anna's 0: a dispute
    page.goto(url("gold:queue") + "?level=para")
    page.wait_for_selector("[data-item].focused")
    page.keyboard.press("2")
    page.wait_for_selector("#save-status.ok")
    shot("27-adjudication-saved")
    context.close()
