"""The answer comparison page (with the label sources it stands on) and the answer section
of a gold set's version diff, in a real browser, in English and Chinese; screenshots of
each language."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotator.importing import run_import
from answers.judging import Target, change_judgment
from answers.models import Aspect
from tests.answers.conftest import (  # noqa: F401
    answer_project,
    answer_run,
    assessor,
    simple_line,
    write_jsonl,
)
from tests.answers.test_gold import frozen  # noqa: F401
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_answer_comparison_and_gold_diff_screens(browser, live_server, frozen, tmp_path, language):  # noqa: F811
    project = frozen["project"]
    path = write_jsonl(
        tmp_path / "alt.jsonl",
        [
            simple_line(
                "q1",
                [
                    ("Wings make lift.", [{"doc_id": "a", "start": 0, "end": 16}]),
                    ("Flaps raise drag.", [{"doc_id": "a", "start": 17, "end": 46}]),
                ],
            ),
            simple_line("q2", [("Drag slows it.", [{"doc_id": "b", "start": 0, "end": 20}])]),
        ],
    )
    run_import("answers", project, path, options={"name": "alt"})
    alt = project.answer_runs.get(name="alt")
    anna = frozen["annotator"]
    for answer, value in zip(alt.answers.order_by("query__qid"), (1, 2), strict=True):
        change_judgment(answer=answer, annotator=anna, target=Target(Aspect.CRAG), value=value)
    sys_q2 = frozen["run"].answers.get(query__qid="q2")
    change_judgment(answer=sys_q2, annotator=anna, target=Target(Aspect.CRAG), value=3)

    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, live_server, frozen["owner"].username, PASSWORD)
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(live_server.url + reverse("answers:dashboard", args=["acme"]))
    page.click("#compare-answer-runs")
    page.wait_for_selector("#answer-compare-form")
    page.check(f"input[name=runs][value='{frozen['run'].pk}']")
    page.check(f"input[name=runs][value='{alt.pk}']")
    page.select_option("#baseline", str(frozen["run"].pk))
    page.check("input[name=measure][value=crag]")
    page.check("input[name=measure][value=citation_validity]")
    page.click("#answer-compare-form button[type=submit]")
    page.wait_for_selector("table[data-measure=crag] tr[data-run=alt]")
    assert page.get_attribute("#sources-line", "data-sources") == "people"
    assert page.get_attribute("table[data-measure=crag]", "data-queries") == "2"
    # A chart of the per-query differences for each measure compared, on its own axis.
    assert page.locator(".delta-chart[data-run=alt]").count() == 2
    assert "citation_validity" not in page.inner_text(".delta-charts")
    page.screenshot(path=str(folder / "answer_compare.png"), full_page=True)

    page.goto(
        live_server.url
        + reverse("gold:detail", args=["acme", frozen["v2"].pk])
        + f"?against={frozen['v1'].pk}"
    )
    page.wait_for_selector("#answer-diff")
    page.locator("#answer-diff").scroll_into_view_if_needed()
    changed = "#answer-diff-rows tr.changed[data-target=n1]"
    assert "anna: " in page.inner_text(changed) and " 2 " not in page.inner_text(changed)
    page.locator("#answer-diff").screenshot(path=str(folder / "gold_diff_answers.png"))
    context.close()


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_answer_numbers_on_a_judges_judgements_screens(
    browser,
    live_server,
    answer_run,  # noqa: F811
    assessor,  # noqa: F811
    language,
):
    from tests.answers.test_answer_sources import judge_member
    from tests.answers.test_metrics import gold_evidence, judge_q1

    gold_evidence(answer_run, assessor)
    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 2)
    judge = judge_member(answer_run["project"])
    judge_q1(answer_run, judge, {"n1": 2, "n2": 2, "n3": 2}, [2, 2, 2], 0, 3)
    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, live_server, answer_run["viewer"].username, PASSWORD)
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(live_server.url + reverse("answers:dashboard", args=["acme"]))
    page.check("#sources-picker input[value='judge:fake']")
    page.uncheck("#sources-picker input[value=people]")
    page.click("#sources-form button[type=submit]")
    page.wait_for_selector("#sources-line[data-sources='judge:fake']")
    page.screenshot(path=str(folder / "answer_runs_judge_sources.png"), full_page=True)
    page.click("#answer-runs a:text('sys')")
    page.wait_for_selector("#answer-queries")
    assert page.get_attribute("#sources-line", "data-sources") == "judge:fake"
    page.click("tr[data-qid=q1] a")
    page.wait_for_selector("#answer-nuggets th.beside")
    assert page.get_attribute("#sources-line", "data-sources") == "judge:fake"
    page.screenshot(path=str(folder / "answer_detail_beside.png"), full_page=True)
    context.close()
