"""Agreement on answer judgements and their adjudication in a real browser, in English
and Chinese: the agreement page's answers section, a lead setting a final value on the
disputed judgements page; screenshots of each language."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from answers.models import AnswerAdjudication
from tests.answers.conftest import answer_project, answer_run  # noqa: F401
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_answer_agreement_and_disputes_screens(browser, live_server, answer_run, language):  # noqa: F811
    from tests.answers.test_metrics import judge_q1

    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    judge_q1(answer_run, answer_run["annotator2"], {"n1": 2, "n2": 2, "n3": 0}, [2, 0, 0], 1, 1)
    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, live_server, answer_run["adjudicator"].username, PASSWORD)
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(live_server.url + reverse("gold:agreement", args=["acme"]))
    page.wait_for_selector("#answer-agreement tr[data-aspect=crag]")
    page.locator("#answer-agreement-section").screenshot(path=str(folder / "answer_agreement.png"))
    page.click("#answer-disputes-link")
    row = "#answer-disputes tr[data-aspect=crag]"
    page.wait_for_selector(row)
    page.fill(f"{row} input[name=reason]", "complete")
    page.click(f"{row} button[name=value][value='3']")
    page.wait_for_selector(f"{row} [data-decided]")
    assert AnswerAdjudication.objects.get().value == 3
    page.screenshot(path=str(folder / "answer_disputes.png"), full_page=True)
    context.close()
