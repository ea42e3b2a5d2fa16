"""Disputed quality grades and judges grading a dimension, in a real browser, in English
and Chinese: a lead sets a final grade with a reason; an owner starts a judge's quality
job from the quality settings page, the job grades the sites, and the calibration page
compares the judge with people on them. Screenshots of each language."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotator.models import Document
from judges.engine import execute_job
from judges.models import JudgeJob
from quality.dimensions import offer_source_quality
from quality.grades import QualitySource, change_quality
from quality.models import QualityAdjudication
from tests.conftest import PASSWORD
from tests.judges.conftest import KEY, KEY_ENV, Sleeps, fake_judge
from tests.judges.fake_llm import FakeLLM

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
SITES = {  # site: (the text the test server grades, anna's grade, arno's grade)
    "court.gov.cn": ("Supreme court judgments. GRADE=3", 3, 2),
    "news.example": ("A daily newspaper. GRADE=2", 1, 1),
    "blog.example": ("Someone's opinions. GRADE=0", 0, 1),
    "forum.example": ("Anonymous posts. MALFORMED", 1, 1),
}


@pytest.fixture
def graded(personas, monkeypatch):
    project = personas["project"]
    for index, (site, (text, *_grades)) in enumerate(SITES.items()):
        Document.objects.create(
            project=project,
            doc_id=f"d{index}",
            title=f"Source {index}",
            text=text,
            metadata={"site": site},
        )
    dimension = offer_source_quality(project, site_field="site")
    for site, (_text, anna, arno) in SITES.items():
        for persona, grade in (("annotator", anna), ("annotator2", arno)):
            change_quality(
                dimension=dimension,
                annotator=personas[persona],
                source=QualitySource(site=site),
                grade=grade,
            )
    monkeypatch.setenv(KEY_ENV, KEY)
    return {"project": project, "dimension": dimension}


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_quality_disputes_and_judging(browser, live_server, personas, graded, language):
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20000)
    base = live_server.url
    try:
        log_in(page, live_server, personas["adjudicator"].username, PASSWORD)
        page.goto(base + reverse("gold:queue", args=["acme"]))
        page.click("#quality-disputes-link")
        # count() does not wait: the page it counts on must have arrived (CI, 2026-11-28: 0).
        page.wait_for_url("**/quality/disputes/**")
        page.wait_for_selector("table.quality-disputes tbody tr[data-source]")
        rows = page.locator("table.quality-disputes tbody tr[data-source]")
        assert rows.count() == 2  # court.gov.cn 3 vs 2, blog.example 0 vs 1
        row = page.locator("tr[data-source='s:court.gov.cn']")
        row.locator("input[name=reason]").fill("official court site")
        row.locator("button[name=grade][value='3']").click()
        page.wait_for_selector("tr[data-source='s:court.gov.cn'] [data-decided]")
        final = QualityAdjudication.objects.get()
        assert (final.site, final.grade, final.reason) == (
            "court.gov.cn",
            3,
            "official court site",
        )
        page.screenshot(path=str(folder / "quality_disputes.png"), full_page=True)
        context.close()

        context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
        page = context.new_page()
        page.set_default_timeout(20000)
        log_in(page, live_server, personas["owner"].username, PASSWORD)
        with FakeLLM(KEY) as server:
            fake_judge(graded["project"], server)
            page.goto(base + reverse("quality:settings", args=["acme"]))
            form = page.locator("form.quality-judge-form[data-dimension='source_quality']")
            form.locator(".quality-estimate[data-units='4']").wait_for()
            page.locator("#quality-judges").screenshot(path=str(folder / "quality_judges.png"))
            form.locator("[data-grade-with-judge]").click()
            page.wait_for_selector("#job-quality")
            job = JudgeJob.objects.get()
            execute_job(job.pk, sleep=Sleeps())
        page.reload()
        page.wait_for_selector("#job-progress[data-status='done']")
        assert page.locator("#job-failures tbody tr").count() == 1  # forum.example: prose
        page.screenshot(path=str(folder / "quality_judge_job.png"), full_page=True)
        page.goto(
            base
            + reverse("judges:calibration", args=["acme"])
            + "?a=people&b=judge:fake&dimension=source_quality"
        )
        page.wait_for_selector("#calibration-pairs[data-dimension='source_quality']")
        assert page.locator("#calibration-pairs tbody tr").count() == 3
        page.screenshot(path=str(folder / "quality_calibration.png"), full_page=True)
    finally:
        context.close()
