"""The answer judging screen: blind to the run, each person's own order, saves with
versions (a 409 when another session changed the judgement), undo by action id."""

from __future__ import annotations

import pytest
from django.urls import reverse

from answers.judging import NO_JUDGMENT
from answers.models import AnswerJudgment, Aspect
from answers.screen import judging_order, next_answer

pytestmark = pytest.mark.django_db


def save(client, answer, **fields):
    return client.post(reverse("answers:judge_save", args=["acme", answer.pk]), fields)


def test_the_screen_never_names_the_run(answer_run, login):
    body = login(answer_run["annotator"]).get(reverse("answers:judge", args=["acme"]))
    assert body.status_code == 200
    text = body.content.decode()
    assert "data-run" not in text and ">sys<" not in text and "sys.jsonl" not in text
    assert "Wings make lift." in text  # the first answer in the order: q1's


def test_each_person_has_an_order_grouped_by_query(answer_run, answer_project, tmp_path):
    from annotator.importing import run_import

    from .conftest import simple_line, write_jsonl

    path = write_jsonl(
        tmp_path / "other.jsonl",
        [simple_line("q1", [("Lift.", [])]), simple_line("q2", [("Drag.", [])])],
    )
    run_import("answers", answer_project["project"], path, options={"name": "other"})
    anna, arno = answer_run["annotator"], answer_run["annotator2"]
    for user in (anna, arno):
        order = judging_order(answer_project["project"], user)
        qids = [answer_run["run"].answers.model.objects.get(pk=pk).query.qid for pk in order]
        assert qids == ["q1", "q1", "q2", "q2"]
    # Graded answers are skipped.
    first = judging_order(answer_project["project"], anna)[0]
    from answers.judging import Target, change_judgment
    from answers.models import Answer

    change_judgment(
        answer=Answer.objects.get(pk=first), annotator=anna, target=Target(Aspect.CRAG), value=3
    )
    assert (
        next_answer(answer_project["project"], anna)
        == judging_order(answer_project["project"], anna)[1]
    )


def test_save_conflict_and_undo(answer_run, login):
    client = login(answer_run["annotator"])
    answer = answer_run["run"].answers.get(query__qid="q1")
    nugget = answer_run["nuggets"]["n1"]
    first = save(
        client, answer, aspect="nugget", target=nugget.pk, value=2, version=NO_JUDGMENT, action="a1"
    )
    assert first.status_code == 200 and first.json()["value"] == 2
    # A second tab that still shows no judgement: 409 with the saved value.
    stale = save(
        client, answer, aspect="nugget", target=nugget.pk, value=0, version=NO_JUDGMENT, action="a2"
    )
    assert stale.status_code == 409 and stale.json()["value"] == 2
    assert "Another session changed this judgement" in stale.json()["error"]
    crag = save(client, answer, aspect="crag", value=3, version=NO_JUDGMENT, action="a3")
    assert crag.status_code == 200
    undone = client.post(reverse("answers:judge_undo", args=["acme", answer.pk]), {"action": "a3"})
    assert undone.status_code == 200
    assert undone.json()["aspect"] == "crag" and undone.json()["value"] is None
    assert not AnswerJudgment.objects.filter(aspect=Aspect.CRAG).exists()
    nothing = client.post(reverse("answers:judge_undo", args=["acme", answer.pk]), {"action": "zz"})
    assert nothing.status_code == 404


def test_bad_saves_are_refused_and_write_nothing(answer_run, login):
    client = login(answer_run["annotator"])
    answer = answer_run["run"].answers.get(query__qid="q1")
    other = answer_run["run"].answers.get(query__qid="q2")
    foreign = other.citations.get()
    for fields in (
        {"aspect": "support", "target": foreign.pk, "value": 2},
        {"aspect": "nugget", "value": 2},
        {"aspect": "crag", "value": 9},
        {"aspect": "tone", "value": 1},
    ):
        response = save(client, answer, version=NO_JUDGMENT, **fields)
        assert response.status_code == 400, fields
    assert not AnswerJudgment.objects.exists()


def test_viewers_do_not_judge(answer_run, login):
    client = login(answer_run["viewer"])
    assert client.get(reverse("answers:judge", args=["acme"])).status_code == 403
    answer = answer_run["run"].answers.get(query__qid="q1")
    assert save(client, answer, aspect="crag", value=3, version=NO_JUDGMENT).status_code == 403


def test_side_by_side_shows_each_runs_answer_blind_in_the_persons_order(
    answer_run, answer_project, login, tmp_path
):
    import re

    from annotator.importing import run_import
    from answers.judging import Target, change_judgment
    from answers.screen import _shuffle_key

    from .conftest import simple_line, write_jsonl

    path = write_jsonl(
        tmp_path / "rival.jsonl",
        [simple_line("q1", [("Lift comes from wings.", [])]), simple_line("q2", [("Drag.", [])])],
    )
    run_import("answers", answer_project["project"], path, options={"name": "rival"})
    url = reverse("answers:judge_side", args=["acme"])
    q1 = answer_project["queries"]["q1"]
    answers = list(q1.answers.all())
    for person in ("annotator", "annotator2"):
        user = answer_run[person]
        client = login(user)
        body = client.get(url).content.decode()
        assert f"Query {q1.qid}" in body  # the first query with ungraded answers
        assert not re.search(r"\bsys\b|rival", body) and "data-run" not in body
        # A column per answer, in this person's stable shuffle, each saving to its answer.
        saves = re.findall(r'data-save-url="/p/acme/answers/judge/(\d+)/save/"', body)
        expected = sorted((a.pk for a in answers), key=lambda pk: _shuffle_key(user.pk, pk))
        assert [int(pk) for pk in saves] == expected
        assert re.findall(r'data-column="(\w)"', body) == ["A", "B"]
        again = client.get(url).content.decode()  # stable across visits
        assert re.findall(r'data-save-url="([^"]+)"', again) == re.findall(
            r'data-save-url="([^"]+)"', body
        )
    # Once anna has graded both answers to q1, the screen opens on q2.
    anna = answer_run["annotator"]
    for answer in answers:
        change_judgment(answer=answer, annotator=anna, target=Target(Aspect.CRAG), value=2)
    client = login(anna)
    body = client.get(url).content.decode()
    assert "Query q2" in body and "Drag." in body and "Drag slows it." in body
    # ?query= names one; a bad value is a 400, a query of another project a 404.
    assert "Flaps raise lift." in client.get(url, {"query": q1.pk}).content.decode()
    assert client.get(url, {"query": "q1"}).status_code == 400
    assert client.get(url, {"query": "999999"}).status_code == 404
    from annotator.models import Query

    stranger = Query.objects.create(project=answer_run["other"], qid="x", text="x")
    assert client.get(url, {"query": stranger.pk}).status_code == 404
    # Everything graded: the done page.
    for answer in answer_project["queries"]["q2"].answers.all():
        change_judgment(answer=answer, annotator=anna, target=Target(Aspect.CRAG), value=2)
    assert 'id="judge-done"' in client.get(url).content.decode()
    # Chinese.
    zh = client.get(url, {"query": q1.pk}, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "并排评判答案" in zh and "答案 A" in zh and "答案 B" in zh
