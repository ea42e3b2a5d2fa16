"""Source quality in the gain: the rule is part of the evaluation setting, the measures
read the combined grades as they read relevance grades, and ``none`` changes nothing."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from gold.services import ConsensusPolicy, freeze_gold_set
from metrics.evaluation import MEASURE_CATALOGUE
from numerics.gain import GainRule
from quality.dimensions import offer_source_quality, set_gain_rule
from quality.grades import change_quality, source_for
from tests import test_metrics_views

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db

EVERY_MEASURE = [*MEASURE_CATALOGUE, "P(rel=3)@k", "infAP", "Judged@k"]
WEIGHT = "weight:source_quality:0,1,2,3"
MINIMUM = "minimum:source_quality:2"


@pytest.fixture
def graded(bench, personas):
    return grade_sources(bench, personas)


def grade_sources(bench, personas) -> dict:
    """Sites a, b, c over the six documents; a judged 3 and 0 (majority 3), b judged 1,
    c not judged; the last document names no site."""
    for index, doc in enumerate(bench["docs"]):
        doc.metadata = {"site": "abc"[index % 3]} if index < 5 else {}
        doc.save(update_fields=["metadata"])
    dimension = offer_source_quality(bench["project"])
    docs = bench["docs"]
    for persona, doc, grade in (
        ("annotator", docs[0], 3),
        ("annotator2", docs[3], 0),
        ("owner", docs[0], 3),
        ("annotator", docs[1], 1),
    ):
        change_quality(
            dimension=dimension,
            annotator=personas[persona],
            source=source_for(dimension, doc),
            grade=grade,
        )
    return {**bench, "dimension": dimension}


def _means(client, params) -> dict[str, dict[str, float]]:
    rows = client.get(url("dashboard", **params)).context["rows"]
    return {row["run"].name: {c["name"]: c["mean"] for c in row["cells"]} for row in rows}


def test_the_none_rule_leaves_every_number_unchanged(login, personas, bench):
    client = login(personas["owner"])
    params = {"level": "halves", "k": 3, "measure": EVERY_MEASURE}
    before = _means(client, params)  # no quality dimension yet
    graded = grade_sources(bench, personas)
    assert _means(client, params) == before
    # Quality grades exist now, and the rule is named, yet none of them enter the numbers.
    assert _means(client, {**params, "gain": "none"}) == before
    set_gain_rule(graded["project"], GainRule.parse(WEIGHT))
    assert _means(client, {**params, "gain": "none"}) == before
    assert _means(client, params) != before  # the project's rule now counts


def test_the_project_rule_is_the_default_and_is_shown(login, personas, graded):
    client = login(personas["owner"])
    set_gain_rule(graded["project"], GainRule.parse(MINIMUM))
    page = client.get(url("dashboard", level="documents", k=3))
    body = page.content.decode()
    assert 'data-gain="minimum:source_quality:2"' in body
    assert "non-relevant below Source quality Solid" in body
    assert "gain=minimum%3Asource_quality%3A2" in body  # links keep the rule
    qrels = client.get(url("qrels_file", level="documents"))
    assert json.loads(qrels["Assay-Policy"])["gain"] == MINIMUM


@pytest.mark.parametrize("gain", [WEIGHT, MINIMUM])
@pytest.mark.parametrize("level", ["halves", "documents"])
@pytest.mark.parametrize("frozen", [False, True])
def test_combined_numbers_equal_evaluate_on_the_exported_qrels(
    login, personas, graded, tmp_path, gain, level, frozen
):
    """Every measure the dashboard shows under a gain rule = ``manage.py evaluate`` on the
    qrels it exports (the combined gains) and the run's exported file."""
    client = login(personas["owner"])
    params = {"level": level, "k": 3, "measure": EVERY_MEASURE}
    if frozen:
        set_gain_rule(graded["project"], GainRule.parse(gain))
        gold_set = freeze_gold_set(graded["project"], "g", policy=ConsensusPolicy("median"))
        assert gold_set.policy["gain"] == gain and gold_set.policy["quality"]
        set_gain_rule(graded["project"], GainRule())  # the frozen set keeps its own
        params["gold"] = gold_set.pk
    else:
        params["gain"] = gain
    qrels = client.get(url("qrels_file", **params)).content
    grades = {int(line.split()[3]) for line in qrels.decode().splitlines()}
    if gain == WEIGHT:
        assert grades - {0, 1, 2, 3}, "weights of 2 and 3 make gains above 3"
    (tmp_path / "gold.qrels").write_bytes(qrels)
    rows = client.get(url("dashboard", **params)).context["rows"]
    assert rows
    plain = _means(client, {**params, "gain": "none"})
    differs = False
    for row in rows:
        run_path = tmp_path / "run.trec"
        run_path.write_bytes(client.get(url("run_file", row["run"].pk, **params)).content)
        names = [cell["name"] for cell in row["cells"]]
        out = io.StringIO()
        call_command(
            "evaluate",
            str(tmp_path / "gold.qrels"),
            str(run_path),
            "--json",
            *[a for n in names for a in ("-m", n)],
            stdout=out,
        )
        expected = json.loads(out.getvalue())["mean"]
        for cell in row["cells"]:
            assert cell["mean"] == pytest.approx(expected[cell["name"]], abs=1e-12), (
                row["run"].name,
                cell["name"],
            )
            differs |= cell["mean"] != plain[row["run"].name][cell["name"]]
    assert differs, "the rule changes some number on this bench"


