"""``freeze_gold`` and ``disagreements``: rows, options and bad arguments; units after mapping."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotator.evidence import Evidence
from annotator.importing import run_import
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document
from gold.export import build_export
from gold.models import GoldSet
from gold.services import ConsensusPolicy, adjudicate, freeze_gold_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def overlapping(personas, corpus, tmp_path):
    """anna and arno mark overlapping but different passages of d1 (3 and 1); the imported
    assessors grade the whole of d1 and of an empty document."""
    project, document, query = personas["project"], corpus["document"], corpus["query"]
    halves = Chunking.objects.create(project=project, name="halves")
    middle = len(document.text) // 2
    Chunk.objects.create(chunking=halves, chunk_id="h0", document=document, start=0, end=middle)
    Chunk.objects.create(
        chunking=halves, chunk_id="h1", document=document, start=middle, end=len(document.text)
    )
    Document.objects.create(project=project, doc_id="empty", text="")
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(document, 0, 10),
        grade=3,
    )
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(document, 2, 6),
        grade=1,  # anna's own labels collapse: her grade of h0 is 3
    )
    change_label(
        query=query,
        annotator=personas["annotator2"],
        evidence=Evidence.for_passage(document, 5, 20),
        grade=1,
    )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2\nq1 0 empty 1\n")
    run_import("labels", project, qrels, options={"annotator": "assessors", "level": "document"})
    return {"query": query, "document": document}


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_disagreements_are_found_on_units_not_identical_spans(overlapping):
    rows = [
        json.loads(line) for line in run("disagreements", "acme", "--level", "halves").splitlines()
    ]
    assert rows == [{"qid": "q1", "unit": "h0", "grades": {"anna": 3, "arno": 1}, "resolved": None}]
    documents = run("disagreements", "acme", "--level", "documents", "--format", "csv")
    assert documents.splitlines() == ["qid,unit,anna,arno,resolved", "q1,d1,3,1,"]


def test_disagreements_options_and_resolution(overlapping, personas):
    named = run("disagreements", "acme", "--level", "documents", "--annotators", "anna,assessors")
    assert json.loads(named) == {
        "qid": "q1",
        "unit": "d1",
        "grades": {"anna": 3, "assessors": 2},
        "resolved": None,
    }
    # Nobody disagrees with themselves: one annotator alone yields nothing.
    assert run("disagreements", "acme", "--level", "halves", "--annotators", "anna") == ""
    assert run("disagreements", "acme", "--level", "halves", "--rule", "spread2") != ""
    assert run("disagreements", "acme", "--level", "halves", "--rule", "relevance") == ""
    adjudicate(
        query=overlapping["query"],
        evidence=Evidence.for_chunk(Chunk.objects.get(chunk_id="h0")),
        grade=2,
        reason="the lift sentence answers in part",
        adjudicator=personas["adjudicator"],
    )
    resolved = json.loads(run("disagreements", "acme", "--level", "halves"))
    assert resolved["resolved"] == 2
    # Resolving h0 settles h0 only: at document level d1 is still open.
    assert json.loads(run("disagreements", "acme", "--level", "documents"))["resolved"] is None


@pytest.mark.parametrize(
    "args, message",
    [
        (("nope", "--level", "documents"), "no project"),
        (("acme", "--level", "chunks-9"), "no level 'chunks-9'"),
        (("acme", "--level", "documents", "--annotators", "anna,zed"), "unknown: zed"),
        (("acme", "--level", "documents", "--annotators", ","), "name members"),
        (("acme", "--level", "documents", "--mapping", "most"), "unknown mapping rule"),
        (("acme", "--level", "documents", "--format", "xml"), "invalid choice"),
        (("acme",), "--level"),
    ],
)
def test_disagreements_bad_arguments(overlapping, args, message):
    with pytest.raises(CommandError, match=message):
        run("disagreements", *args)


def test_freeze_gold_people_only_by_default(overlapping):
    out = run("freeze_gold", "acme", "--name", "team", "--rule", "max")
    gold_set = GoldSet.objects.get(name="team")
    assert gold_set.policy == {
        "rule": "max",
        "min_annotators": 1,
        "adjudicated_first": True,
        "sources": ["people"],
        "annotators": ["anna", "arno"],
        "humans_only": True,
        "mapping": "any_overlap",
    }
    assert "team v1: 1 queries, 3 labels" in out and '"annotators": ["anna", "arno"]' in out
    assert set(gold_set.labels.values_list("annotator", flat=True)) == {"anna", "arno"}
    explicit = run("freeze_gold", "acme", "--name", "team", "--humans-only")
    assert "team v2" in explicit
    assert GoldSet.objects.get(name="team", version=2).policy["annotators"] == ["anna", "arno"]


def test_freeze_gold_named_annotators_rule_and_minimum(overlapping):
    run(
        "freeze_gold", "acme", "--name", "assessed", "--annotators", "assessors",
        "--rule", "min", "--min-annotators", "1",
    )  # fmt: skip
    gold_set = GoldSet.objects.get(name="assessed")
    assert gold_set.policy["annotators"] == ["assessors"]
    assert not gold_set.policy["humans_only"]
    # The empty document's judgement reaches its unit at document level.
    export = build_export(gold_set, "documents")
    assert export.queries[0].rel_map == {"d1": 2, "empty": 1}
    run("freeze_gold", "acme", "--name", "two", "--min-annotators", "2", "--rule", "min")
    two = build_export(GoldSet.objects.get(name="two"), "halves")
    assert two.queries[0].rel_map == {"h0": 1}  # h1 rests on nobody, h0 on anna and arno
    assert two.policy["min_annotators"] == 2 and two.policy["mapping"] == "any_overlap"


@pytest.mark.parametrize(
    "args, message",
    [
        (("nope", "--name", "g"), "no project"),
        (
            ("acme", "--name", "g", "--annotators", "anna,zed"),
            "not annotators of this project: zed",
        ),
        (("acme", "--name", "g", "--annotators", " , "), "at least one name"),
        (("acme", "--name", "g", "--annotators", "anna", "--humans-only"), "not allowed with"),
        (("acme", "--name", "g", "--rule", "mean"), "invalid choice"),
        (("acme", "--name", "g", "--min-annotators", "0"), "min_annotators must be at least 1"),
        (("acme", "--name", "g", "--annotators", "vera"), "have no labels"),
        (("acme", "--name", "g", "--mapping", "most"), "unknown mapping rule"),
        (("acme",), "--name"),
    ],
)
def test_freeze_gold_bad_arguments_write_nothing(overlapping, args, message):
    with pytest.raises(CommandError, match=message):
        run("freeze_gold", *args)
    assert not GoldSet.objects.exists()


def test_evidence_and_rel_map_never_disagree(overlapping, personas):
    """Every evidence entry grades its units exactly as rel_map does; every unit is backed."""
    gold_set = freeze_gold_set(
        personas["project"], "g", policy=ConsensusPolicy("majority"), annotators=None
    )
    for level in ("documents", "pages", "halves", "c256"):
        export = build_export(gold_set, level)
        assert_consistent(export)
    d1 = build_export(gold_set, "documents").queries[0]
    assert d1.rel_map == {"d1": 3}  # majority of anna 3 and arno 1: tie to the higher
    (evidence,) = d1.evidence
    assert (evidence["start"], evidence["end"], evidence["grade"]) == (0, 10, 3)


def assert_consistent(export) -> None:
    for query in export.queries:
        backed = set()
        for item in query.evidence:
            assert item["relevant"] == (item["grade"] >= export.threshold)
            for unit in item["units"]:
                assert query.rel_map[unit] == item["grade"], (query.qid, unit)
                backed.add(unit)
        assert backed == set(query.rel_map), query.qid


def test_the_projects_mapping_setting_is_the_default_everywhere(overlapping, personas):
    """A lead who set the project's mapping gets it in disagreements, freezing and the
    dashboards without naming it again (no path falls back to any_overlap)."""
    from metrics.evaluation import evaluation_setting
    from numerics.mapping import MappingPolicy

    project = personas["project"]
    project.mapping = "chunk_overlap>=0.5"
    project.save()
    # Each passage covers under half of h0, so under the project's policy none reaches it.
    assert run("disagreements", "acme", "--level", "halves") == ""
    named = run("disagreements", "acme", "--level", "halves", "--mapping", "any_overlap")
    assert json.loads(named)["unit"] == "h0"
    run("freeze_gold", "acme", "--name", "team")
    assert GoldSet.objects.get(name="team").policy["mapping"] == "chunk_overlap>=0.5"
    setting = evaluation_setting(project, level="halves")
    assert str(setting.mapping) == "chunk_overlap>=0.5"
    assert setting.gold.grades.policy["mapping"] == "chunk_overlap>=0.5"
    # Only the assessors' whole-document label covers each half enough to reach it.
    assert setting.gold.grades.n_annotators.tolist() == [1, 1]
    assert evaluation_setting(
        project, level="halves", mapping=MappingPolicy.parse("any_overlap")
    ).gold.grades.n_annotators.tolist() == [3, 1]
