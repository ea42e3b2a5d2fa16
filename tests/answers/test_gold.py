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
