"""The gold set's Excel file: natural qid order, granularity, agreement figures, layout."""

from __future__ import annotations

import io

import openpyxl
import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Document, Query
from gold.agreement import project_agreement
from gold.export import build_export, render_export
from gold.services import ConsensusPolicy, freeze_gold_set
from numerics.id_order import natural_key
from numerics.mapping import MappingPolicy

pytestmark = pytest.mark.django_db

ANNA = [3, 0, 2, 1, 3, 0]
ARNO = [3, 1, 2, 0, 3, 0]


@pytest.fixture
def book(personas, corpus):
    """Queries 10, 2 and 1 (created in that order), each graded on two documents by anna
    and arno; anna also marks a passage of d1 for query 1."""
    project = personas["project"]
    d1 = corpus["document"]
    d2 = Document.objects.create(project=project, doc_id="d2", title="", text="other text")
    queries = [
        Query.objects.create(project=project, qid=q, text=f"q {q}") for q in ("10", "2", "1")
    ]
    items = [(q, d) for q in queries for d in (d1, d2)]
    for (query, document), a, b in zip(items, ANNA, ARNO, strict=True):
        for who, grade in (("annotator", a), ("annotator2", b)):
            change_label(
                query=query,
                annotator=personas[who],
                evidence=Evidence.for_document(document),
                grade=grade,
            )
    change_label(
        query=queries[2],
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(d1, 0, 5),
        grade=3,
    )
    gold_set = freeze_gold_set(project, "g", policy=ConsensusPolicy("max"))
    export = build_export(gold_set, "documents")
    return openpyxl.load_workbook(io.BytesIO(render_export(export, "xlsx")))


def rows(sheet):
    """The sheet's rows, each without its trailing empty cells."""
    found = []
    for row in sheet.iter_rows():
        values = [c.value for c in row]
        while values and values[-1] is None:
            values.pop()
        found.append(values)
    return found


def test_natural_key_orders_numbers_by_value():
    ids = ["q10", "100", "q2", "9", "10", "q1", "a"]
    assert sorted(ids, key=natural_key) == ["9", "10", "100", "a", "q1", "q2", "q10"]


def test_qids_in_natural_order_on_every_sheet(book):
    assert [r[0] for r in rows(book["queries"])[1:]] == ["1", "2", "10"]
    grades = [r[0] for r in rows(book["grades"])[1:]]
    assert grades == sorted(grades, key=natural_key) and grades[0] == "1"
    evidence = [r[0] for r in rows(book["evidence"])[1:]]
    assert evidence == sorted(evidence, key=natural_key)


def test_evidence_rows_say_their_granularity(book):
    evidence = rows(book["evidence"])
    column = evidence[0].index("granularity")
    kinds = {r[column] for r in evidence[1:] if r[0] == "1"}
    assert kinds == {"document", "passage"}


def test_agreement_sheet_holds_the_agreement_page_figures(personas, book):
    sheet = rows(book["agreement"])
    assert sheet[0] == ["coefficient", "value", "reading", "rests on"]
    assert not any("not computed" in str(cell) for row in sheet for cell in row)
    page = project_agreement(personas["project"], "documents", MappingPolicy()).summary
    by_name = {r[0]: r for r in sheet if r}
    assert by_name["items"][1] == page["n_items"] == 6
    assert by_name["Fleiss' kappa"][1] == round(page["fleiss_kappa"]["value"], 3)
    (pair,) = page["pairs"]
    row = by_name["anna × arno"]
    assert row[1] == pair["n"] == 6
    assert row[2] == round(pair["cohen_kappa"], 3) and row[2] is not None
    assert row[4] == round(pair["cohen_kappa_linear"], 3)
    start = sheet.index(["qid", "percent agreement", "alpha nominal", "alpha ordinal", "items"])
    assert [r[0] for r in sheet[start + 1 :]] == ["1", "2", "10"]


def test_header_rows_are_frozen_and_columns_sized(book):
    for name in ("queries", "evidence", "grades", "agreement"):
        sheet = book[name]
        assert sheet.freeze_panes == "A2", name
        assert sheet["A1"].font.bold, name
        assert sheet.column_dimensions["A"].width >= 12, name
    assert book["evidence"].column_dimensions["J"].width >= 60  # the text column
