"""Passage and page labels come in (JSONL, CSV, XLSX) all or nothing; only for pseudo-annotators."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotator.importing import run_import
from annotator.models import Judgment, JudgmentHistory, Membership
from tests.test_importing import documents, failure, jsonl, project, queries, write, xlsx

pytestmark = pytest.mark.django_db
__all__ = ["documents", "project", "queries"]  # fixtures shared with test_importing


def test_passage_labels_from_jsonl_csv_and_xlsx(project, tmp_path, queries, documents):
    d1, d2 = documents["d1"], documents["d2"]
    path = write(
        tmp_path / "passages.jsonl",
        jsonl(
            {"qid": "q1", "doc_id": "d1", "start": 0, "end": 4, "grade": 3},
            {"qid": "q2", "doc_id": "d2", "start": 2, "end": 4, "grade": 0},
        ),
    )
    result = run_import(
        "labels", project, path, options={"annotator": "span-tool", "level": "passage"}
    )
    assert result.created == 2
    labels = Judgment.objects.filter(annotator__username="span-tool").order_by("grade")
    assert [(j.granularity, j.document_id, j.start, j.end, j.grade) for j in labels] == [
        ("passage", d2.pk, 2, 4, 0),
        ("passage", d1.pk, 0, 4, 3),
    ]
    assert JudgmentHistory.objects.filter(annotator__username="span-tool").count() == 2
    assert Membership.objects.get(user__username="span-tool").is_pseudo
    csv = write(tmp_path / "p.csv", "qid,doc_id,start,end,grade\nq1,d1,5,7,2\n")
    run_import("labels", project, csv, options={"annotator": "span-tool", "level": "passage"})
    book = xlsx(
        tmp_path / "p.xlsx", ["qid", "doc_id", "start", "end", "grade"], ["q2", "d1", 1, 3, 1]
    )
    run_import("labels", project, book, options={"annotator": "span-tool", "level": "passage"})
    texts = {d1.text[j.start : j.end] for j in Judgment.objects.filter(document=d1)}
    assert texts == {"Lift", "of", "if"}


def test_page_labels_take_the_page_offsets(project, tmp_path, queries, documents):
    d2 = documents["d2"]
    path = write(tmp_path / "pages.csv", "qid,doc_id,page,grade\nq1,d2,2,2\nq2,d2,1,1\n")
    run_import("labels", project, path, options={"annotator": "pager", "level": "page"})
    spans = {
        (j.query.qid, j.start, j.end, j.grade)
        for j in Judgment.objects.filter(annotator__username="pager")
    }
    (first, second) = d2.page_spans()
    assert spans == {("q1", *second, 2), ("q2", *first, 1)}
    assert set(Judgment.objects.values_list("granularity", flat=True)) == {"page"}


def test_every_bad_passage_line_is_reported_and_nothing_written(project, tmp_path, queries):
    path = write(
        tmp_path / "bad.jsonl",
        jsonl(
            {"qid": "q1", "doc_id": "d1", "start": 0, "end": 4, "grade": 3},
            {"qid": "q9", "doc_id": "d1", "start": 0, "end": 4, "grade": 3},
            {"qid": "q1", "doc_id": "nope", "start": 0, "end": 4, "grade": 3},
            {"qid": "q1", "doc_id": "d1", "start": 5, "end": 5, "grade": 1},
            {"qid": "q1", "doc_id": "d1", "start": 0, "end": 999, "grade": 1},
            {"qid": "q1", "doc_id": "d1", "start": "x", "end": 4, "grade": 1},
            {"qid": "q1", "doc_id": "d1", "start": 1, "end": 4, "grade": 7},
            {"qid": "q1", "doc_id": "d1", "start": 0, "end": 4, "grade": 2},
            {"qid": "q1", "start": 0, "end": 4, "grade": 2},
        ),
    )
    errors = failure("labels", project, path, options={"annotator": "x", "level": "passage"})
    assert errors == [
        "line 2: unknown query id 'q9'",
        "line 3: unknown document id 'nope'",
        "line 4: passage [5, 5) must have 0 <= start < end <= 33, the length of document 'd1'",
        "line 5: passage [0, 999) must have 0 <= start < end <= 33, the length of document 'd1'",
        "line 6: start must be a whole number, not 'x'",
        "line 7: grade must be 0, 1, 2 or 3, not 7",
        "line 8: item 'd1[0:4]' appears again for query 'q1' (first on line 1)",
        "line 9: each row needs qid, doc_id, start, end and grade",
    ]
    assert not Membership.objects.filter(user__username="x").exists()


def test_every_bad_page_line_is_reported(project, tmp_path, queries):
    path = write(
        tmp_path / "bad.csv",
        "qid,doc_id,page,grade\nq1,d2,3,1\nq1,d1,1,1\nq1,d2,0,1\nq1,d2,,1\n",
    )
    errors = failure("labels", project, path, options={"annotator": "x", "level": "page"})
    assert errors == [
        "line 2: document 'd2' has no page 3 (it has 2)",
        "line 3: document 'd1' has no page 1 (it has no page boundaries)",
        "line 4: document 'd2' has no page 0 (it has 2)",
        "line 5: page must be a whole number, not None",
    ]


def test_passage_labels_twice_are_refused(project, tmp_path, queries):
    path = write(tmp_path / "p.csv", "qid,doc_id,start,end,grade\nq1,d1,0,4,1\n")
    options = {"annotator": "tool", "level": "passage"}
    run_import("labels", project, path, options=options)
    assert failure("labels", project, path, options=options) == [
        "line 2: tool already has a label for q1 / d1[0:4]"
    ]


@pytest.mark.parametrize("persona", ["owner", "annotator", "viewer"])
def test_labels_never_go_into_a_members_own_labels(project, tmp_path, queries, personas, persona):
    name = personas[persona].username
    path = write(tmp_path / "p.csv", "qid,doc_id,start,end,grade\nq1,d1,0,4,1\n")
    errors = failure("labels", project, path, options={"annotator": name, "level": "passage"})
    assert errors == [
        f"{name!r} is a person who logs in; labels can be imported only for a "
        "pseudo-annotator or a new name (for example llm-judge)"
    ]
    assert not Judgment.objects.filter(annotator=personas[persona]).exists()


def test_import_labels_command_takes_passage_and_page(personas, project, tmp_path, queries):
    path = write(tmp_path / "p.jsonl", jsonl({"qid": "q1", "doc_id": "d2", "page": 1, "grade": 2}))
    call_command("import_labels", "acme", str(path), "--annotator", "pages", "--level", "page")
    assert Judgment.objects.get(annotator__username="pages").granularity == "page"
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("import_labels", "acme", str(path), "--annotator", "p", "--level", "span")
