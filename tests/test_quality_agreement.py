"""Agreement on a quality dimension equals scikit-learn and krippendorff on the same pairs."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.models import Document
from quality.agreement import dimension_agreement
from quality.dimensions import offer_source_quality
from quality.grades import QualitySource, change_quality

pytestmark = pytest.mark.django_db


def test_kappa_and_alpha_on_a_dimension_equal_the_reference_libraries(personas):
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    project = personas["project"]
    dimension = offer_source_quality(project)
    rng = np.random.default_rng(7)
    names = ["anna", "arno", "alice"]
    users = [personas["annotator"], personas["annotator2"], personas["owner"]]
    sites = [f"site{i}" for i in range(25)]
    grid = np.full((len(sites), len(users)), np.nan)
    for s, site in enumerate(sites):
        for u, user in enumerate(users):
            if rng.random() < 0.8:
                grade = int(rng.integers(0, 4))
                grid[s, u] = grade
                change_quality(
                    dimension=dimension,
                    annotator=user,
                    source=QualitySource(site=site),
                    grade=grade,
                )
    Document.objects.create(project=project, doc_id="d", text="x", metadata={"site": "site0"})
    report = dimension_agreement(dimension)
    assert report["annotators"] == sorted(names) and report["items"] == len(sites)
    column = {name: grid[:, names.index(name)] for name in names}
    for pair in report["pairs"]:
        a, b = column[pair["a"]], column[pair["b"]]
        both = ~np.isnan(a) & ~np.isnan(b)
        assert pair["n"] == int(both.sum())
        for key, weights in (
            ("cohen_kappa", None),
            ("cohen_kappa_linear", "linear"),
            ("cohen_kappa_quadratic", "quadratic"),
        ):
            expected = cohen_kappa_score(
                a[both].astype(int), b[both].astype(int), labels=[0, 1, 2, 3], weights=weights
            )
            assert pair[key] == pytest.approx(expected, abs=1e-12), (pair["a"], pair["b"], key)
    reliability = np.array([column[n] for n in sorted(names)])
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(
            reliability_data=reliability, level_of_measurement=level, value_domain=[0, 1, 2, 3]
        )
        assert report["krippendorff_alpha"][level] == pytest.approx(expected, abs=1e-12), level


def test_no_grades_no_agreement(personas):
    report = dimension_agreement(offer_source_quality(personas["project"]))
    assert report["pairs"] == [] and report["krippendorff_alpha"]["nominal"] is None
