"""Full-page screenshots of every main screen, in English and in Chinese, at 1366×768.

They land in build/screenshots/<language>/ (git-ignored) for a person to look at; the
test itself asserts that each screen loaded (status 200 and an element it must show).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from annotator.labels import Evidence, change_label
from annotator.models import Assignment, Chunk, Chunking, Document, Query
from gold.services import ConsensusPolicy, freeze_gold_set
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import CHROMIUM_ARGS, log_in  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUT = Path(__file__).resolve().parents[2] / "build" / "screenshots"
VIEWPORT = {"width": 1366, "height": 768}
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
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(out / f"{name}.png"), full_page=True)
        if name == "04-labelling":
            assert marker in page.locator("#candidates h2").inner_text()
    context.close()
    assert blocked == [], blocked
    assert len(list(out.glob("*.png"))) >= 18
