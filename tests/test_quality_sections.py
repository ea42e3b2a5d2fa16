"""Quality on the dashboard, the drill-down and the agreement page: the shares shown are
``metrics.gain.quality_shares``'s, the agreement ``dimension_agreement``'s; nothing is shown
without a dimension."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from metrics.evaluation import evaluation_setting
from metrics.gain import quality_shares
from quality.agreement import dimension_agreement
from tests import test_metrics_views
from tests.test_quality_gain import grade_sources

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db


def _section(response, key: str):
    found = [d.context for d in response.context["sections"] if key in d.template]
    return found[0] if found else None


def test_no_dimension_no_quality_sections(login, personas, bench):
    client = login(personas["owner"])
    page = client.get(url("dashboard", level="documents", k=3))
    assert _section(page, "quality/") is None and 'id="quality-shares"' not in page.content.decode()
    agreement = client.get(reverse("gold:agreement", args=["acme"]))
    assert 'id="quality-agreement"' not in agreement.content.decode()


def test_the_dashboard_shows_each_runs_shares_per_grade(login, personas, bench):
    graded = grade_sources(bench, personas)
    client = login(personas["owner"])
    page = client.get(url("dashboard", level="documents", k=3))
    section = _section(page, "quality/partials/dashboard")
    setting = evaluation_setting(graded["project"], level="documents", k=3)
    (table,) = section["tables"]
    assert table["dimension"] == graded["dimension"]
    by_run = {row["run"].name: row["shares"] for row in table["rows"]}
    assert "docs" in by_run
    for row in table["rows"]:
        expected = quality_shares(row["run"], setting.gold, 3, graded["dimension"])
        assert [c["key"] for c in row["shares"]] == list(expected)
        for cell in row["shares"]:
            assert cell["share"] == pytest.approx(float(np.mean(expected[cell["key"]])))
    # The docs run ranks sites a (3), b (1), c (ungraded) first: a third each.
    docs = {c["key"]: c["share"] for c in by_run["docs"]}
    assert docs == pytest.approx({"0": 0, "1": 1 / 3, "2": 0, "3": 1 / 3, "unjudged": 1 / 3})
    body = page.content.decode()
    assert 'id="quality-shares-source_quality"' in body and "Authoritative" in body


def test_the_drilldown_shows_the_querys_shares(login, personas, bench):
    graded = grade_sources(bench, personas)
    run, query = graded["doc_run"], graded["queries"][1]
    page = login(personas["owner"]).get(url("run_query", run.pk, query.qid, level="documents", k=2))
    (table,) = _section(page, "quality/partials/drilldown")["tables"]
    setting = evaluation_setting(graded["project"], level="documents", k=2)
    expected = quality_shares(run, setting.gold, 2, graded["dimension"])
    position = int(np.flatnonzero(setting.gold.query_pks == query.pk)[0])
    assert {c["key"]: c["share"] for c in table["shares"]} == pytest.approx(
        {key: float(values[position]) for key, values in expected.items()}
    )
    assert {c["key"]: c["share"] for c in table["shares"]}["3"] == pytest.approx(0.5)


def test_the_agreement_page_shows_kappa_and_alpha_per_dimension(login, personas, bench):
    graded = grade_sources(bench, personas)
    page = login(personas["owner"]).get(reverse("gold:agreement", args=["acme"]))
    (row,) = _section(page, "quality/partials/agreement")["rows"]
    expected = dimension_agreement(graded["dimension"])
    shown = row["agreement"]
    assert shown["items"] == expected["items"] == 2
    assert [(p["a"], p["b"], p["n"]) for p in shown["pairs"]] == [
        (p["a"], p["b"], p["n"]) for p in expected["pairs"]
    ]
    for level, alpha in expected["krippendorff_alpha"].items():
        if np.isfinite(alpha):
            assert shown["krippendorff_alpha"][level] == pytest.approx(alpha)
        else:
            assert shown["krippendorff_alpha"][level] is None
    assert 'id="quality-agreement"' in page.content.decode()


def test_annotators_see_no_one_elses_quality_agreement(login, personas, bench):
    from quality.sections import agreement_section

    grade_sources(bench, personas)
    from annotator.models import Membership

    membership = Membership.objects.get(user=personas["annotator"])
    assert agreement_section(project=personas["project"], membership=membership) is None


def test_the_dashboard_derives_each_units_quality_once_and_again_after_a_change(
    login, personas, bench, monkeypatch
):
    from annotator.caches import cache
    from metrics import gain
    from quality.grades import change_quality, source_for

    graded = grade_sources(bench, personas)
    cache.clear()
    derived = []
    original = gain._unit_quality
    monkeypatch.setattr(gain, "_unit_quality", lambda *a: derived.append(1) or original(*a))
    client = login(personas["owner"])
    first = _section(client.get(url("dashboard", level="documents", k=3)), "quality/")
    assert len(first["tables"][0]["rows"]) >= 2 and len(derived) == 1  # one for every run
    client.get(url("dashboard", level="documents", k=3))
    assert len(derived) == 1  # kept
    change_quality(
        dimension=graded["dimension"],
        annotator=personas["annotator"],
        source=source_for(graded["dimension"], bench["docs"][2]),
        grade=3,
    )
    after = _section(client.get(url("dashboard", level="documents", k=3)), "quality/")
    assert len(derived) == 2
    shares = {
        r["run"].name: {c["key"]: c["share"] for c in r["shares"]}
        for r in after["tables"][0]["rows"]
    }
    assert shares["docs"]["unjudged"] == pytest.approx(0)  # site c is graded now


def test_kept_units_and_their_count_follow_the_documents(personas, bench):
    from annotator.models import Document
    from judges.quality_jobs import _read_units, all_units, unit_count
    from quality.dimensions import add_dimension

    graded = grade_sources(bench, personas)
    per_site = graded["dimension"]
    per_document = add_dimension(
        graded["project"], key="clarity", name="Clarity", max_grade=2, unit="document"
    )

    def agree() -> None:
        for dimension in (per_site, per_document):
            built = _read_units(dimension)  # from the documents, nothing kept
            assert all_units(dimension) == built and unit_count(dimension) == len(built)

    agree()
    Document.objects.create(
        project=graded["project"], doc_id="new", text="x", metadata={"site": "z"}
    )
    agree()  # a document added
    doc = bench["docs"][5]
    doc.metadata = {"site": "y"}  # a document changed in place: a reset
    doc.save(update_fields=["metadata"])
    agree()
    assert [u.site for u in all_units(per_site)] == ["a", "b", "c", "y", "z"]
