"""Imports: every format and kind, every bad line reported by number, nothing written on error."""

from __future__ import annotations

import json

import openpyxl
import pytest
from django.core.management import CommandError, call_command

from annotator.importing import locate, run_import
from annotator.models import (
    Chunk,
    Chunking,
    Document,
    Judgment,
    JudgmentHistory,
    Membership,
    Project,
    Query,
)
from formats import FileRejected

pytestmark = pytest.mark.django_db


def write(path, text: str | bytes):
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def jsonl(*rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def xlsx(path, header, *rows):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    workbook.save(path)
    return path


def snapshot(project):
    return (
        project.documents.count(),
        project.queries.count(),
        Chunking.objects.filter(project=project).count(),
        Chunk.objects.filter(chunking__project=project).count(),
        Judgment.objects.filter(query__project=project).count(),
        JudgmentHistory.objects.count(),
    )


def failure(kind, project, path, **kwargs) -> list[str]:
    before = snapshot(project)
    with pytest.raises(FileRejected) as raised:
        run_import(kind, project, path, **kwargs)
    assert snapshot(project) == before, "a failed import must write nothing"
    return raised.value.errors


@pytest.fixture
def project(personas):
    return personas["project"]


@pytest.fixture
def documents(project, tmp_path):
    path = write(
        tmp_path / "docs.jsonl",
        jsonl(
            {
                "doc_id": "d1",
                "title": "Wings",
                "text": "Lift of a wing.\nIn a  slipstream.",
                "author": "brenckman",
            },
            {"doc_id": "d2", "title": "手册", "pages": ["第一页：机翼。", "第二页 <b>&amp;</b>"]},
        ),
    )
    run_import("documents", project, path)
    return {d.doc_id: d for d in project.documents.all()}


@pytest.fixture
def queries(project, tmp_path, documents):
    path = write(
        tmp_path / "queries.csv",
        'qid,text,tags,reference_answer\nq1,How do wings lift?,"aero, wings",Pressure.\n'
        "q2,机翼的升力,,\n",
    )
    run_import("queries", project, path)
    return {q.qid: q for q in project.queries.all()}


# --- happy paths ----------------------------------------------------------------------


def test_documents_jsonl_with_pages_and_metadata(documents):
    d1, d2 = documents["d1"], documents["d2"]
    assert d1.metadata == {"author": "brenckman"} and d1.page_starts == []
    assert d2.text == "第一页：机翼。\n\n第二页 <b>&amp;</b>"
    assert d2.page_starts == [0, 9]
    assert d2.text[d2.page_starts[1] :].startswith("第二页")
    assert d2.page_of(10) == 2


def test_documents_csv_and_xlsx(project, tmp_path):
    csv_path = write(tmp_path / "d.csv", 'doc_id,title,pages\nc1,Pump,"[""one"", ""two""]"\nc2,,\n')
    assert run_import("documents", project, csv_path).created == 2
    assert Document.objects.get(doc_id="c1").page_starts == [0, 5]
    xlsx_path = xlsx(tmp_path / "d.xlsx", ["doc_id", "title", "text"], [7, "Seven", "text 7"])
    assert run_import("documents", project, xlsx_path).created == 1
    assert Document.objects.get(doc_id="7").text == "text 7"  # 7 (a number cell) → "7"


def test_queries_csv_with_tags(queries):
    assert queries["q1"].tags == ["aero", "wings"]
    assert queries["q1"].reference_answer == "Pressure."
    assert queries["q2"].text == "机翼的升力"


def test_chunks_by_offsets_and_by_text(project, tmp_path, documents):
    path = write(
        tmp_path / "chunks.jsonl",
        jsonl(
            {"chunk_id": "d1#0", "doc_id": "d1", "start": 0, "end": 15},
            # whitespace differs from the document ("\n" and a double space)
            {"chunk_id": "d1#1", "doc_id": "d1", "text": "wing. In a slipstream."},
            {"chunk_id": "d2#0", "doc_id": "d2", "text": "第二页 <b>&amp;</b>"},
        ),
    )
    result = run_import("chunks", project, path, options={"chunking": "mine"})
    assert result.created == 3
    chunks = {c.chunk_id: c for c in Chunk.objects.filter(chunking__name="mine")}
    assert chunks["d1#0"].text == "Lift of a wing."
    assert chunks["d1#1"].text == "wing.\nIn a  slipstream."
    assert chunks["d2#0"].text == "第二页 <b>&amp;</b>"


def test_locate_prefers_exact_match_after_hint():
    text = "abc abc abc"
    assert locate(text, "abc", 1) == (4, 7)
    assert locate(text, "a  b", 0) is None
    assert locate("x\ty  z", "x y z") == (0, 6)


def test_labels_from_qrels_go_to_a_pseudo_annotator_with_history(project, tmp_path, queries):
    path = write(tmp_path / "qrels.txt", "q1 0 d1 2\nq1 0 d2 0\nq2 0 d2 3\n")
    result = run_import(
        "labels", project, path, options={"annotator": "assessors", "level": "document"}
    )
    assert result.created == 3
    membership = Membership.objects.get(project=project, user__username="assessors")
    assert membership.is_pseudo and not membership.user.has_usable_password()
    labels = {
        (j.query.qid, j.document.doc_id): (j.grade, j.granularity, j.start, j.end)
        for j in Judgment.objects.all()
    }
    d1_length = len(Document.objects.get(doc_id="d1").text)
    assert labels[("q1", "d1")] == (2, "document", 0, d1_length)
    assert JudgmentHistory.objects.filter(event="create").count() == 3


def test_labels_from_gold_jsonl_at_chunk_level(project, tmp_path, queries, documents):
    chunks = write(
        tmp_path / "c.jsonl",
        jsonl(
            {"chunk_id": "a", "doc_id": "d1", "start": 0, "end": 5},
            {"chunk_id": "b", "doc_id": "d1", "start": 5, "end": 10},
            {"chunk_id": "c", "doc_id": "d2", "start": 0, "end": 3},
        ),
    )
    run_import("chunks", project, chunks, options={"chunking": "c"})
    gold = write(
        tmp_path / "gold.jsonl",
        jsonl({"qid": "q1", "gold_evidence": ["a", "b"], "rel_map": {"b": 3, "c": 0}}),
    )
    result = run_import(
        "labels",
        project,
        gold,
        options={"annotator": "llm-judge", "level": "chunk", "chunking": "c"},
    )
    assert result.created == 3
    grades = {j.chunk.chunk_id: j.grade for j in Judgment.objects.select_related("chunk")}
    assert grades == {"a": 1, "b": 3, "c": 0}


# --- bad input: clear errors by line, nothing written ------------------------------------


def test_every_bad_document_line_is_reported(project, tmp_path, documents):
    path = write(
        tmp_path / "bad.jsonl",
        jsonl({"doc_id": "ok", "text": "fine"})
        + '{"doc_id": "x", "text": \n'
        + jsonl(
            {"doc_id": "d1", "text": "exists already"},
            {"title": "no id"},
            {"doc_id": "ok", "text": "repeat"},
            {"doc_id": "p", "pages": "not a list"},
            {"doc_id": "q", "text": "a", "pages": ["b"]},
        )
        + "[1, 2]\n",
    )
    errors = failure("documents", project, path)
    assert errors[0].startswith("line 2: malformed JSON")
    assert errors[1:] == [
        "line 3: document 'd1' already exists in this project",
        "line 4: missing doc_id",
        "line 5: document 'ok' repeats line 1",
        "line 6: pages must be a list of page texts",
        "line 7: give either text or pages, not both",
        "line 8: expected a JSON object {...}",
    ]
    assert not Document.objects.filter(doc_id="ok").exists()


def test_file_level_problems(project, tmp_path, settings):
    assert failure("documents", project, write(tmp_path / "e.jsonl", "")) == ["the file is empty"]
    latin1 = write(tmp_path / "l.csv", "doc_id,text\n1,caf\xe9\n".encode("latin-1"))
    assert failure("documents", project, latin1)[0].startswith("the file is not UTF-8 text")
    fake = write(tmp_path / "f.xlsx", b"\x00\x01 not a workbook")
    assert failure("documents", project, fake) == ["the file is not an Excel workbook (.xlsx)"]
    settings.ASSAY_MAX_UPLOAD_BYTES = 10
    big = write(tmp_path / "b.jsonl", jsonl({"doc_id": "1", "text": "long enough"}))
    assert "over the limit of 10 bytes" in failure("documents", project, big)[0]
    assert failure("documents", project, big, format="parquet")[0].startswith(
        "unknown format 'parquet'"
    )


def test_bad_csv_rows(project, tmp_path):
    path = write(tmp_path / "q.csv", "qid,text\nq1,ok\nq2\nq3,a,extra\nq1,again\n")
    assert failure("queries", project, path) == [
        "line 3: missing query text",
        "line 4: 3 values but the header has 2 columns",
        "line 5: query 'q1' repeats line 2",
    ]


def test_bad_xlsx_rows_name_the_sheet_row(project, tmp_path):
    path = xlsx(tmp_path / "q.xlsx", ["qid", "text"], ["q1", "fine"], [None, "no id"], ["q3", None])
    assert failure("queries", project, path) == [
        "line 3: missing qid",
        "line 4: missing query text",
    ]


def test_chunks_that_cannot_be_placed(project, tmp_path, documents):
    path = write(
        tmp_path / "c.jsonl",
        jsonl(
            {"chunk_id": "1", "doc_id": "d1", "text": "not in the document"},
            {"chunk_id": "2", "doc_id": "zz", "start": 0, "end": 1},
            {"chunk_id": "3", "doc_id": "d1", "start": 5, "end": 500},
            {"chunk_id": "4", "doc_id": "d1", "start": "a", "end": 3},
            {"chunk_id": "5", "doc_id": "d1"},
        ),
    )
    assert failure("chunks", project, path, options={"chunking": "x"}) == [
        "line 1: chunk text not found in document 'd1'",
        "line 2: unknown document 'zz'",
        "line 3: span [5, 500) is not inside document 'd1' (length 33)",
        "line 4: start must be a whole number, not 'a'",
        "line 5: give start and end, or the chunk text",
    ]
    assert not Chunking.objects.filter(name="x").exists()


def test_bad_labels(project, tmp_path, queries):
    path = write(
        tmp_path / "qrels.txt",
        "q1 0 d1 1\nq9 0 d1 1\nq1 0 nope 2\nq2 0 d1 5\nq1 0 d1 2\nq1 0 d2\nq2 0 d2 x\n",
    )
    errors = failure("labels", project, path, options={"annotator": "a", "level": "document"})
    assert errors == [
        "line 2: unknown query id 'q9'",
        "line 3: unknown document id 'nope'",
        "line 4: grade must be 0, 1, 2 or 3, not 5",
        "line 5: item 'd1' appears again for query 'q1' (first on line 1)",
        "line 6: expected 4 columns 'qid iteration docid grade', found 3",
        "line 7: grade must be a whole number, not 'x'",
    ]
    assert not Membership.objects.filter(user__username="a").exists()


def test_labels_cannot_be_attributed_to_a_real_account_outside_the_project(
    project, tmp_path, queries, personas
):
    path = write(tmp_path / "qrels.txt", "q1 0 d1 1\n")
    errors = failure("labels", project, path, options={"annotator": "otto", "level": "document"})
    assert "a person who logs in" in errors[0]


def test_importing_labels_twice_is_refused(project, tmp_path, queries):
    path = write(tmp_path / "qrels.txt", "q1 0 d1 1\n")
    options = {"annotator": "assessors", "level": "document"}
    run_import("labels", project, path, options=options)
    assert failure("labels", project, path, options=options) == [
        "line 1: assessors already has a label for q1 / d1"
    ]


# --- commands ------------------------------------------------------------------------


def test_commands_share_the_import_path(personas, tmp_path, capsys):
    call_command("create_project", "wiki", "--name", "Wiki", "--owner", "alice")
    project = Project.objects.get(slug="wiki")
    assert project.memberships.get().user.username == "alice"
    docs = write(tmp_path / "d.jsonl", jsonl({"doc_id": "1", "text": "alpha beta gamma"}))
    call_command("import_documents", "wiki", str(docs))
    chunks = write(tmp_path / "c.csv", "chunk_id,doc_id,text\n1#0,1,beta gamma\n")
    call_command("import_chunks", "wiki", str(chunks), "--chunking", "w", "--param", "size=2")
    queries = write(tmp_path / "q.jsonl", jsonl({"qid": "1", "text": "gamma?"}))
    call_command("import_queries", "wiki", str(queries))
    labels = write(tmp_path / "l.qrels", "1 0 1#0 3\n")
    call_command(
        "import_labels",
        "wiki",
        str(labels),
        "--annotator",
        "judge",
        "--level",
        "chunk",
        "--chunking",
        "w",
    )
    out = capsys.readouterr().out
    assert "wiki: 1 documents imported" in out and "wiki: 1 labels imported (judge)" in out
    chunk = Chunk.objects.get(chunking__project=project)
    assert (chunk.start, chunk.end, chunk.chunking.parameters) == (6, 16, {"size": "2"})
    assert Judgment.objects.get(query__project=project).grade == 3


def test_command_errors_list_lines(personas, tmp_path):
    bad = write(tmp_path / "q.jsonl", '{"qid": "1"}\nnot json\n')
    with pytest.raises(CommandError) as raised:
        call_command("import_queries", "acme", str(bad))
    message = str(raised.value)
    assert "nothing imported" in message
    assert "line 1: missing query text" in message and "line 2: malformed JSON" in message
    assert not Query.objects.exists()
    with pytest.raises(CommandError, match="no project with slug 'nope'"):
        call_command("import_queries", "nope", str(bad))
    with pytest.raises(CommandError, match="--level chunk needs --chunking"):
        call_command("import_labels", "acme", str(bad), "--annotator", "x", "--level", "chunk")
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_project", "acme", "--name", "A", "--owner", "alice")
