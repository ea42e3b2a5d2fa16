"""Gold-set exports: levels via span mapping, three formats, owners only, and a roundtrip."""

from __future__ import annotations

import io
import json

import openpyxl
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.importing import run_import
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from gold.export import build_export, render_export
from gold.services import ConsensusPolicy, adjudicate, freeze_gold_set
from numerics.mapping import MappingPolicy

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled(personas, corpus):
    """Two chunks over the document; anna and arno disagree on one, arno marks a passage."""
    project, document, query = personas["project"], corpus["document"], corpus["query"]
    two = Chunking.objects.create(project=project, name="halves")
    middle = len(document.text) // 2
    first = Chunk.objects.create(
        chunking=two, chunk_id="h0", document=document, start=0, end=middle
    )
    second = Chunk.objects.create(
        chunking=two, chunk_id="h1", document=document, start=middle, end=len(document.text)
    )
    other = Document.objects.create(project=project, doc_id="d2", title="", text="nothing here")
    q2 = Query.objects.create(project=project, qid="q2", text="第二个问题")
    change_label(
        query=query, annotator=personas["annotator"], evidence=Evidence.for_chunk(first), grade=3
    )
    change_label(
        query=query, annotator=personas["annotator2"], evidence=Evidence.for_chunk(first), grade=1
    )
    zh = document.text.index("机翼")
    change_label(
        query=query,
        annotator=personas["annotator2"],
        evidence=Evidence.for_passage(document, zh, zh + 2),
        grade=2,
    )
    change_label(
        query=q2, annotator=personas["annotator"], evidence=Evidence.for_document(other), grade=0
    )
    return {"first": first, "second": second, "zh": zh, "q2": q2}


def test_chunk_level_export_maps_spans_and_takes_consensus(personas, corpus, labelled):
    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy("max"))
    export = build_export(gold_set, "halves", MappingPolicy("contains"))
    by_qid = {q.qid: q for q in export.queries}
    # h0: max(3, 1) = 3; h1 holds the Chinese passage graded 2. q2 has no chunk of halves.
    assert by_qid["q1"].rel_map == {"h0": 3, "h1": 2}
    assert "q2" not in by_qid
    assert export.gold_evidence(by_qid["q1"]) == ["h0", "h1"]
    passage = next(e for e in by_qid["q1"].evidence if e["granularity"] == "passage")
    assert passage == {
        "doc_id": "d1",
        "granularity": "passage",
        "start": labelled["zh"],
        "end": labelled["zh"] + 2,
        "page": 2,
        "grade": 2,
        "relevant": True,
        "units": ["h1"],
        "text": "机翼",
    }
    documents = build_export(gold_set, "documents")
    assert {q.qid: q.rel_map for q in documents.queries} == {"q1": {"d1": 3}, "q2": {"d2": 0}}
    # Pages: h0 lies inside page 1, the passage inside page 2; d2 has no pages: one page.
    pages = build_export(gold_set, "pages", MappingPolicy("contains"))
    assert {q.qid: q.rel_map for q in pages.queries} == {
        "q1": {"d1#p1": 3, "d1#p2": 2},
        "q2": {"d2#p1": 0},
    }


def test_majority_and_adjudication(personas, corpus, labelled):
    policy = ConsensusPolicy("min", min_annotators=2)
    gold_set = freeze_gold_set(personas["project"], "g", policy=policy)
    rel = build_export(gold_set, "halves", MappingPolicy("contains")).queries[0].rel_map
    assert rel == {"h0": 1}  # h1 rests on one annotator only
    adjudicate(
        query=corpus["query"],
        evidence=Evidence.for_chunk(labelled["first"]),
        grade=2,
        reason="cites the lift equation",
        adjudicator=personas["adjudicator"],
    )
    gold_set = freeze_gold_set(personas["project"], "g", policy=policy)
    rel = build_export(gold_set, "halves", MappingPolicy("contains")).queries[0].rel_map
    assert rel == {"h0": 2}


