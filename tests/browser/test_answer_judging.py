"""Judging an answer with the keyboard in a real browser, in English and Chinese: nuggets,
citation support, a sentence that needs a citation, the CRAG grade, undo, and the
message when another session changed a judgement; screenshots of each language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from answers.judging import Target, change_judgment
from answers.models import AnswerJudgment, Aspect
from tests.answers.conftest import answer_project, answer_run  # noqa: F401
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


def press(page, key: str, row: str, value: str) -> None:
    """Press ``key`` and wait until ``row`` shows ``value`` as saved."""
    page.keyboard.press(key)
    page.wait_for_selector(f"{row}[data-value='{value}'] button.chosen[data-value='{value}']")


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_judging_an_answer_with_the_keyboard(browser, live_server, answer_run, language):  # noqa: F811
    anna = answer_run["annotator"]
    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(15000)
    log_in(page, live_server, anna.username, PASSWORD)
    page.goto(live_server.url + reverse("answers:judge", args=["acme"]))
    page.wait_for_selector("tr.item.current")
    assert not re.search(r"\bsys\b", page.inner_text("#answer-screen"))  # blind to the run
    n = {
        key: f"tr[data-aspect=nugget][data-target='{v.pk}']"
        for key, v in answer_run["nuggets"].items()
    }
    answer = answer_run["run"].answers.get(query__qid="q1")
    citations = list(answer.citations.order_by("sentence__number", "number"))
    cite = [f"tr[data-aspect=support][data-target='{c.pk}']" for c in citations]
    uncited = f"tr[data-aspect=needs_citation][data-target='{answer.sentences.get(number=3).pk}']"
    crag = "tr[data-aspect=crag]"
    press(page, "s", n["n1"], "2")
    press(page, "p", n["n2"], "1")
    press(page, "n", n["n3"], "0")
    press(page, "f", cite[0], "2")
    press(page, "p", cite[1], "1")
    press(page, "n", cite[2], "0")
    press(page, "y", uncited, "1")
    press(page, "2", crag, "2")
    saved = "已保存" if language.startswith("zh") else "Saved"
    assert page.inner_text("#answer-status") == saved
    # u undoes the grade; then 1 grades it perfect.
    page.keyboard.press("u")
    page.wait_for_selector(f"{crag}[data-value=''] ")
    assert not AnswerJudgment.objects.filter(aspect=Aspect.CRAG).exists()
    press(page, "1", crag, "3")
    page.keyboard.press("k")  # back up to the uncited sentence and change it with n
    press(page, "n", uncited, "0")
    mine = dict(
        AnswerJudgment.objects.filter(annotator=anna)
        .values_list("aspect", "value")
        .order_by("pk")
        .values_list("aspect", "value")
    )
    assert mine[Aspect.CRAG] == 3 and mine[Aspect.NEEDS_CITATION] == 0
    values = {
        (j.aspect, j.nugget_id or j.citation_id or j.sentence_id): j.value
        for j in AnswerJudgment.objects.filter(annotator=anna)
    }
    assert [values[(Aspect.NUGGET, answer_run["nuggets"][k].pk)] for k in ("n1", "n2", "n3")] == [
        2,
        1,
        0,
    ]
    assert [values[(Aspect.SUPPORT, c.pk)] for c in citations] == [2, 1, 0]
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / "answer_judging.png"), full_page=True)
    # Another session grades the answer "incorrect": this page's "3" is refused, and it
    # shows what is saved with the message.
    change_judgment(answer=answer, annotator=anna, target=Target(Aspect.CRAG), value=0)
    page.keyboard.press("3")
    page.wait_for_selector("#answer-status.error")
    page.wait_for_selector(f"{crag}[data-value='0']")
    message = page.inner_text("#answer-status")
    assert (
        ("另一个会话" in message) if language.startswith("zh") else ("Another session" in message)
    )
    assert AnswerJudgment.objects.get(annotator=anna, aspect=Aspect.CRAG).value == 0
    page.screenshot(path=str(folder / "answer_judging_conflict.png"), full_page=True)
    # ] goes to the next answer (q2's).
    page.keyboard.press("]")
    page.wait_for_selector("text=Drag slows it.")
    context.close()


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_answer_dashboard_and_drilldown_screens(browser, live_server, answer_run, language):  # noqa: F811
    """Screenshots of the answer-run dashboard and one answer's drill-down."""
    from tests.answers.test_metrics import judge_q1

    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 2)
    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, live_server, answer_run["owner"].username, PASSWORD)
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(live_server.url + reverse("answers:dashboard", args=["acme"]))
    page.wait_for_selector("tr[data-run=sys]")
    page.screenshot(path=str(folder / "answer_dashboard.png"), full_page=True)
    page.click("tr[data-run=sys] a")
    page.click("tr[data-qid=q1] a")
    page.wait_for_selector("#answer-nuggets")
    assert page.locator("#answer-nuggets td.status").all_inner_texts()[0] in ("support", "支持")
    page.screenshot(path=str(folder / "answer_drilldown.png"), full_page=True)
    context.close()
