"""The quality agreement on the agreement page follows the page's label sources
(``?sources=``, resolved by ``annotator.sources.resolve_sources``), like relevance agreement:
an imported assessor set and a judge version count only when chosen."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from annotator.models import Membership, Role, SourceKind
from quality.agreement import dimension_agreement
from quality.grades import change_quality, source_for
from tests import test_metrics_views
from tests.conftest import make_user
from tests.test_quality_gain import grade_sources

bench = test_metrics_views.bench  # the shared fixture

pytestmark = pytest.mark.django_db


def _pseudo(project, name: str, **fields):
    user = make_user(name)
    Membership.objects.create(
        project=project, user=user, role=Role.ANNOTATOR, is_pseudo=True, **fields
    )
    return user


@pytest.fixture
def graded(personas, bench):
    """People grade sites a and b (grade_sources); an assessor set and a judge version
    grade site a too, the judge differently from everyone."""
    graded = grade_sources(bench, personas)
    dimension, docs = graded["dimension"], bench["docs"]
    assessor = _pseudo(graded["project"], "trec-assessors")
    judge = _pseudo(
        graded["project"],
        "judge-mini-v1",
        source=SourceKind.JUDGE,
        judge_slug="mini",
        judge_version=1,
    )
    for user, grade in ((assessor, 3), (judge, 0)):
        change_quality(
            dimension=dimension, annotator=user, source=source_for(dimension, docs[0]), grade=grade
        )
    return graded


def _shown(client, sources: str | None = None) -> dict:
    params = {"sources": sources} if sources is not None else {}
    page = client.get(reverse("gold:agreement", args=["acme"]), params)
    assert page.status_code == 200
    (section,) = [d.context for d in page.context["sections"] if "quality/" in d.template]
    (row,) = section["rows"]
    return {"section": section, "agreement": row["agreement"], "body": page.content.decode()}


@pytest.mark.parametrize(
    ("sources", "annotators"),
    [
        (None, ["alice", "anna", "arno", "trec-assessors"]),  # people,assessors
        ("people", ["alice", "anna", "arno"]),
        ("assessors", ["trec-assessors"]),
        ("judge:mini", ["judge-mini-v1"]),
        ("people,judges", ["alice", "anna", "arno", "judge-mini-v1"]),
    ],
)
def test_quality_agreement_counts_the_chosen_sources(login, personas, graded, sources, annotators):
    shown = _shown(login(personas["owner"]), sources)
    assert shown["agreement"]["annotators"] == annotators
    expected = dimension_agreement(graded["dimension"], sources=shown["section"]["sources"])
    assert [(p["a"], p["b"], p["n"]) for p in shown["agreement"]["pairs"]] == [
        (p["a"], p["b"], p["n"]) for p in expected["pairs"]
    ]
    assert shown["section"]["sources"].text == (sources or "people,assessors")
    assert 'id="quality-agreement-sources"' in shown["body"]


def test_a_judge_that_disagrees_changes_the_quality_kappa_only_when_chosen(login, personas, graded):
    client = login(personas["owner"])
    import krippendorff

    people = _shown(client, "people,assessors")["agreement"]
    with_judge = _shown(client, "people,assessors,judges")["agreement"]
    assert "judge-mini-v1" not in people["annotators"]
    pairs = {(p["a"], p["b"]): p for p in with_judge["pairs"]}
    # alice and the judge graded site a: 3 against 0.
    assert pairs[("alice", "judge-mini-v1")]["n"] == 1
    # Sites a and b, one row per annotator (nan: not graded), as krippendorff reads them.
    nan = np.nan
    rows = {"alice": [3, nan], "anna": [3, 1], "arno": [0, nan], "trec-assessors": [3, nan]}
    for shown, data in ((people, rows), (with_judge, {**rows, "judge-mini-v1": [0, nan]})):
        expected = krippendorff.alpha(
            reliability_data=np.array(list(data.values()), dtype=float),
            level_of_measurement="ordinal",
            value_domain=[0, 1, 2, 3],
        )
        assert shown["krippendorff_alpha"]["ordinal"] == pytest.approx(expected)


def test_unknown_sources_are_refused(login, personas, graded):
    page = login(personas["owner"]).get(
        reverse("gold:agreement", args=["acme"]), {"sources": "judge:nobody"}
    )
    assert page.status_code == 400
