"""The demo's nuggets (written for it: data/demo/*/README.md) import cleanly into the
demo's documents and queries, cover at least 10 queries of each dataset, and every span
lies in a document the dataset's experts judged relevant to that query."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.importing import run_import
from annotator.models import Project
from nuggets.models import Nugget, NuggetEvidence

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cranfield", "lecard"])
def test_the_demo_nuggets_stand_on_relevant_documents(db, name):
    folder = DEMO / name
    project = Project.objects.create(slug=name, name=name)
    run_import("documents", project, folder / "documents.jsonl")
    run_import("queries", project, folder / "queries.jsonl")
    result = run_import("nuggets", project, folder / "nuggets.jsonl")
    assert result.created == sum(1 for _ in (folder / "nuggets.jsonl").open(encoding="utf-8"))
    queries = set(Nugget.objects.values_list("query__qid", flat=True))
    assert len(queries) >= 10
    relevant = {
        (q, d)
        for q, _zero, d, grade in (line.split() for line in (folder / "qrels.txt").open())
        if int(grade) >= 1
    }
    spans = NuggetEvidence.objects.values_list("nugget__query__qid", "document__doc_id")
    assert spans.count() >= 30 and set(spans) <= relevant
    lines = [json.loads(line) for line in (folder / "nuggets.jsonl").open(encoding="utf-8")]
    assert {n["importance"] for n in lines} == {"vital", "okay"}
    assert all(n["evidence"] for n in lines)  # each fact stands on a passage
