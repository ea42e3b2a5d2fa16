"""BEIR in and out: a BEIR folder imports at once (corpus, the split's queries, qrels with
their header), every qrels reader takes BEIR's TSV, and gold sets export as BEIR qrels."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.models import Document, Judgment, Query

pytestmark = pytest.mark.django_db


def beir_folder(tmp_path, qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq3\td3\t2\n"):
    folder = tmp_path / "scifact"
    (folder / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": f"d{i}", "title": f"Title {i}", "text": f"Text of document {i}.", "metadata": {}}
        for i in range(1, 4)
    ]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    queries = [{"_id": f"q{i}", "text": f"question {i}", "metadata": {}} for i in range(1, 5)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


def test_a_beir_folder_imports_whole(personas, tmp_path):
    # BEIR's files were refused everywhere ("expected 4 columns", "missing qid").
    project = personas["project"]
    out = StringIO()
    call_command("import_beir", project.slug, str(beir_folder(tmp_path)), stdout=out)
    assert set(Document.objects.filter(project=project).values_list("doc_id", flat=True)) >= {
        "d1",
        "d2",
        "d3",
    }
    assert Document.objects.get(project=project, doc_id="d2").title == "Title 2"
    qids = set(Query.objects.filter(project=project).values_list("qid", flat=True))
    assert {"q1", "q3"} <= qids and not {"q2", "q4"} & qids  # only the split's queries
    labels = Judgment.objects.filter(query__project=project, annotator__username="beir-test")
    assert sorted(labels.values_list("query__qid", "grade")) == [("q1", 0), ("q1", 1), ("q3", 2)]
    assert "3 documents imported" in out.getvalue()


def test_a_bad_qrels_line_writes_nothing(personas, tmp_path):
    project = personas["project"]
    before = Document.objects.count()
    folder = beir_folder(tmp_path, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td9\t1\n")
    with pytest.raises(CommandError, match="line 3: unknown document id 'd9'"):
        call_command("import_beir", project.slug, str(folder))
    assert Document.objects.count() == before
    with pytest.raises(CommandError, match=r"lacks qrels/dev\.tsv"):
        call_command("import_beir", project.slug, str(folder), "--split", "dev")


def test_every_qrels_reader_takes_beir_tsv(tmp_path):
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n")
    run = tmp_path / "run.tsv"
    run.write_text("q1\td2\t2.0\nq1\td1\t1.0\n")
    out = StringIO()
    call_command("trec_eval", "-m", "map", "-m", "num_rel", str(qrels), str(run), stdout=out)
    assert out.getvalue() == "num_rel               \tall\t1\nmap                   \tall\t0.5000\n"
    beir_run = tmp_path / "results.json"
    beir_run.write_text(json.dumps({"q1": {"d2": 2.0, "d1": 1.0}}))
    again = StringIO()
    call_command("trec_eval", "-m", "map", "-m", "num_rel", str(qrels), str(beir_run), stdout=again)
    assert again.getvalue() == out.getvalue()
