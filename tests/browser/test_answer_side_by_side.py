"""Judging the answers of two runs to one query side by side in a real browser, in
English and Chinese: a column per answer in the person's own order and without run
names, the one-at-a-time screen's keys within a column, h/l between columns, undo, the
message when another session changed a judgement, and ] to the next query; screenshots
of each language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotator.importing import run_import
from answers.judging import Target, change_judgment
from answers.models import Answer, AnswerJudgment, Aspect
from tests.answers.conftest import answer_project, answer_run, simple_line, write_jsonl  # noqa: F401
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


def column(name: str) -> str:
    return f".answer-column[data-column={name}]"


def wait_value(page, row: str, value: str) -> None:
    page.wait_for_selector(f"{row}[data-value='{value}']")


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_judging_two_answers_side_by_side_with_the_keyboard(
    browser,
    live_server,
    answer_run,  # noqa: F811
    tmp_path,
    language,
):
    path = write_jsonl(
        tmp_path / "rival.jsonl",
        [
            simple_line(
                "q1",
                [
                    ("Wings lift planes.", [{"doc_id": "a", "start": 0, "end": 16}]),
                    ("Slats help too.", [{"doc_id": "a"}]),
                ],
            ),
        ],
    )
    run_import("answers", answer_run["project"], path, options={"name": "rival"})
    anna = answer_run["annotator"]
    q1 = answer_run["queries"]["q1"]
    context = browser.new_context(locale=language, viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    page.set_default_timeout(15000)
    log_in(page, live_server, anna.username, PASSWORD)
    page.goto(live_server.url + reverse("answers:judge_side", args=["acme"]))
    page.wait_for_selector(f"{column('A')} tr.item.current")
    text = page.inner_text("#answer-screen")
    assert not re.search(r"\bsys\b|rival", text)  # blind to the runs
    # Which answer each column shows (the person's own order), from its save URL.
    answer_of = {}
    for name in ("A", "B"):
        url = page.get_attribute(column(name), "data-save-url")
        answer_of[name] = Answer.objects.get(pk=int(re.search(r"/(\d+)/save/", url).group(1)))
    assert {a.run.name for a in answer_of.values()} == {"sys", "rival"}
    n1, n2 = answer_run["nuggets"]["n1"].pk, answer_run["nuggets"]["n2"].pk

    def row(name: str, aspect: str, target="") -> str:
        return f"{column(name)} tr[data-aspect={aspect}][data-target='{target}']"

    # A: n1 support (focus moves on to n2); l: B at the same place (n2), not.
    page.keyboard.press("s")
    wait_value(page, row("A", "nugget", n1), "2")
    page.keyboard.press("l")
    page.wait_for_selector(f"{column('B')}.current-column")
    page.wait_for_selector(f"{row('B', 'nugget', n2)}.current")
    page.keyboard.press("n")
    wait_value(page, row("B", "nugget", n2), "0")
    # 1 grades B perfect; h back to A, 4 grades it incorrect; u undoes that.
    page.keyboard.press("1")
    wait_value(page, row("B", "crag"), "3")
    page.keyboard.press("h")
    page.wait_for_selector(f"{column('A')}.current-column")
    page.keyboard.press("4")
    wait_value(page, row("A", "crag"), "0")
    page.keyboard.press("u")
    wait_value(page, row("A", "crag"), "")
    mine = {
        (j.answer_id, j.aspect, j.nugget_id): j.value
        for j in AnswerJudgment.objects.filter(annotator=anna)
    }
    assert mine == {
        (answer_of["A"].pk, Aspect.NUGGET, n1): 2,
        (answer_of["B"].pk, Aspect.NUGGET, n2): 0,
        (answer_of["B"].pk, Aspect.CRAG, None): 3,
    }
    # The history has every change, the undo too (create, then delete of A's grade).
    from answers.models import AnswerJudgmentHistory

    events = list(
        AnswerJudgmentHistory.objects.filter(answer=answer_of["A"], aspect=Aspect.CRAG)
        .order_by("pk")
        .values_list("event", "new_value")
    )
    assert [value for _event, value in events] == [0, None]
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / "answer_side_by_side.png"), full_page=True)
    # Another session grades B "missing": this page's 2 on B is refused and shows it.
    change_judgment(answer=answer_of["B"], annotator=anna, target=Target(Aspect.CRAG), value=1)
    page.keyboard.press("l")
    page.keyboard.press("2")
    page.wait_for_selector("#answer-status.error")
    wait_value(page, row("B", "crag"), "1")
    message = page.inner_text("#answer-status")
    assert (
        ("另一个会话" in message) if language.startswith("zh") else ("Another session" in message)
    )
    assert AnswerJudgment.objects.get(answer=answer_of["B"], aspect=Aspect.CRAG).value == 1
    page.screenshot(path=str(folder / "answer_side_by_side_conflict.png"), full_page=True)
    # ] goes to the next query (q2: one answer).
    assert q1.qid in page.inner_text(".answer-query h2")
    page.keyboard.press("]")
    page.wait_for_selector("text=Drag slows it.")
    assert "q2" in page.inner_text(".answer-query h2")
    context.close()
