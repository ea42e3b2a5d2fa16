"""Frozen gold sets keep the nuggets as they were: in the gold JSONL (pages, command, API),
the workbook, export_nuggets --gold, and the diff between two versions."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse
from openpyxl import load_workbook

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Document, Query
from api.models import ApiToken
from gold.export import build_export, render_export
from gold.services import ConsensusPolicy, freeze_gold_set
from gold.versions import diff_gold_sets
from nuggets.changes import Span, create_nugget, delete_nugget, edit_nugget

TEXT = "Lift comes from the pressure difference over the wing. Stall follows separation."


@pytest.fixture
def frozen(personas):
    project = personas["project"]
    doc = Document.objects.create(project=project, doc_id="a", text=TEXT)
    q1 = Query.objects.create(project=project, qid="q1", text="Lift?")
    q2 = Query.objects.create(project=project, qid="q2", text="Stall?")
    for query in (q1, q2):
        change_label(
            query=query,
            annotator=personas["annotator"],
            evidence=Evidence.for_document(doc),
            grade=3,
        )
    owner = personas["owner"]
    n1 = create_nugget(
        q1,
        text="Lift from pressure",
        importance="vital",
        evidence=[Span(doc, 0, 54)],
        changed_by=owner,
    )
    n2 = create_nugget(
        q1, text="Stall", importance="okay", evidence=[Span(doc, 55, 80)], changed_by=owner
    )
    v1 = freeze_gold_set(project, "team", policy=ConsensusPolicy(), created_by=owner)
    # After freezing, the live nuggets move on; version 1 keeps them as they were.
    edit_nugget(n1, changed_by=owner, text="Lift comes from a pressure difference")
    delete_nugget(n2, changed_by=owner)
    create_nugget(
        q2,
        text="Separation causes stall",
        importance="vital",
        evidence=[Span(doc, 55, 80)],
        changed_by=owner,
    )
    v2 = freeze_gold_set(project, "team", policy=ConsensusPolicy(), created_by=owner)
    return {"v1": v1, "v2": v2, "doc": doc, **personas}


def lines(gold_set):
    data = render_export(build_export(gold_set, "documents"), "jsonl").decode()
    return {line["qid"]: line for line in map(json.loads, data.splitlines())}


def test_the_gold_jsonl_carries_each_querys_nuggets_as_frozen(frozen):
    first = lines(frozen["v1"])
    assert first["q1"]["nuggets"] == [
        {
            "id": "n1",
            "text": "Lift from pressure",
            "importance": "vital",
            "evidence": [{"doc_id": "a", "start": 0, "end": 54}],
        },
        {
            "id": "n2",
            "text": "Stall",
            "importance": "okay",
            "evidence": [{"doc_id": "a", "start": 55, "end": 80}],
        },
    ]
    assert first["q2"]["nuggets"] == []
    second = lines(frozen["v2"])
    assert [n["text"] for n in second["q1"]["nuggets"]] == ["Lift comes from a pressure difference"]
    assert second["q2"]["nuggets"][0]["id"] == "n1"
    assert list(first["q1"])[-3:] == ["nuggets", "level", "policy"]


def test_the_workbook_has_a_nuggets_sheet(frozen):
    book = load_workbook(io.BytesIO(render_export(build_export(frozen["v1"], "documents"), "xlsx")))
    rows = list(book["nuggets"].values)
    assert rows[0] == ("qid", "nugget_id", "text", "importance", "doc_id", "start", "end")
    assert rows[1:] == [
        ("q1", "n1", "Lift from pressure", "vital", "a", 0, 54),
        ("q1", "n2", "Stall", "okay", "a", 55, 80),
    ]


def test_versions_are_diffed_on_their_nuggets(frozen, login):
    diff = diff_gold_sets(frozen["v1"], frozen["v2"])["parts"]["nuggets"]
    assert (diff["n_old"], diff["n_new"]) == (2, 2)
    assert [(r["qid"], r["id"]) for r in diff["added"]] == [("q2", "n1")]
    assert [(r["qid"], r["id"]) for r in diff["removed"]] == [("q1", "n2")]
    assert [(r["qid"], r["nugget_id"], r["what"]) for r in diff["changed"]] == [
        ("q1", "n1", ["text"])
    ]
    url = reverse("gold:detail", args=["acme", frozen["v2"].pk])
    body = login(frozen["owner"]).get(url, {"against": frozen["v1"].pk}).content.decode()
    assert 'id="nugget-diff"' in body and "Separation causes stall" in body


def test_export_nuggets_from_a_gold_set_and_the_api_gold_export(frozen, client, tmp_path):
    out = tmp_path / "v1.jsonl"
    call_command("export_nuggets", "acme", "--gold", "team", "--gold-version", "1", "-o", str(out))
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(n["qid"], n["nugget_id"], n["text"]) for n in exported] == [
        ("q1", "n1", "Lift from pressure"),
        ("q1", "n2", "Stall"),
    ]
    _token, secret = ApiToken.create_for(frozen["owner"], "ci")
    response = client.get(
        reverse("api:gold_export", args=["acme", frozen["v1"].pk]),
        {"format": "jsonl"},
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    api_lines = {
        json.loads(line)["qid"]: json.loads(line) for line in response.content.decode().splitlines()
    }
    assert api_lines["q1"]["nuggets"] == lines(frozen["v1"])["q1"]["nuggets"]