def test_formats(personas, corpus, labelled):
    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy("max"))
    export = build_export(gold_set, "documents")
    lines = [json.loads(line) for line in render_export(export, "jsonl").decode().splitlines()]
    assert lines[0]["qid"] == "q1" and lines[0]["rel_map"] == {"d1": 3}
    assert lines[0]["policy"]["rule"] == "max" and lines[0]["policy"]["mapping"] == "any_overlap"
    assert lines[1]["gold_evidence"] == []  # judged, but not relevant
    assert render_export(export, "qrels").decode() == "q1 0 d1 3\nq2 0 d2 0\n"
    book = openpyxl.load_workbook(io.BytesIO(render_export(export, "xlsx")))
    # then the sheets of the set's parts (gold.parts): the nuggets app adds "nuggets"
    assert book.sheetnames == ["about", "queries", "evidence", "grades", "agreement", "nuggets"]
    assert [c.value for c in book["grades"][2]] == ["q1", "d1", 3]


def test_jsonl_roundtrip_reimports_identically(personas, corpus, labelled, tmp_path):
    project = personas["project"]
    gold_set = freeze_gold_set(project, "g", policy=ConsensusPolicy("max"))
    first = build_export(gold_set, "halves", MappingPolicy("contains"))
    path = tmp_path / "gold.jsonl"
    path.write_bytes(render_export(first, "jsonl"))
    run_import(
        "labels",
        project,
        path,
        options={"annotator": "gold-v1", "level": "chunk", "chunking": "halves"},
    )
    again = freeze_gold_set(project, "again", policy=ConsensusPolicy("max"), annotators=["gold-v1"])
    second = build_export(again, "halves", MappingPolicy("contains"))
    assert [(q.qid, q.rel_map) for q in second.queries] == [
        (q.qid, q.rel_map) for q in first.queries
    ]
    qrels = tmp_path / "gold.qrels"
    qrels.write_bytes(render_export(build_export(gold_set, "documents"), "qrels"))
    run_import("labels", project, qrels, options={"annotator": "qrels-v1", "level": "document"})
    from_qrels = freeze_gold_set(
        project, "q", policy=ConsensusPolicy("max"), annotators=["qrels-v1"]
    )
    assert render_export(build_export(from_qrels, "documents"), "qrels") == render_export(
        build_export(gold_set, "documents"), "qrels"
    )


def test_export_view_is_for_owners_and_validates(login, personas, corpus, labelled):
    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy())
    url = reverse("gold:export", args=["acme", gold_set.pk])
    owner = login(personas["owner"])
    page = owner.get(reverse("gold:detail", args=["acme", gold_set.pk])).content.decode()
    assert 'id="export-form"' in page and '<option value="halves">' in page
    response = owner.get(url, {"level": "halves", "format": "qrels", "mapping": "contains"})
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="g-v1-halves.qrels"'
    assert response.content.decode().splitlines() == ["q1 0 h0 3", "q1 0 h1 2"]
    for bad in [
        {"level": "nope", "format": "jsonl"},
        {"level": "halves", "format": "csv"},
        {"level": "halves", "format": "jsonl", "mapping": "chunk_overlap>=2"},
    ]:
        assert owner.get(url, bad).status_code == 400
    for persona in ("adjudicator", "annotator", "viewer"):
        assert (
            login(personas[persona]).get(url, {"level": "documents", "format": "jsonl"}).status_code
            == 403
        )


def test_export_command(personas, corpus, labelled, tmp_path, capsys):
    freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy("max"))
    call_command("export_gold", "acme", "g", "--level", "documents", "--format", "qrels")
    assert capsys.readouterr().out == "q1 0 d1 3\nq2 0 d2 0\n"
    out = tmp_path / "g.xlsx"
    call_command(
        "export_gold", "acme", "g", "--level", "halves", "--format", "xlsx", "--output", str(out)
    )
    assert openpyxl.load_workbook(out)["about"]["B3"].value == "halves"
