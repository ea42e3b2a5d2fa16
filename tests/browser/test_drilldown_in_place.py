"""Real browser: grading in a drill-down redraws it whole, once, and says where a grade failed."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Document
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import SwitchedRoute, log_in, server_error

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def drilldown(personas, corpus):
    """A run that retrieves two unjudged chunks and misses the labelled one (grade 2)."""
    project, chunking, query = personas["project"], corpus["chunking"], corpus["query"]
    chunks = []
    for name, text in (("d2", "Flaps change the lift."), ("d3", "Rudders steer.")):
        document = Document.objects.create(project=project, doc_id=name, text=text)
        chunks.append(
            Chunk.objects.create(
                chunking=chunking, chunk_id=f"{name}#0", document=document, start=0, end=len(text)
            )
        )
    change_label(
        query=query,
        annotator=personas["adjudicator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=2,
    )
    run = Run(project=project, name="r", level="chunk", chunking=chunking)
    run.set_results(
        np.array([query.pk, query.pk]), np.array([c.pk for c in chunks]), np.array([2.0, 1.0])
    )
    run.save()
    address = reverse("metrics:run_query", args=["acme", run.pk, query.qid]) + "?level=c256&k=1"
    return {"run": run, "address": address}


def sections(page) -> dict:
    return page.evaluate(
        """() => ({
            missed: document.querySelectorAll('[id=missed]').length,
            headings: Array.from(document.querySelectorAll('h2'))
                .filter(h => h.textContent.includes('Gold evidence missed')).length,
            inside: !!document.querySelector('#drilldown #missed'),
        })"""
    )


def test_grading_in_place_keeps_one_list_of_missed_gold(page, live_server, personas, drilldown):
    log_in(page, live_server, "adam", PASSWORD)
    page.goto(live_server.url + drilldown["address"])
    assert sections(page) == {"missed": 1, "headings": 1, "inside": True}
    assert "d1#0" in page.locator("#missed").inner_text()
    for unit, grade in (("d2#0", "3"), ("d3#0", "0")):
        page.locator(
            f'li.rank-item[data-unit="{unit}"] button[name=grade][value="{grade}"]'
        ).click()
        page.wait_for_selector(f'li.rank-item.g{grade}[data-unit="{unit}"]')
        assert sections(page) == {"missed": 1, "headings": 1, "inside": True}
    # The redrawn list is the live one: the grade-2 chunk is still missed in the top 1.
    assert "d1#0" in page.locator("#drilldown #missed").inner_text()


@pytest.mark.parametrize("failure", ["server", "offline"])
def test_a_failed_grade_says_so_where_it_was_clicked(
    page, live_server, personas, drilldown, failure
):
    grades = SwitchedRoute(page, "**/judge/**")
    log_in(page, live_server, "adam", PASSWORD)
    page.goto(live_server.url + drilldown["address"])
    grades.answer = (lambda route: route.abort()) if failure == "offline" else server_error
    item = page.locator('li.rank-item[data-unit="d2#0"]')
    item.locator('button[name=grade][value="3"]').click()
    error = item.locator(".grade-error")
    error.wait_for()
    text = error.inner_text()
    assert "Not saved" in text
    assert ("500" in text) if failure == "server" else ("could not be reached" in text)
    assert error.get_attribute("role") == "alert"
    # The item is unchanged, and a grade that then goes through clears the message.
    assert "unjudged" in (item.get_attribute("class") or "")
    grades.answer = None
    page.locator('li.rank-item[data-unit="d2#0"] button[name=grade][value="3"]').click()
    page.wait_for_selector('li.rank-item.g3[data-unit="d2#0"]')
    assert page.locator(".grade-error").count() == 0
