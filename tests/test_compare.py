"""Comparison with a chosen baseline on several measures, and the aligned drill-down."""

from __future__ import annotations

import re

import pytest

from metrics.reports import p_text
from numerics.significance import holm, paired_randomization_test, paired_t_test
from tests import test_metrics_views

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db


def test_baseline_is_the_one_chosen_not_the_first_by_name(login, personas, bench):
    client = login(personas["viewer"])
    dense, bm25 = bench["runs"]  # "bm25" sorts first by name
    docs = bench["doc_run"]
    page = client.get(
        url(
            "compare",
            level="documents",
            runs=[bm25.pk, dense.pk, docs.pk],
            baseline=dense.pk,
            measure=["P@k", "MRR@k", "nDCG@k"],
            k=3,
        )
    )
    assert page.status_code == 200 and page.context["baseline"] == dense
    measures = page.context["comparison"].measures
    assert [m.name for m in measures] == ["P@3", "MRR@3", "nDCG@3"]
    body = page.content.decode()
    assert (
        "selected>dense &lt;b&gt;</option>" in body.split('id="baseline"')[1].split("</select>")[0]
    )
    from metrics.forms import DashboardForm
    from metrics.reports import aligned_values

    form = DashboardForm(
        {"level": "documents", "k": 3},
        membership=bench["project"].memberships.get(user=personas["owner"]),
    )
    assert form.is_valid()
    setting = form.setting()
    _queries, values = aligned_values([dense, bm25, docs], setting, ["P@3", "MRR@3", "nDCG@3"])
    for measure in measures:
        name = measure.name
        assert [r.run for r in measure.rows] == [bm25, docs]
        expected_p = [paired_randomization_test(v[name], values[0][name]) for v in values[1:]]
        assert [r.p_randomization for r in measure.rows] == pytest.approx(expected_p)
        # Holm within each measure, over the runs compared with the baseline.
        assert [r.p_holm for r in measure.rows] == pytest.approx(list(holm(expected_p)))
        t = [paired_t_test(v[name], values[0][name]) for v in values[1:]]
        assert [r.p_t for r in measure.rows] == [x[1] if x else None for x in t]
        for row, v in zip(measure.rows, values[1:], strict=True):
            assert row.delta == pytest.approx(v[name].mean() - values[0][name].mean())
    # A delta chart per run, each with an axis (tick numbers) and its run's name.
    charts = re.findall(r'<div class="chart delta-chart" data-run="([^"]+)">', body)
    assert charts == ["bm25", "docs"]
    chart = body.split('delta-chart" data-run="docs">')[1].split("</svg>")[0]
    assert 'class="tick"' in chart and "docs − dense" in chart
    assert "Holm" in body and "separately for each measure" in body


def test_baseline_outside_the_ticked_runs_joins_them(login, personas, bench):
    dense, bm25 = bench["runs"]
    page = login(personas["viewer"]).get(
        url("compare", level="halves", runs=[bm25.pk], baseline=dense.pk)
    )
    assert page.context["baseline"] == dense
    assert [r.run for r in page.context["comparison"].measures[0].rows] == [bm25]


def test_archived_runs_are_not_offered_but_compare_when_named(login, personas, bench):
    # One rule for the page and the API: a run named in the URL is compared or refused
    # with a reason, never dropped without a word.
    from django.utils import timezone

    dense, bm25 = bench["runs"]
    bm25.archived_at = timezone.now()
    bm25.save()
    page = login(personas["viewer"]).get(url("compare", level="halves", runs=[dense.pk, bm25.pk]))
    assert [r.run for r in page.context["comparison"].measures[0].rows] == [bm25]
    assert bm25 not in list(page.context["all_runs"])


def test_a_run_the_level_cannot_measure_is_refused_as_the_api_refuses_it(login, personas, bench):
    # The page dropped it and compared the rest; the API answered 400. Now both name it.
    dense, bm25 = bench["runs"]
    docs = bench["doc_run"]
    page = login(personas["viewer"]).get(
        url("compare", level="halves", runs=[dense.pk, bm25.pk, docs.pk])
    )
    assert page.status_code == 400
    assert page.context["problem"] == "These runs cannot be evaluated at that level: docs."
    assert b"These runs cannot be evaluated at that level: docs." in page.content


@pytest.mark.parametrize(
    ("p", "text"),
    [(None, "—"), (0.0, "< 0.0001"), (0.00009999, "< 0.0001"), (0.0001, "0.0001"), (0.5, "0.5000")],
)
def test_small_p_values_print_as_less_than(p, text):
    assert p_text(p) == text


def test_side_by_side_is_aligned_by_rank_with_scores_and_values(login, personas, bench):
    client = login(personas["viewer"])
    dense, bm25 = bench["runs"]
    query = bench["queries"][0]
    page = client.get(url("run_query", dense.pk, query.qid, level="halves", k=3, other=bm25.pk))
    assert page.status_code == 200
    rows = page.context["side_by_side"]
    assert [rank for rank, _a, _b in rows] == list(range(1, len(rows) + 1))
    assert all(a["rank"] == rank for rank, a, _b in rows if a)
    assert all(b["rank"] == rank for rank, _a, b in rows if b)
    values = page.context["values_side_by_side"]
    assert [label for label, _a, _b in values][:2] == ["Hit@3", "P@3"]
    body = page.content.decode()
    table = body.split('id="ranking-other"')[1].split("</table>")[0]
    first_b = rows[0][2]
    assert f"{first_b['score']:.4f}" in table and first_b["id"] in table
    other_page = client.get(url("run_query", bm25.pk, query.qid, level="halves", k=3))
    mine = dict(other_page.context["query_values"])
    assert {label: theirs for label, _a, theirs in values} == pytest.approx(mine)
