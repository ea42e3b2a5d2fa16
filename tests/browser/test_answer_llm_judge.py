"""An owner has an LLM judge judge answers and reads its calibration against people, in a
real browser, in English and Chinese: the cost shown before the job starts, the job page,
the calibration page with TREC's figure; screenshots of each language."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from judges.engine import execute_job
from judges.models import JobKind, JudgeJob
from tests.answers.conftest import answer_project, answer_run, judged  # noqa: F401
from tests.conftest import PASSWORD
from tests.judges.conftest import Sleeps

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_an_owner_judges_answers_with_a_judge_and_reads_its_calibration(
    browser,
    live_server,
    judged,  # noqa: F811
    language,
):
    from tests.answers.test_metrics import judge_q1

    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, live_server, judged["owner"].username, PASSWORD)
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(live_server.url + reverse("answers:dashboard", args=["acme"]))
    page.click("#llm-judge-answers")
    page.wait_for_selector("#llm-judging-form")
    page.click("#llm-estimate")
    page.wait_for_selector("#estimate")
    assert page.get_attribute("#estimate", "data-calls") == "5"
    page.screenshot(path=str(folder / "answer_llm_judging.png"), full_page=True)
    page.click("#llm-start-button")
    page.wait_for_selector("#job-progress")
    job = JudgeJob.objects.get()
    assert job.kind == JobKind.ANSWERS
    execute_job(job.pk, sleep=Sleeps())
    judge_q1(judged, judged["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 0, 0], 1, 3)
    page.goto(live_server.url + reverse("answers:dashboard", args=["acme"]))
    page.click("#answer-calibration-link")
    page.wait_for_selector("#answer-calibration-aspects tr[data-aspect=support]")
    assert page.get_attribute("tr[data-aspect=support]", "data-n") == "3"
    assert "56 %" in page.inner_text("#trec-reference")
    page.screenshot(path=str(folder / "answer_calibration.png"), full_page=True)
    context.close()
