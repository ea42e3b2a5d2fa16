"""Real browser: the chart draws the measure chosen, through the live refresh and into the
SVG download; a comparison against a baseline that is not first by name."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Document, Query
from metrics.models import Run
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def three_runs(personas, corpus):
    """Five documents of one chunk, three queries labelled, three runs named so that the
    baseline chosen below ("beta") is not the first by name."""
    project, chunking = personas["project"], corpus["chunking"]
    chunks = [corpus["chunk"]]
    for d in range(2, 6):
        document = Document.objects.create(project=project, doc_id=f"d{d}", text=f"Text {d}.")
        chunks.append(
            Chunk.objects.create(
                chunking=chunking, chunk_id=f"d{d}#0", document=document, start=0, end=7
            )
        )
    queries = [corpus["query"]] + [
        Query.objects.create(project=project, qid=f"q{i}", text=f"question {i}") for i in (2, 3)
    ]
    for query, chunk in zip(queries, chunks, strict=False):
        change_label(
            query=query,
            annotator=personas["annotator"],
            evidence=Evidence.for_chunk(chunk),
            grade=2,
        )
    rng = np.random.default_rng(5)
    for name in ("alpha", "beta", "gamma"):
        run = Run(project=project, name=name, level="chunk", chunking=chunking)
        order = [rng.permutation([c.pk for c in chunks]) for _ in queries]
        run.set_results(
            np.repeat([q.pk for q in queries], len(chunks)),
            np.concatenate(order),
            np.tile(np.arange(len(chunks), 0, -1), len(queries)).astype(float),
        )
        run.save()


def test_chart_measure_survives_refresh_and_download(page, live_server, three_runs):
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("metrics:dashboard", args=["acme"]) + "?level=c256")
    page.uncheck('#chart-form input[name=chart][value="nDCG@10"]')
    page.check('#chart-form input[name=chart][value="MRR@10"]')
    page.click("#chart-form button[type=submit]")
    page.wait_for_url(re.compile(r"chart=MRR%4010"))
    # Wait for a live refresh of the dashboard region (every 5 s) to have happened: its
    # answer is handled (swapped in only when it differs from what is shown, so a refresh
    # that lost the chart's measure would show here).
    page.evaluate(
        "() => { window.refreshed = false; document.body.addEventListener("
        "'htmx:afterRequest', (event) => { if (event.detail.elt.id === 'dashboard') "
        "window.refreshed = true; }); }"
    )
    page.wait_for_function("() => window.refreshed === true", timeout=20000)
    chart = page.locator("#dashboard-chart svg")
    assert chart.locator('[data-measure="MRR@10"]').count() == 3
    assert chart.locator('[data-measure="nDCG@10"]').count() == 0
    table = {
        row.get_attribute("data-run"): row.locator('td[data-measure="MRR@10"]')
        .inner_text()
        .split("\n")[0]
        for row in page.locator("#dashboard-table tbody tr[data-run]").all()
    }
    with page.expect_download() as download:
        page.click("#chart-svg")
    svg = Path(download.value.path()).read_text(encoding="utf-8")
    values = re.findall(r'data-measure="MRR@10" data-value="([^"]+)"', svg)
    assert len(values) == 3 and "nDCG@10" not in svg
    assert sorted(f"{float(v):.4f}" for v in values) == sorted(table.values())
    # The PNG is the same chart drawn on a canvas at twice its size (no console errors: the
    # CSP allows the same-origin image, which a data: URL would break).
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    with page.expect_download() as download:
        page.click("#chart-png")
    png = Path(download.value.path()).read_bytes()
    assert download.value.suggested_filename == "acme-chart.png"
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    svg_width = float(re.search(r'<svg[^>]* width="([0-9.]+)"', svg).group(1))
    assert width == round(2 * svg_width) and errors == []
    if os.environ.get("ASSAY_SCREENSHOTS"):  # to look at the page while developing
        page.screenshot(path=f"{os.environ['ASSAY_SCREENSHOTS']}/chart.png", full_page=True)


def test_compare_against_a_chosen_baseline(page, live_server, three_runs):
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("metrics:compare", args=["acme"]) + "?level=c256")
    for name in ("alpha", "beta", "gamma"):
        page.check(f'#compare-form label:has-text("{name}") input[name=runs]')
    page.select_option("#baseline", label="beta")
    page.click("#compare-form button[type=submit]")
    page.wait_for_selector("#compare-basis")
    assert "baseline beta" in page.locator("#compare-basis").inner_text()
    table = page.locator('table[data-measure="nDCG@10"]')
    assert table.locator("tr.baseline td").first.inner_text().startswith("beta")
    assert [r.get_attribute("data-run") for r in table.locator("tr[data-run]").all()] == [
        "alpha",
        "gamma",
    ]
    assert page.locator(".delta-chart").count() == 2