def test_a_quality_change_refreshes_the_numbers(login, personas, graded):
    client = login(personas["owner"])
    params = {"level": "documents", "k": 3, "gain": MINIMUM}
    before = _means(client, params)
    dimension, doc = graded["dimension"], graded["docs"][1]
    change_quality(
        dimension=dimension,
        annotator=personas["annotator"],
        source=source_for(dimension, doc),
        grade=3,
    )
    assert _means(client, params) != before


@pytest.mark.parametrize(
    "gain", ["weight:nope:0,1,2,3", "weight:source_quality:0,1", "minimum:source_quality:4", "x"]
)
def test_a_bad_rule_is_a_400(login, personas, graded, gain):
    client = login(personas["viewer"])
    assert client.get(url("dashboard", level="documents", gain=gain)).status_code == 400


@pytest.mark.parametrize("level", ["halves", "documents"])
def test_gold_set_exports_carry_the_gain_and_each_dimension(login, personas, graded, level):
    """A frozen set's qrels hold the combined gains (the dashboard's qrels for that set),
    its JSONL each unit's quality grade and gain, its workbook a sheet per dimension."""
    import openpyxl
    from django.urls import reverse

    set_gain_rule(graded["project"], GainRule.parse(WEIGHT))
    gold_set = freeze_gold_set(graded["project"], "g", policy=ConsensusPolicy())
    client = login(personas["owner"])
    export = reverse("gold:export", args=["acme", gold_set.pk])
    qrels = client.get(export, {"level": level, "format": "qrels"}).content
    assert qrels == client.get(url("qrels_file", level=level, gold=gold_set.pk)).content
    lines = [
        json.loads(line)
        for line in client.get(export, {"level": level, "format": "jsonl"}).content.splitlines()
    ]
    docs = {d.doc_id: d for d in graded["docs"]}
    expected_quality = {"d0": 3, "d3": 3, "d1": 1, "d4": 1}  # sites a and b
    for line in lines:
        assert set(line["gain_map"]) == set(line["rel_map"])
        graded_units = line.get("quality", {}).get("source_quality", {})
        for unit, grade in line["rel_map"].items():
            doc_id = unit.split("#")[0]
            assert doc_id in docs
            if doc_id in expected_quality:
                assert graded_units[unit] == expected_quality[doc_id]
                assert line["gain_map"][unit] == grade * expected_quality[doc_id]
            else:
                assert unit not in graded_units and line["gain_map"][unit] == grade
    book = openpyxl.load_workbook(
        io.BytesIO(client.get(export, {"level": level, "format": "xlsx"}).content)
    )
    sheet = book["quality source_quality"]
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == ("unit", "source_quality") and len(rows) > 1
    assert all(value == expected_quality[unit.split("#")[0]] for unit, value in rows[1:])
    header = next(book["grades"].iter_rows(values_only=True))
    assert header == ("qid", "unit", "grade", "gain")


def test_the_share_of_the_top_k_from_each_quality_grade(graded):
    """The docs run ranks d0, d1, d2 for every query: sites a (3), b (1), c (unjudged)."""
    from metrics.evaluation import evaluation_setting
    from metrics.gain import quality_shares

    setting = evaluation_setting(graded["project"], level="documents", k=3)
    shares = quality_shares(graded["doc_run"], setting.gold, 3, graded["dimension"])
    n = setting.gold.query_pks.size
    third = np.full(n, 1 / 3)
    for grade, expected in (("3", third), ("1", third), ("unjudged", third)):
        assert shares[grade] == pytest.approx(expected), grade
    assert shares["0"].tolist() == [0.0] * n and shares["2"].tolist() == [0.0] * n
    top_two = quality_shares(graded["doc_run"], setting.gold, 2, graded["dimension"])
    assert top_two["3"] == pytest.approx(np.full(n, 0.5))
