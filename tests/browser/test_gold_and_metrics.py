"""Real browser: adjudicate a disagreement into a frozen gold set; grade from a drill-down
and watch the dashboard change without a reload."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Document
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_disagreement_adjudicated_frozen_and_exported(browser, page, live_server, personas, corpus):
    query, chunk = corpus["query"], corpus["chunk"]
    change_label(
        query=query, annotator=personas["annotator"], evidence=Evidence.for_chunk(chunk), grade=3
    )
    change_label(
        query=query, annotator=personas["annotator2"], evidence=Evidence.for_chunk(chunk), grade=0
    )
    log_in(page, live_server, "adam", PASSWORD)
    page.goto(live_server.url + reverse("gold:queue", args=["acme"]))
    page.wait_for_selector("[data-item].focused")
    page.keyboard.press("r")
    page.keyboard.type("Defines lift: partly answers")
    page.keyboard.press("Escape")
    page.keyboard.press("2")
    page.wait_for_selector("text=Final grade 2 (by adam)")
    page.goto(live_server.url + reverse("gold:list", args=["acme"]))
    page.fill("input[name=name]", "release")
    page.click(".freeze-form button.primary")
    page.wait_for_selector("text=release")
    # Exports are for owners: alice downloads what adam froze.
    owner_context = browser.new_context(locale="en-US")
    owner = owner_context.new_page()
    log_in(owner, live_server, "alice", PASSWORD)
    owner.goto(live_server.url + reverse("gold:list", args=["acme"]))
    owner.click("text=release")
    page = owner
    page.wait_for_selector("#export-form")
    page.select_option("#export-form select[name=level]", "c256")
    page.select_option("#export-form select[name=format]", "jsonl")
    with page.expect_download() as download:
        page.click("#export-form button[type=submit]")
    with open(download.value.path(), encoding="utf-8") as handle:
        line = json.loads(handle.readline())
    assert line["qid"] == "q1"
    assert line["rel_map"] == {"d1#0": 2}  # the adjudicated grade, not majority 3/0
    assert line["policy"]["adjudicated_first"] is True
    # The owner releases it: the team may now measure against it.
    page.click("#gold-release button[type=submit]")
    page.wait_for_selector("text=Released to the team")
    assert page.locator("#gold-release button").inner_text() == "Withdraw from the team"
    owner_context.close()  # before the live server stops: no request left in flight


def test_grading_in_a_drilldown_updates_the_dashboard_live(
    browser, page, live_server, personas, corpus
):
    chunking, query = corpus["chunking"], corpus["query"]
    # Another document: a chunk overlapping the labelled one would inherit its grade 0.
    other = Document.objects.create(project=personas["project"], doc_id="d2", text="Flaps.")
    second = Chunk.objects.create(
        chunking=chunking, chunk_id="d2#0", document=other, start=0, end=len(other.text)
    )
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=0,
    )
    run = Run(project=personas["project"], name="r", level="chunk", chunking=chunking)
    run.set_results(
        np.array([query.pk, query.pk]),
        np.array([second.pk, corpus["chunk"].pk]),
        np.array([2.0, 1.0]),
    )
    run.save()
    log_in(page, live_server, "adam", PASSWORD)  # annotators label blind: no live metrics
    page.goto(live_server.url + reverse("metrics:dashboard", args=["acme"]) + "?level=c256")
    cell = page.locator('tr[data-run="r"] td[data-measure="Hit@10"]')
    assert cell.inner_text().startswith("0.0000")
    url = page.url
    drill = page.context.new_page()
    drill.goto(
        live_server.url
        + reverse("metrics:run_query", args=["acme", run.pk, query.qid])
        + "?level=c256"
    )
    item = drill.locator('li.rank-item.unjudged[data-unit="d2#0"]')
    item.locator('button[name=grade][value="3"]').click()
    drill.wait_for_selector('li.rank-item.g3[data-unit="d2#0"]')
    assert drill.locator('#run-means strong[data-measure="Hit@10"]').inner_text() == "1.0000"
    # The dashboard tab refreshes itself: no reload, same page.
    page.wait_for_function(
        """() => document.querySelector('tr[data-run="r"] td[data-measure="Hit@10"]')
                 .innerText.startsWith('1.0000')""",
        timeout=15000,
    )
    assert page.url == url
