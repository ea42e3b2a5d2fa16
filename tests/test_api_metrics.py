"""The API a CI job gates on: lists, metrics at any level, compare, gate, tokens."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from api.models import ApiToken
from metrics.forms import DashboardForm
from metrics.reports import aligned_values
from numerics.significance import holm, paired_randomization_test
from tests import test_metrics_views

bench = test_metrics_views.bench  # the shared fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def tokens(personas):
    return {
        key: ApiToken.create_for(personas[key], "ci")[1] for key in ("owner", "viewer", "outsider")
    }


def api(name, token, *args, **params):
    return Client().get(
        reverse(f"api:{name}", args=["acme", *args]),
        params,
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_lists_of_runs_and_gold_sets(personas, bench, tokens):
    from django.utils import timezone

    from gold.services import ConsensusPolicy, freeze_gold_set

    bench["runs"][0].__class__.objects.filter(pk=bench["doc_run"].pk).update(
        archived_at=timezone.now()
    )
    runs = api("upload_run", tokens["viewer"]).json()["runs"]
    assert [r["name"] for r in runs] == ["bm25", "dense <b>"]
    assert runs[0]["level"] == "halves" and runs[0]["parameters"] == {"k": 6}
    everything = api("upload_run", tokens["viewer"], archived="true").json()["runs"]
    assert [r["archived"] for r in everything] == [False, False, True]
    gold_set = freeze_gold_set(bench["project"], "release", policy=ConsensusPolicy())
    assert api("gold_list", tokens["viewer"]).json()["gold_sets"] == []  # not released yet
    gold = api("gold_list", tokens["owner"]).json()["gold_sets"]
    assert [(g["name"], g["version"], g["released"]) for g in gold] == [("release", 1, False)]
    gold_set.set_released(True)
    assert len(api("gold_list", tokens["viewer"]).json()["gold_sets"]) == 1
    assert api("gold_list", tokens["outsider"]).status_code == 404
    assert api("gold_list", "assay_nope").status_code == 401


def test_metrics_with_intervals_judged_and_own_level(personas, bench, tokens, login):
    run = bench["runs"][0]
    body = api(
        "run_metrics", tokens["viewer"], run.pk, level="own", k=5, measure=["nDCG@k", "RR"]
    ).json()
    assert body["level"] == "halves" and body["requested_level"] == "own"
    page = login(personas["viewer"]).get(
        test_metrics_views.url("dashboard", level="halves", k=5, measure=["nDCG@k", "RR"])
    )
    row = next(r for r in page.context["rows"] if r["run"] == run)
    assert body["mean"] == {c["name"]: c["mean"] for c in row["cells"]}
    assert body["interval"]["nDCG@5"] == list(row["scores"].interval("nDCG@5"))
    assert body["judged"] == row["judged"]
    assert api("run_metrics", tokens["viewer"], run.pk, measure="Nope").status_code == 400
    wrong = api("run_metrics", tokens["viewer"], bench["doc_run"].pk, level="halves")
    assert wrong.status_code == 400


def test_compare_with_baseline(personas, bench, tokens):
    dense, bm25 = bench["runs"]
    docs = bench["doc_run"]
    response = api(
        "compare",
        tokens["viewer"],
        runs=f"{bm25.pk},{dense.pk},{docs.pk}",
        baseline=dense.pk,
        level="documents",
        measure=["P@3", "MRR@3"],
    )
    assert response.status_code == 200
    body = response.json()
    assert body["baseline"] == {"id": dense.pk, "name": "dense <b>"}
    form = DashboardForm(
        {"level": "documents"},
        membership=bench["project"].memberships.get(user=personas["owner"]),
    )
    assert form.is_valid()
    _q, values = aligned_values([dense, bm25, docs], form.setting(), ["P@3", "MRR@3"])
    for name in ("P@3", "MRR@3"):
        rows = body["measures"][name]["runs"]
        assert [r["id"] for r in rows] == [bm25.pk, docs.pk]
        p = [paired_randomization_test(v[name], values[0][name]) for v in values[1:]]
        assert [r["p_randomization"] for r in rows] == pytest.approx(p)
        assert [r["p_holm"] for r in rows] == pytest.approx(list(holm(p)))
        assert body["measures"][name]["baseline_mean"] == pytest.approx(values[0][name].mean())
    assert api("compare", tokens["viewer"], runs="x").status_code == 400
    assert api("compare", tokens["viewer"], runs="999999").status_code == 404


def test_gate_passes_and_fails_with_the_figures(personas, bench, tokens):
    dense, bm25 = bench["runs"]
    base = api("run_metrics", tokens["viewer"], bm25.pk, level="halves", measure="nDCG@10")
    mine = api("run_metrics", tokens["viewer"], dense.pk, level="halves", measure="nDCG@10")
    delta = mine.json()["mean"]["nDCG@10"] - base.json()["mean"]["nDCG@10"]
    assert delta != 0
    generous = {"measure": "nDCG@10", "max_drop": abs(delta) + 0.01, "level": "halves"}
    strict = {"measure": ["nDCG@10", "P@10"], "max_drop": [0, 1], "level": "halves"}
    worse, better = (dense, bm25) if delta < 0 else (bm25, dense)
    passed = api("gate", tokens["viewer"], worse.pk, baseline=better.pk, **generous)
    assert passed.status_code == 200 and passed.json()["pass"] is True
    failed = api("gate", tokens["viewer"], worse.pk, baseline=better.pk, **strict)
    assert failed.status_code == 422
    body = failed.json()
    assert body["pass"] is False and [c["measure"] for c in body["failing"]] == ["nDCG@10"]
    check = body["failing"][0]
    assert check["delta"] == pytest.approx(-abs(delta)) and "dropped by" in check["reasons"][0]
    improved = api("gate", tokens["viewer"], better.pk, baseline=worse.pk, **strict)
    assert improved.status_code == 200
    # alpha alone: fails only when worse and significant; a p of 1 never fails.
    alpha = api(
        "gate",
        tokens["viewer"],
        worse.pk,
        baseline=better.pk,
        measure="nDCG@10",
        alpha=0.05,
        level="halves",
    )
    p = alpha.json()["checks"][0]["p_randomization"]
    assert alpha.status_code == (422 if p < 0.05 else 200)
    for bad in (
        {"measure": "nDCG@10"},  # no max_drop and no alpha
        {"measure": ["nDCG@10", "P@10"], "max_drop": 0.1},  # pairs do not match
        {"measure": "nDCG@10", "max_drop": "x"},
        {"measure": "nDCG@10", "max_drop": -1},
        {"measure": "nDCG@10", "alpha": 2},
    ):
        response = api("gate", tokens["viewer"], worse.pk, baseline=better.pk, **bad)
        assert response.status_code == 400, bad
    same = api("gate", tokens["viewer"], worse.pk, baseline=worse.pk, measure="P@10", max_drop=0)
    assert same.status_code == 400
    assert (
        api("gate", tokens["outsider"], worse.pk, baseline=better.pk, **generous).status_code == 404
    )


def test_create_token_command(personas):
    out = io.StringIO()
    call_command("create_token", "vera", "--name", "nightly", stdout=out)
    token = out.getvalue().strip()
    row = ApiToken.authenticate(token)
    assert row is not None and row.user == personas["viewer"] and row.name == "nightly"
    assert token not in row.token_hash
    with pytest.raises(CommandError):
        call_command("create_token", "nobody", "--name", "x")


def test_openapi_lists_every_api_path(client):
    spec = client.get("/api/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert set(spec["paths"]) == {
        "/api/p/{slug}/runs/",
        "/api/p/{slug}/gold/",
        "/api/p/{slug}/gold/{id}/export/",
        "/api/p/{slug}/runs/{id}/metrics/",
        "/api/p/{slug}/compare/",
        "/api/p/{slug}/runs/{id}/gate/",
    }
