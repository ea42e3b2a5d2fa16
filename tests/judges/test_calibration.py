"""Calibration numbers against scikit-learn, krippendorff and scipy on the same pairs."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from annotator.labels import Evidence, change_label
from judges.calibration import calibrate, raters
from judges.engine import execute_job
from judges.services import plan_job, start_job
from metrics.models import Run

from .conftest import Sleeps

pytestmark = pytest.mark.django_db

# anna's grades of q1's chunks d0..d5 and q2's d0..d3 (the fixture gave q1/d0=3, q1/d1=1, q2/d2=1).
MORE_PEOPLE = {(0, 2): 1, (0, 3): 0, (0, 4): 3, (0, 5): 0, (1, 0): 2, (1, 1): 2, (1, 3): 0}


@pytest.fixture
def calibrated(judging):
    chunks, queries = judging["chunks"], judging["queries"]
    for (q, c), grade in MORE_PEOPLE.items():
        change_label(
            query=queries[q],
            annotator=judging["annotator"],
            evidence=Evidence.for_chunk(chunks[c]),
            grade=grade,
        )
    job = start_job(
        plan_job(judging["judge"], scope="all", level="chunk", chunking="c"), enqueue=False
    )
    job = execute_job(job.pk, sleep=Sleeps())
    # Two more runs in other orders, so the system rankings have something to rank.
    rng = np.random.default_rng(1)
    for name in ("dense", "hybrid", "random"):
        run = Run(
            project=judging["project"], name=name, level="chunk", chunking=judging["chunking"]
        )
        q = np.repeat([x.pk for x in queries], len(chunks))
        c = np.concatenate([rng.permutation([x.pk for x in chunks]) for _ in queries])
        run.set_results(q, c, np.tile(np.arange(len(chunks), 0, -1, dtype=float), len(queries)))
        run.save()
    return {**judging, "job": job}


def pairs_both_graded(calibrated):
    """(people, judge) grades on the (query, chunk) pairs both labelled, from the database."""
    from annotator.models import Judgment

    people = {
        (j.query_id, j.chunk_id): j.grade
        for j in Judgment.objects.filter(annotator=calibrated["annotator"])
    }
    judge = {
        (j.query_id, j.chunk_id): j.grade
        for j in Judgment.objects.filter(annotator=calibrated["job"].version.annotator)
    }
    keys = sorted(set(people) & set(judge))
    return [people[k] for k in keys], [judge[k] for k in keys]


def test_calibration_equals_the_reference_libraries(calibrated):
    name = calibrated["job"].version.annotator.username
    assert name in raters(calibrated["project"])
    result = calibrate(calibrated["project"], name, "c", ["nDCG@10"])
    people, judge = pairs_both_graded(calibrated)
    assert result.agreement["n"] == len(people) >= 6
    figures = result.agreement
    assert figures["exact_agreement"]["value"] == pytest.approx(np.mean(np.equal(people, judge)))
    for weights in ("linear", "quadratic"):
        expected = cohen_kappa_score(people, judge, labels=range(4), weights=weights)
        assert figures[f"kappa_{weights}"]["value"] == pytest.approx(expected, abs=1e-12)
    alpha = krippendorff.alpha(
        reliability_data=np.array([people, judge], dtype=float),
        level_of_measurement="ordinal",
        value_domain=[0, 1, 2, 3],
    )
    assert figures["alpha_ordinal"]["value"] == pytest.approx(alpha, abs=1e-12)
    low, high = figures["kappa_quadratic"]["interval"]
    assert low <= figures["kappa_quadratic"]["value"] <= high
    assert sum(map(sum, figures["confusion"])) == len(people)
    assert {row["qid"] for row in result.per_query} == {"q1", "q2"}
    assert sum(row["n"] for row in result.per_query) == len(people)


def test_filling_the_holes_changes_the_system_ranking_measured_by_kendall_tau(calibrated):
    name = calibrated["job"].version.annotator.username
    result = calibrate(calibrated["project"], name, "c", ["nDCG@10", "P@5"])
    assert [r["name"] for r in result.runs] == ["bm25", "dense", "hybrid", "random"]
    for measure in ("nDCG@10", "P@5"):
        people = [r["people"][measure] for r in result.runs]
        filled = [r["filled"][measure] for r in result.runs]
        assert result.tau[measure] == pytest.approx(kendalltau(people, filled).statistic, abs=1e-12)
    # The judge's grades only add judged units: bm25's P@5 can only move where holes were.
    assert result.runs[0]["people"] != result.runs[0]["filled"]


def test_imported_pseudo_annotators_are_calibrated_too(calibrated, tmp_path):
    from annotator.importing import run_import

    qrels = tmp_path / "llm.qrels"
    qrels.write_text("q1 0 d0#0 3\nq1 0 d1#0 2\nq1 0 d2#0 1\nq2 0 d0#0 2\n", encoding="utf-8")
    run_import(
        "labels",
        calibrated["project"],
        qrels,
        options={"annotator": "llm-file", "level": "chunk", "chunking": "c"},
    )
    assert "llm-file" in raters(calibrated["project"])
    result = calibrate(calibrated["project"], "llm-file", "c", ["nDCG@10"])
    assert result.agreement["n"] == 4
    assert result.agreement["exact_agreement"]["value"] == pytest.approx(3 / 4)
