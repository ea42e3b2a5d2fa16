"""Nugget files: JSONL/CSV/XLSX round trips, every bad line refused by number with nothing
written, spans checked against the documents' text, ndeval qrels at a level."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotator.models import Document, Query
from formats import FileRejected
from nuggets.changes import Span, create_nugget
from nuggets.exporting import build_nugget_export, render
from nuggets.importing import load_nuggets
from nuggets.models import Nugget, NuggetEvidence, NuggetHistory

TEXT_A = "Lift comes from the pressure difference over the wing. Stall follows separation."
TEXT_B = "升力来自机翼上下的压力差。失速是气流分离的结果。"


@pytest.fixture
def nugget_project(personas):
    project = personas["project"]
    a = Document.objects.create(project=project, doc_id="a", text=TEXT_A)
    b = Document.objects.create(project=project, doc_id="b", text=TEXT_B)
    q1 = Query.objects.create(project=project, qid="q1", text="Where does lift come from?")
    q2 = Query.objects.create(project=project, qid="q2", text="升力从哪里来？")
    Query.objects.create(project=project, qid="q10", text="No nuggets here")
    return {"project": project, "a": a, "b": b, "q1": q1, "q2": q2, **personas}


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load(project, path, **options):
    return load_nuggets(
        project, path, fmt=path.suffix[1:], options=options, progress=None, source_name=path.name
    )


def state():
    return sorted(
        Nugget.objects.values_list("query__qid", "nugget_id", "text", "importance", "order")
    ), sorted(
        NuggetEvidence.objects.values_list("nugget__nugget_id", "document__doc_id", "start", "end")
    )


def seed(n):
    owner = n["owner"]
    create_nugget(
        n["q1"],
        text="Lift comes from a pressure difference",
        importance="vital",
        evidence=[Span(n["a"], 0, 54)],
        changed_by=owner,
    )
    create_nugget(
        n["q1"],
        text="-stall follows separation (text starting like a formula)",
        importance="okay",
        evidence=[Span(n["a"], 55, 80), Span(n["b"], 13, 24)],
        changed_by=owner,
    )
    create_nugget(
        n["q2"],
        text="升力来自压力差",
        importance="vital",
        evidence=[Span(n["b"], 0, 12)],
        changed_by=owner,
    )
    create_nugget(n["q2"], text="没有证据的事实", importance="okay", changed_by=owner)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "xlsx"])
def test_round_trip_through_every_format(nugget_project, tmp_path, fmt):
    n = nugget_project
    seed(n)
    before = state()
    data = render(build_nugget_export(n["project"]), fmt)
    Nugget.objects.all().delete()
    path = tmp_path / f"nuggets.{fmt}"
    path.write_bytes(data)
    result = load(n["project"], path)
    assert result.created == 4
    assert state() == before
    # Each imported nugget has its creation in history, naming the file.
    assert (
        NuggetHistory.objects.filter(event="create", detail__import="nuggets." + fmt).count() == 4
    )


def test_export_lines_carry_the_import_fields_and_units_at_a_level(nugget_project):
    n = nugget_project
    seed(n)
    export = build_nugget_export(n["project"], level="documents")
    first = export.nuggets[0]
    assert first["qid"] == "q1" and first["nugget_id"] == "n1"
    assert first["evidence"] == [{"doc_id": "a", "start": 0, "end": 54, "text": TEXT_A[:54]}]
    assert first["units"] == ["a"]
    assert export.nuggets[1]["units"] == ["a", "b"]
    assert export.nuggets[-1]["units"] == []  # no evidence: no unit covers it
    ndeval = render(export, "ndeval").decode().splitlines()
    assert ndeval == ["q1 n1 a 2", "q1 n2 a 1", "q1 n2 b 1", "q2 n1 b 2"]


def test_every_bad_line_is_refused_by_number_and_nothing_is_written(nugget_project, tmp_path):
    n = nugget_project
    seed(n)
    before = state()
    history = NuggetHistory.objects.count()
    lines = [
        {"qid": "q1", "nugget_id": "x1", "text": "fine", "importance": "vital"},  # 1 ok
        {"qid": "nope", "nugget_id": "x2", "text": "t", "importance": "okay"},  # 2
        {"qid": "q1", "nugget_id": "x3", "text": "t", "importance": "important"},  # 3
        {"qid": "q1", "nugget_id": "x4", "text": "", "importance": "okay"},  # 4
        {
            "qid": "q1",
            "nugget_id": "x5",
            "text": "t",
            "importance": "okay",
            "evidence": [{"doc_id": "a", "start": 10, "end": 999}],
        },  # 5 outside
        {
            "qid": "q1",
            "nugget_id": "x6",
            "text": "t",
            "importance": "okay",
            "evidence": [{"doc_id": "zz", "start": 0, "end": 3}],
        },  # 6 unknown doc
        {
            "qid": "q1",
            "nugget_id": "x7",
            "text": "t",
            "importance": "okay",
            "evidence": [{"doc_id": "a", "start": 0, "end": 4, "text": "Drag"}],
        },  # 7 text differs
        {"qid": "q1", "nugget_id": "n1", "text": "t", "importance": "okay"},  # 8 exists
        {"qid": "q1", "nugget_id": "x1", "text": "again", "importance": "okay"},  # 9 repeats 1
        {"qid": "q1", "nugget_id": "x 10", "text": "t", "importance": "okay"},  # 10 space in id
        {
            "qid": "q1",
            "nugget_id": "x11",
            "text": "t",
            "importance": "okay",
            "evidence": [{"doc_id": "a", "start": 5, "end": 2}],
        },  # 11 end before start
        {
            "qid": "q1",
            "nugget_id": "x12",
            "text": "t",
            "importance": "okay",
            "evidence": "a 0 5",
        },  # 12 not a list
    ]
    body = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n{broken\n"
    path = write(tmp_path, "bad.jsonl", body)
    with pytest.raises(FileRejected) as refused:
        load(n["project"], path)
    numbers = [int(e.split(":")[0].split()[1]) for e in refused.value.errors]
    assert numbers == [2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13]
    assert state() == before and NuggetHistory.objects.count() == history
    # The existing id is found once the rest of the file is good.
    good = write(tmp_path, "clash.jsonl", json.dumps(lines[7]) + "\n")
    with pytest.raises(FileRejected, match="line 1: query 'q1' already has a nugget 'n1'"):
        load(n["project"], good)
    assert state() == before


def test_csv_rows_of_one_nugget_must_agree_and_spans_may_not_repeat(nugget_project, tmp_path):
    n = nugget_project
    body = (
        "qid,nugget_id,text,importance,doc_id,start,end\n"
        "q1,n1,Lift,vital,a,0,4\n"
        "q1,n1,Lift!,vital,a,5,9\n"  # 3: text differs from line 2
        "q1,n2,Stall,okay,a,55,60\n"
        "q1,n2,Stall,okay,a,55,60\n"  # 5: the same span again
        "q1,n3,Half,okay,a,,\n"  # 6: start/end missing with a doc_id
    )
    with pytest.raises(FileRejected) as refused:
        load(n["project"], write(tmp_path, "n.csv", body))
    assert [e.split(":")[0] for e in refused.value.errors] == ["line 3", "line 5", "line 6"]
    assert not Nugget.objects.exists()


def test_csv_nugget_over_several_rows_and_without_evidence(nugget_project, tmp_path):
    n = nugget_project
    body = (
        "qid,nugget_id,text,importance,doc_id,start,end\r\n"
        "q2,n1,升力来自压力差,vital,b,0,12\r\n"
        "q1,n1,Lift,VITAL,a,0,4\r\n"
        "q2,n1,升力来自压力差,vital,b,13,24\r\n"
        "q2,n2,没有证据,okay,,,\r\n"
    )
    assert load(n["project"], write(tmp_path, "n.csv", body)).created == 3
    nugget = Nugget.objects.get(query__qid="q2", nugget_id="n1")
    assert list(nugget.evidence.values_list("start", "end")) == [(0, 12), (13, 24)]
    assert Nugget.objects.get(query__qid="q2", nugget_id="n2").evidence.count() == 0
    assert list(Nugget.objects.filter(query__qid="q2").values_list("order", flat=True)) == [0, 1]


def test_commands_round_trip_and_refuse(nugget_project, tmp_path, capsys):
    n = nugget_project
    seed(n)
    out = tmp_path / "out.jsonl"
    call_command("export_nuggets", "acme", "-o", str(out))
    Nugget.objects.all().delete()
    call_command("import_nuggets", "acme", str(out), "--author", "adam")
    assert Nugget.objects.count() == 4 and set(
        Nugget.objects.values_list("author__username", flat=True)
    ) == {"adam"}
    with pytest.raises(CommandError, match="no lead 'anna'"):
        call_command("import_nuggets", "acme", str(out), "--author", "anna")
    call_command("export_nuggets", "acme", "--format", "ndeval")
    assert "q1 n1 a 2" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no level"):
        call_command("export_nuggets", "acme", "--format", "ndeval", "--level", "nope")
