"""Frozen gold sets keep the answer judgements as they were at the freeze — each person's
value and the lead's final value, with the gold value the measures take — in the gold
JSONL (``answer_judgements``) and in a workbook sheet per kind."""

from __future__ import annotations

import io
import json

import pytest
from openpyxl import load_workbook

from answers.adjudication import adjudicate
from answers.judging import Target, change_judgment
from answers.models import Aspect, GoldAnswerJudgment
from gold.export import build_export, render_export
from gold.services import ConsensusPolicy, freeze_gold_set

from .conftest import DOC_A, DOC_B, grade
from .test_metrics import judge_q1

pytestmark = pytest.mark.django_db


def lines(gold_set):
    data = render_export(build_export(gold_set, "documents"), "jsonl").decode()
    return {line["qid"]: line for line in map(json.loads, data.splitlines())}


def workbook(gold_set):
    return load_workbook(io.BytesIO(render_export(build_export(gold_set, "documents"), "xlsx")))


@pytest.fixture
def frozen(answer_run, assessor):
    run, owner = answer_run["run"], answer_run["owner"]
    anna, arno = answer_run["annotator"], answer_run["annotator2"]
    for qid in ("q1", "q2"):  # relevance labels, so both queries have a gold line
        grade(answer_run["queries"][qid], anna, answer_run["docs"]["a"], 0, 16, 2)
    # anna and arno differ on n2, the second citation and the grade; the lead settles the
    # grade; the assessors (not people) judge too and are left out.
    answer = judge_q1(answer_run, anna, {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    judge_q1(answer_run, arno, {"n1": 2, "n2": 2, "n3": 0}, [2, 0, 0], 1, 1)
    judge_q1(answer_run, assessor, {"n1": 0, "n2": 0, "n3": 0}, [0, 0, 0], 0, 0)
    lead = answer_run["adjudicator"]
    adjudicate(answer=answer, target=Target(Aspect.CRAG), value=2, reason="ok", by=lead)
    v1 = freeze_gold_set(run.project, "team", policy=ConsensusPolicy(), created_by=owner)
    # After freezing, the live judgements move on; version 1 keeps them as they were.
    n1 = Target(Aspect.NUGGET, answer_run["nuggets"]["n1"].pk)
    change_judgment(answer=answer, annotator=anna, target=n1, value=0)
    adjudicate(answer=answer, target=Target(Aspect.CRAG), value=None, reason="", by=lead)
    v2 = freeze_gold_set(run.project, "team", policy=ConsensusPolicy(), created_by=owner)
    return {**answer_run, "v1": v1, "v2": v2}


def test_the_gold_jsonl_carries_the_answer_judgements_as_frozen(frozen):
    first = lines(frozen["v1"])
    both = {"judgements": {"anna": 2, "arno": 2}, "adjudicated": None}
    end_b = len(DOC_B)
    assert first["q1"]["answer_judgements"] == [
        {
            "run": "sys",
            "aspect": "nugget",
            "nugget_id": "n1",
            **both,
            "gold": 2,
            "level": "support",
        },
        {
            "run": "sys",
            "aspect": "nugget",
            "nugget_id": "n2",
            "judgements": {"anna": 1, "arno": 2},
            "adjudicated": None,
            "gold": 1,  # the low median of partial and support
            "level": "partial",
        },
        {
            "run": "sys",
            "aspect": "nugget",
            "nugget_id": "n3",
            "judgements": {"anna": 0, "arno": 0},
            "adjudicated": None,
            "gold": 0,
            "level": "not",
        },
        {
            "run": "sys",
            "aspect": "support",
            "sentence": 1,
            "citation": 1,
            "doc_id": "a",
            "start": 0,
            "end": 16,
            **both,
            "gold": 2,
            "level": "full",
        },
        {
            "run": "sys",
            "aspect": "support",
            "sentence": 2,
            "citation": 1,
            "doc_id": "a",
            "start": 17,
            "end": 46,
            "judgements": {"anna": 1, "arno": 0},
            "adjudicated": None,
            "gold": 0,
            "level": "none",
        },
        {
            "run": "sys",
            "aspect": "support",
            "sentence": 2,
            "citation": 2,
            "doc_id": "b",
            "start": 0,
            "end": end_b,
            "judgements": {"anna": 0, "arno": 0},
            "adjudicated": None,
            "gold": 0,
            "level": "none",
        },
        {
            "run": "sys",
            "aspect": "needs_citation",
            "sentence": 3,
            "judgements": {"anna": 1, "arno": 1},
            "adjudicated": None,
            "gold": 1,
            "level": "yes",
        },
        {
            "run": "sys",
            "aspect": "crag",
            "judgements": {"anna": 3, "arno": 1},
            "adjudicated": 2,  # the lead's final value is the gold one
            "gold": 2,
            "level": "acceptable",
        },
    ]
    assert first["q2"]["answer_judgements"] == []
    frozen_rows = GoldAnswerJudgment.objects.filter(gold_set=frozen["v1"])
    assert not frozen_rows.filter(annotator="assessors").exists()
    second = lines(frozen["v2"])["q1"]["answer_judgements"]
    assert second[0]["judgements"] == {"anna": 0, "arno": 2} and second[0]["gold"] == 0
    assert (second[-1]["adjudicated"], second[-1]["gold"]) == (None, 1)
    assert len(DOC_A) > 46  # the cited spans above lie inside document a


def test_frozen_rows_cannot_be_changed(frozen):
    row = GoldAnswerJudgment.objects.filter(gold_set=frozen["v1"]).first()
    row.value = 0
    with pytest.raises(ValueError):
        row.save()


def test_the_workbook_has_a_sheet_per_kind_of_answer_judgement(frozen):
    book = workbook(frozen["v1"])
    names = ["answers nugget", "answers support", "answers needs_citation", "answers crag"]
    assert [n for n in book.sheetnames if n.startswith("answers ")] == names
    assert list(book["answers crag"].values) == [
        ("qid", "run", "gold", "level", "adjudicated", "anna", "arno"),
        ("q1", "sys", 2, "acceptable", 2, 3, 1),
    ]
    nuggets = list(book["answers nugget"].values)
    assert nuggets[0] == ("qid", "run", "nugget_id", "gold", "level", "adjudicated", "anna", "arno")
    assert nuggets[2] == ("q1", "sys", "n2", 1, "partial", None, 1, 2)
    support = list(book["answers support"].values)
    assert support[0][:7] == ("qid", "run", "sentence", "citation", "doc_id", "start", "end")
    assert support[2] == ("q1", "sys", 2, 1, "a", 17, 46, 0, "none", None, 1, 0)
    assert list(book["answers needs_citation"].values)[1] == ("q1", "sys", 3, 1, "yes", None, 1, 1)


def test_a_gold_set_without_answer_judgements_exports_as_before(answer_run):
    grade(answer_run["queries"]["q1"], answer_run["annotator"], answer_run["docs"]["a"], 0, 16, 2)
    project = answer_run["project"]
    gold_set = freeze_gold_set(project, "plain", policy=ConsensusPolicy())
    assert "answer_judgements" not in lines(gold_set)["q1"]
    assert not [n for n in workbook(gold_set).sheetnames if n.startswith("answers ")]


def test_a_query_with_answer_judgements_but_no_labels_has_its_gold_line(answer_run):
    """q1's answer is judged but nobody labelled q1: its JSONL line is there (empty
    rel_map and evidence) with the answer judgements; q2 (labels only) as before; q3
    (neither) has no line; the qrels list only labelled units."""
    anna = answer_run["annotator"]
    grade(answer_run["queries"]["q2"], anna, answer_run["docs"]["b"], 21, 45, 2)
    judge_q1(answer_run, anna, {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    gold_set = freeze_gold_set(answer_run["project"], "g", policy=ConsensusPolicy())
    found = lines(gold_set)
    assert sorted(found) == ["q1", "q2"]
    q1 = found["q1"]
    assert (q1["rel_map"], q1["evidence"], q1["gold_evidence"]) == ({}, [], [])
    assert q1["query"] == "How do wings make lift?"
    assert q1["gold_answer"] == "Wings make lift; flaps add lift."
    assert len(q1["answer_judgements"]) == 8
    assert q1["answer_judgements"][-1] | {"judgements": None} == {
        "run": "sys",
        "aspect": "crag",
        "judgements": None,
        "adjudicated": None,
        "gold": 3,
        "level": "perfect",
    }
    assert found["q2"]["rel_map"] == {"b": 2} and found["q2"]["answer_judgements"] == []
    qrels = render_export(build_export(gold_set, "documents"), "qrels").decode()
    assert qrels == "q2 0 b 2\n"


def test_versions_are_diffed_on_their_answer_judgements(frozen, login):
    from django.urls import reverse

    from answers.models import Citation
    from gold.versions import diff_gold_sets

    # v1 → v2: anna's n1 support → not (the gold value: the low median of not and
    # support, not); the lead's final CRAG grade cleared (gold: low median of perfect and
    # missing, missing).
    d = diff_gold_sets(frozen["v1"], frozen["v2"])["parts"]["answers"]
    assert (d["n_old"], d["n_new"], d["added"], d["removed"]) == (8, 8, [], [])
    assert [(r["qid"], r["run"], r["aspect"], r["target"], r["what"]) for r in d["changed"]] == [
        ("q1", "sys", "nugget", "n1", ["gold", "judgements"]),
        ("q1", "sys", "crag", "", ["gold", "adjudicated"]),
    ]
    nugget, crag = d["changed"]
    assert nugget["people"] == {"anna": [2, 0]}
    assert (nugget["old"]["level"], nugget["new"]["level"]) == ("support", "not")
    assert crag["people"] == {}
    assert (crag["old"]["adjudicated_level"], crag["new"]["adjudicated"]) == ("acceptable", None)
    assert (crag["old"]["gold"], crag["new"]["gold"]) == (2, 1)
    assert d["by_aspect"]["nugget"] == {"added": 0, "removed": 0, "changed": 1}
    # v2 → v3: both people's "needs a citation" on sentence 3 withdrawn (removed); anna
    # grades q2's citation full (added).
    answer = frozen["run"].answers.get(query__qid="q1")
    sentence = answer.sentences.get(number=3)
    for person in (frozen["annotator"], frozen["annotator2"]):
        change_judgment(
            answer=answer,
            annotator=person,
            target=Target(Aspect.NEEDS_CITATION, sentence.pk),
            value=None,
        )
    q2 = frozen["run"].answers.get(query__qid="q2")
    change_judgment(
        answer=q2,
        annotator=frozen["annotator"],
        target=Target(Aspect.SUPPORT, Citation.objects.get(answer=q2).pk),
        value=2,
    )
    v3 = freeze_gold_set(frozen["project"], "team", policy=ConsensusPolicy())
    d = diff_gold_sets(frozen["v2"], v3)["parts"]["answers"]
    assert (d["n_old"], d["n_new"], d["changed"]) == (8, 8, [])
    assert d["n_new"] - d["n_old"] == len(d["added"]) - len(d["removed"])
    assert [(r["qid"], r["aspect"], r["target"], r["new"]["level"]) for r in d["added"]] == [
        ("q2", "support", "1.1", "full")
    ]
    assert [(r["qid"], r["aspect"], r["target"], r["old"]["judgements"]) for r in d["removed"]] == [
        ("q1", "needs_citation", "3", {"anna": 1, "arno": 1})
    ]
    # The gold set page's diff shows the section, in English and in Chinese.
    client = login(frozen["owner"])
    url = reverse("gold:detail", args=["acme", frozen["v2"].pk])
    body = client.get(url, {"against": frozen["v1"].pk}).content.decode()
    assert 'id="answer-diff"' in body
    assert 'class="changed" data-qid="q1" data-aspect="nugget" data-target="n1"' in body
    assert "anna: support → not" in body and "<del>support</del> → not" in body
    zh = client.get(url, {"against": frozen["v1"].pk}, HTTP_ACCEPT_LANGUAGE="zh-CN")
    zh = zh.content.decode()
    assert "已评判的回答对象：8 → 8；新增 0，删除 0，修改 2。" in zh and "金标准值" in zh
    # A diff between versions without answer judgements has no such section.
    plain = diff_gold_sets(frozen["v1"], frozen["v1"])["parts"]["answers"]
    assert (plain["added"], plain["removed"], plain["changed"]) == ([], [], [])
