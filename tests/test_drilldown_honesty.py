"""Drill-downs say what they grade, follow the selected gold, and are addressed by qid;
run pages keep their sort in the URL and sort qids as numbers."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Query
from gold.services import ConsensusPolicy, freeze_gold_set
from metrics.views import natural_key
from tests import test_metrics_views

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db


def test_drilldown_urls_use_the_qid(login, personas, bench):
    client = login(personas["owner"])
    run, query = bench["runs"][0], bench["queries"][2]
    assert url("run_query", run.pk, query.qid).endswith(f"/q/{query.qid}/")
    page = client.get(url("run_detail", run.pk, level="halves"))
    assert f"/runs/{run.pk}/q/{query.qid}/?" in page.content.decode()
    drill = client.get(url("run_query", run.pk, query.qid, level="halves"))
    assert drill.status_code == 200 and drill.context["query"] == query
    assert client.get(url("run_query", run.pk, "nope", level="halves")).status_code == 404
    slashed = Query.objects.create(project=bench["project"], qid="a/b", text="slash")
    assert client.get(url("run_query", run.pk, slashed.qid, level="halves")).status_code == 200


def test_with_a_frozen_gold_set_grading_is_off_and_says_why(login, personas, bench):
    gold_set = freeze_gold_set(bench["project"], "release", policy=ConsensusPolicy())
    client = login(personas["owner"])
    run, query = bench["runs"][0], bench["queries"][0]
    frozen = client.get(url("run_query", run.pk, query.qid, level="halves", gold=gold_set.pk))
    body = frozen.content.decode()
    assert 'id="grading-off"' in body and "release v1" in body and "grade-buttons" not in body
    live = client.get(url("run_query", run.pk, query.qid, level="halves")).content.decode()
    assert 'id="grading-off"' not in live and "grade-buttons" in live
    posted = client.post(
        url("judge", run.pk, query.qid, level="halves", gold=gold_set.pk), {"unit": 0, "grade": 1}
    )
    assert posted.status_code == 400


def test_diagnostics_follow_the_selected_gold(login, personas, bench):
    gold_set = freeze_gold_set(bench["project"], "release", policy=ConsensusPolicy())
    change_label(  # a live label after the freeze: not in the gold set
        query=bench["queries"][0],
        annotator=personas["owner"],
        evidence=Evidence.for_chunk(bench["chunks"][0]),
        grade=3,
    )
    client = login(personas["owner"])
    run = bench["runs"][0]
    live = client.get(url("run_detail", run.pk, level="halves")).context["diagnostics"]
    frozen = client.get(url("run_detail", run.pk, level="halves", gold=gold_set.pk))
    assert frozen.context["diagnostics"]["n_evidence"] == live["n_evidence"] - 1


def test_sort_is_in_the_url_and_qids_sort_as_numbers(login, personas, bench):
    project = bench["project"]
    for qid in ("q10", "q9"):  # judged, never retrieved: every value ties at 0
        query = Query.objects.create(project=project, qid=qid, text=qid)
        change_label(
            query=query,
            annotator=personas["annotator"],
            evidence=Evidence.for_chunk(bench["chunks"][0]),
            grade=2,
        )
    client = login(personas["owner"])
    run = bench["runs"][0]
    for desc in (0, 1):
        page = client.get(url("run_detail", run.pk, level="halves", sort="P@10", desc=desc))
        qids = [r["query"].qid for r in page.context["rows"]]
        assert qids.index("q9") < qids.index("q10")
    body = page.content.decode()
    assert 'hx-push-url="true"' in body and 'name="desc" value="1" checked' in body
    assert sorted(["q10", "q9", "q1", "a", "10", "9"], key=natural_key) == [
        "9",
        "10",
        "a",
        "q1",
        "q9",
        "q10",
    ]
    assert reverse("metrics:run_query", args=["acme", run.pk, "q10"]).endswith("/q/q10/")
