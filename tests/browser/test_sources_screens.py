"""Label sources in a real browser: the sources picker chooses a judge and the dashboard
says so; coverage by source; the judge-against-people rankings and calibration pages —
in English and Chinese, with screenshots under build/screenshots/sources/ (or the folder
named by ASSAY_SHOTS_DIR) for a person to look at."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from judges.engine import execute_job
from judges.models import Judge
from judges.services import plan_job, start_job, update_judge
from metrics.models import Run
from tests.conftest import PASSWORD
from tests.judges.conftest import KEY, KEY_ENV, PASSAGES, Sleeps, fake_judge
from tests.judges.fake_llm import FakeLLM

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUT = Path(
    os.environ.get("ASSAY_SHOTS_DIR")
    or Path(__file__).resolve().parents[2] / "build" / "screenshots" / "sources"
)
VIEWPORT = {"width": 1366, "height": 900}


@pytest.fixture
def judged(personas, monkeypatch):
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="c")
    chunks = []
    for index, text in enumerate(PASSAGES[:6]):
        document = Document.objects.create(
            project=project, doc_id=f"d{index}", title=f"Doc {index}", text=text
        )
        chunks.append(
            Chunk.objects.create(
                chunking=chunking, chunk_id=f"d{index}#0", document=document, start=0, end=len(text)
            )
        )
    queries = [
        Query.objects.create(project=project, qid="q1", text="How do wings lift?"),
        Query.objects.create(project=project, qid="q2", text="What is flutter?"),
    ]
    rng = np.random.default_rng(5)
    for name in ("bm25", "dense", "hybrid"):
        run = Run(project=project, name=name, level="chunk", chunking=chunking)
        q = np.repeat([x.pk for x in queries], len(chunks))
        c = np.concatenate([rng.permutation([x.pk for x in chunks]) for _ in queries])
        run.set_results(q, c, np.tile(np.arange(len(chunks), 0, -1, dtype=float), len(queries)))
        run.save()
    for (q, c), grade in {(0, 0): 3, (0, 1): 1, (1, 2): 1, (1, 3): 0}.items():
        change_label(
            query=queries[q],
            annotator=personas["annotator"],
            evidence=Evidence.for_chunk(chunks[c]),
            grade=grade,
        )
    from annotator.importing.judgments import label_annotator

    assessors = label_annotator(project, "cranfield-assessors")
    change_label(
        query=queries[0], annotator=assessors, evidence=Evidence.for_chunk(chunks[4]), grade=2
    )
    monkeypatch.setenv(KEY_ENV, KEY)
    project.pool_depth = 20
    project.save()
    with FakeLLM(KEY) as server:
        judge = fake_judge(project, server, budget=200)
        plan = plan_job(judge, scope="all", level="chunk", chunking="c")
        execute_job(start_job(plan, enqueue=False).pk, sleep=Sleeps())
    return {"project": project, "judge": judge}


@pytest.mark.parametrize("locale,folder", [("en-US", "en"), ("zh-CN", "zh")])
def test_sources_screens(browser, live_server, personas, judged, locale, folder):
    OUT.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(locale=locale, viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(20000)
    try:
        log_in(page, live_server, personas["owner"].username, PASSWORD)
        base = f"{live_server.url}/p/acme"
        page.goto(f"{base}/metrics/?level=c")
        line = page.locator("#sources-line")
        assert line.get_attribute("data-sources") == "people,assessors"
        assert page.locator("#coverage-table").count() == 1
        page.screenshot(path=str(OUT / f"{folder}-dashboard-default.png"), full_page=True)
        # The picker: add the judge, and the page says so.
        page.check("#sources-picker input[value='judge:fake']")
        page.click("#setting-form button[type=submit]")
        page.wait_for_selector("#sources-line[data-sources='people,assessors,judge:fake']")
        assert page.locator("#coverage-table th[data-source='judge:fake']").count() == 1
        page.screenshot(path=str(OUT / f"{folder}-dashboard-with-judge.png"), full_page=True)
        run = Run.objects.get(project=judged["project"], name="bm25")
        page.goto(f"{base}/runs/{run.pk}/q/q1/?level=c&sources=people,judge:fake")
        assert page.locator("#query-coverage").count() == 1
        page.screenshot(path=str(OUT / f"{folder}-drilldown.png"), full_page=True)
        page.goto(f"{base}/sources/compare/?a=people,assessors&b=judge:fake&level=c")
        assert page.locator("#ranking-table tbody tr").count() == 3
        page.screenshot(path=str(OUT / f"{folder}-rankings.png"), full_page=True)
        page.goto(f"{base}/judges/{judged['judge'].pk}/")
        page.wait_for_selector("#judge-rankings #ranking-table")
        page.screenshot(path=str(OUT / f"{folder}-judge-page.png"), full_page=True)
        page.goto(f"{base}/judges/calibration/?a=people&b=judge:fake")
        assert page.locator("#calibration-pairs tbody tr").count() >= 4
        page.screenshot(path=str(OUT / f"{folder}-calibration.png"), full_page=True)
        # A real change makes version 2, and the judge's page says what changed.
        judge = Judge.objects.get(pk=judged["judge"].pk)
        update_judge(
            judge, prompt=judge.prompt.replace("Do not explain", "Be strict. Do not explain")
        )
        update_judge(judge, model="fake-model-2", temperature=0.2)
        page.goto(f"{base}/judges/{judge.pk}/")
        page.click("#judge-version-2 details summary")
        assert page.locator("#judge-version-3 .version-changes").count() == 1
        page.locator("#judge-versions").screenshot(path=str(OUT / f"{folder}-judge-versions.png"))
    finally:
        context.close()
