"""Calibration on the raw pairs both sides graded, against scikit-learn and krippendorff."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Judgment
from annotator.sources import SourcesError
from judges.calibration import calibrate, raters
from judges.engine import execute_job
from judges.services import plan_job, start_job, update_judge

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
    return {**judging, "job": job}


def raw_pairs(first, second):
    """(first's, second's) grades on the chunks both labelled, read from the database."""
    one = {(j.query_id, j.chunk_id): j.grade for j in Judgment.objects.filter(annotator=first)}
    two = {(j.query_id, j.chunk_id): j.grade for j in Judgment.objects.filter(annotator=second)}
    keys = sorted(set(one) & set(two))
    return [one[k] for k in keys], [two[k] for k in keys]


def assert_reference_values(figures, a, b):
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    assert figures["n"] == len(a)
    assert figures["exact_agreement"]["value"] == pytest.approx(np.mean(np.equal(a, b)))
    kappas = (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic"))
    for name, weights in kappas:
        expected = cohen_kappa_score(a, b, labels=range(4), weights=weights)
        assert figures[name]["value"] == pytest.approx(expected, abs=1e-12)
    alpha = krippendorff.alpha(
        reliability_data=np.array([a, b], dtype=float),
        level_of_measurement="ordinal",
        value_domain=[0, 1, 2, 3],
    )
    assert figures["alpha_ordinal"]["value"] == pytest.approx(alpha, abs=1e-12)
    assert sum(map(sum, figures["confusion"])) == len(a)


def test_people_against_a_judge_version_equal_the_reference_libraries(calibrated):
    version = calibrated["job"].version
    assert version.annotator.username in raters(calibrated["project"])
    result = calibrate(calibrated["project"], "people", "judge:fake")
    people, judge = raw_pairs(calibrated["annotator"], version.annotator)
    assert len(people) >= 6
    assert_reference_values(result.agreement, people, judge)
    low, high = result.agreement["kappa_quadratic"]["interval"]
    assert low <= result.agreement["kappa_quadratic"]["value"] <= high
    assert {row["qid"] for row in result.per_query} == {"q1", "q2"}
    assert sum(row["n"] for row in result.per_query) == len(people)
    assert [(p["a"], p["b"]) for p in result.pairs] == list(zip(people, judge, strict=True))
    assert all(p["granularity"] == "chunk" for p in result.pairs)
    # The version named by number is the same side.
    same = calibrate(calibrated["project"], "people", f"judge:fake@{version.number}")
    assert same.agreement["confusion"] == result.agreement["confusion"]


def test_labels_are_paired_only_where_both_graded_the_very_span(calibrated):
    """A whole-document label covering a judged chunk is not a pair (no mapping): the
    regression where a mapping spread labels onto neighbouring units."""
    chunks, queries = calibrated["chunks"], calibrated["queries"]
    before = calibrate(calibrated["project"], "people", "judge:fake").agreement["n"]
    # One-chunk documents: the document label covers exactly the chunk's characters.
    change_label(
        query=queries[1],
        annotator=calibrated["annotator"],
        evidence=Evidence.for_document(chunks[6].document),
        grade=0,
    )
    change_label(
        query=queries[1],
        annotator=calibrated["annotator"],
        evidence=Evidence.for_passage(chunks[7].document, 0, 5),
        grade=2,
    )
    assert calibrate(calibrated["project"], "people", "judge:fake").agreement["n"] == before


def test_any_two_sides_assessors_versions_and_people(calibrated, tmp_path, personas):
    from annotator.importing import run_import

    project = calibrated["project"]
    qrels = tmp_path / "llm.qrels"
    qrels.write_text("q1 0 d0#0 3\nq1 0 d1#0 2\nq1 0 d2#0 1\nq2 0 d0#0 2\n", encoding="utf-8")
    run_import(
        "labels",
        project,
        qrels,
        options={"annotator": "llm-file", "level": "chunk", "chunking": "c"},
    )
    assert "llm-file" in raters(project)
    versus_people = calibrate(project, "people", "assessors")
    assert versus_people.agreement["n"] == 4
    assert versus_people.agreement["exact_agreement"]["value"] == pytest.approx(3 / 4)
    # Assessors can be the reference side against a judge.
    judge = calibrated["job"].version.annotator
    against_judge = calibrate(project, "assessors", "judge:fake@1")
    assessors_grades, judge_grades = raw_pairs(
        Judgment.objects.filter(annotator__username="llm-file").first().annotator, judge
    )
    assert_reference_values(against_judge.agreement, assessors_grades, judge_grades)
    # Judge v1 against v2 (a new prompt is a new version).
    update_judge(calibrated["judge"], prompt=calibrated["judge"].prompt + "\nBe strict.")
    job = start_job(
        plan_job(calibrated["judge"], scope="all", level="chunk", chunking="c"), enqueue=False
    )
    execute_job(job.pk, sleep=Sleeps())
    v1_v2 = calibrate(project, "judge:fake@1", "judge:fake@2")
    assert v1_v2.agreement["n"] >= 6
    assert v1_v2.agreement["exact_agreement"]["value"] == 1.0  # the fake model is deterministic
    # Person against person, by username.
    other = personas["adjudicator"]
    for c, grade in ((0, 3), (1, 0), (4, 3)):
        change_label(
            query=calibrated["queries"][0],
            annotator=other,
            evidence=Evidence.for_chunk(calibrated["chunks"][c]),
            grade=grade,
        )
    people = calibrate(project, calibrated["annotator"].username, other.username)
    anna, other_grades = raw_pairs(calibrated["annotator"], other)
    assert_reference_values(people.agreement, anna, other_grades)
    with pytest.raises(SourcesError):
        calibrate(project, "people", "judge:nobody")


def test_reference_values_on_random_pairs():
    """The paired figures against the reference libraries on randomized grades."""
    from numerics.agreement import compare_raters

    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(5, 60))
        a = rng.integers(0, 4, n)
        b = np.where(rng.random(n) < 0.6, a, rng.integers(0, 4, n))
        if len(set(a.tolist()) | set(b.tolist())) < 2:
            continue
        assert_reference_values(compare_raters(a, b, 4, n_resamples=50), a.tolist(), b.tolist())


def test_a_calibration_is_kept_until_a_label_changes(calibrated):
    """A second view of the same sides reads no label and shows the same figures; a
    label change is seen at once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    project, queries, chunks = calibrated["project"], calibrated["queries"], calibrated["chunks"]
    first = calibrate(project, "people", "judge:fake")
    with CaptureQueriesContext(connection) as read:
        again = calibrate(project, "people", "judge:fake")
    assert not [q for q in read.captured_queries if "annotator_judgment" in q["sql"]]
    assert again == first
    other = calibrate(project, "judge:fake", "people")  # the sides swapped: kept apart
    assert other.a == "judge:fake" and other.n_a == first.n_b
    people, judge = raw_pairs(calibrated["annotator"], calibrated["job"].version.annotator)
    differs = next(i for i, (a, b) in enumerate(zip(people, judge, strict=True)) if a != b)
    query_pk, chunk_pk = sorted(
        set(
            Judgment.objects.filter(annotator=calibrated["annotator"]).values_list(
                "query_id", "chunk_id"
            )
        )
        & set(
            Judgment.objects.filter(annotator=calibrated["job"].version.annotator).values_list(
                "query_id", "chunk_id"
            )
        )
    )[differs]
    chunk = next(c for c in chunks if c.pk == chunk_pk)
    query = next(q for q in queries if q.pk == query_pk)
    change_label(
        query=query,
        annotator=calibrated["annotator"],
        evidence=Evidence.for_chunk(chunk),
        grade=judge[differs],
    )
    after = calibrate(project, "people", "judge:fake")
    assert after.agreement["n"] == first.agreement["n"]
    matches = sum(p["a"] == p["b"] for p in after.pairs)
    assert matches == sum(p["a"] == p["b"] for p in first.pairs) + 1
