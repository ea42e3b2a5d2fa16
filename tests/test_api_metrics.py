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


def _api_paths() -> set[str]:
    """Every project path the URL configuration answers under /api/p/, written the way
    OpenAPI writes it (``<slug:slug>`` → ``{slug}``, ``<int:pk>`` → ``{id}``)."""
    import re

    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(patterns, prefix=""):
        for entry in patterns:
            route = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, route)
            elif isinstance(entry, URLPattern):
                yield "/" + route.lstrip("^").rstrip("$")

    paths = set()
    for route in walk(get_resolver().url_patterns):
        route = re.sub(r"<(?:\w+:)?slug>", "{slug}", route)
        route = re.sub(r"<(?:\w+:)?\w+>", "{id}", route)
        if route.startswith("/api/p/"):
            paths.add(route)
    return paths


def test_openapi_lists_every_api_path(client):
    spec = client.get("/api/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert {
        "/api/p/{slug}/runs/",
        "/api/p/{slug}/gold/",
        "/api/p/{slug}/gold/{id}/export/",
        "/api/p/{slug}/runs/{id}/metrics/",
        "/api/p/{slug}/compare/",
        "/api/p/{slug}/sources/compare/",
        "/api/p/{slug}/runs/{id}/gate/",
        "/api/p/{slug}/jobs/{id}/",
        "/api/p/{slug}/answers/",
    } <= set(spec["paths"])
    # Every path the API answers is described, and nothing is described that it does not answer.
    assert set(spec["paths"]) == _api_paths()


@pytest.fixture
def twenty(personas):
    """A project of 20 queries created out of byte order (q7, q13, q1 …), graded by one
    person at document level, and two document runs: enough queries that the
    randomization test samples (2^20 sign flips > 10,000), so query order matters."""
    import numpy as np

    from annotator.evidence import Evidence
    from annotator.labels import change_label
    from annotator.models import Document, Query
    from metrics.models import Run

    project = personas["project"]
    rng = np.random.default_rng(3)
    docs = [
        Document.objects.create(project=project, doc_id=f"d{i}", text=f"text {i} " * 5)
        for i in range(12)
    ]
    order = rng.permutation(20)
    queries = [Query.objects.create(project=project, qid=f"q{i}", text=f"q {i}") for i in order]
    qrels, runs = [], {"classic": [], "bm25": []}
    for query in queries:
        for doc in rng.choice(docs, 4, replace=False):
            grade = int(rng.integers(0, 4))
            change_label(
                query=query,
                annotator=personas["annotator"],
                evidence=Evidence.for_document(doc),
                grade=grade,
            )
            qrels.append(f"{query.qid} 0 {doc.doc_id} {grade}")
    stored = {}
    for name in runs:
        scores = rng.random((len(queries), len(docs)))
        run = Run(project=project, name=name, level="document")
        run.set_results(
            np.repeat([q.pk for q in queries], len(docs)),
            np.tile([d.pk for d in docs], len(queries)),
            scores.ravel(),
        )
        run.save()
        stored[name] = run
        for query, row in zip(queries, scores, strict=True):
            runs[name] += [
                f"{query.qid} Q0 {doc.doc_id} 1 {float(score)!r} {name}"
                for doc, score in zip(docs, row, strict=True)
            ]
    return {"qrels": qrels, "lines": runs, "runs": stored}


def test_cli_page_and_api_give_the_same_p_values_for_the_same_data(
    personas, twenty, tokens, tmp_path, login
):
    # The API took the queries in primary-key order, the CLI in qid order: the seeded
    # randomization test gave different p-values (0.0025 vs 0.0037 on the demo).
    import json

    (tmp_path / "qrels").write_text("\n".join(twenty["qrels"]) + "\n")
    for name, lines in twenty["lines"].items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    out = io.StringIO()
    call_command(
        "compare",
        str(tmp_path / "qrels"),
        str(tmp_path / "classic"),
        str(tmp_path / "bm25"),
        "-m",
        "map",
        "-m",
        "ndcg_cut.10",
        "-m",
        "P_5",
        "--format",
        "json",
        stdout=out,
    )
    cli = json.loads(out.getvalue())["runs"]["bm25"]
    classic, bm25 = twenty["runs"]["classic"], twenty["runs"]["bm25"]
    body = api(
        "compare",
        tokens["viewer"],
        runs=f"{classic.pk},{bm25.pk}",
        level="documents",
        gold="live",
        measure=["map", "ndcg_cut.10", "P_5"],  # trec_eval's names: 400 before
    ).json()
    assert body["queries"] == 20 and body["seed"] == 0
    printed = {"map": "map", "ndcg_cut.10": "ndcg_cut_10", "P_5": "P_5"}  # as trec_eval
    for name, cli_name in printed.items():
        (row,) = body["measures"][name]["runs"]
        for key in ("delta", "p_randomization", "p_holm", "p_t", "p_t_holm"):
            expected = cli[cli_name][key]
            assert row[key] == pytest.approx(expected, rel=1e-12, abs=1e-15), (name, key)
        assert row["significant"] == cli[cli_name]["significant"]
        assert row["significant_t"] == cli[cli_name]["significant_t"]  # the CLI's t column
    page = login(personas["viewer"]).get(
        test_metrics_views.url(
            "compare", level="documents", gold="live", runs=[classic.pk, bm25.pk], measure="map"
        )
    )
    (row,) = page.context["comparison"].measure("map").rows
    assert row.p_randomization == pytest.approx(cli["map"]["p_randomization"], rel=1e-12)


def test_every_status_the_endpoints_answer_is_in_the_openapi_description(
    client, personas, bench, tokens
):
    # Annotators got a 403 on metrics, compare and gate that the description left out.
    from api.openapi import SPEC

    tokens = tokens | {"annotator": ApiToken.create_for(personas["annotator"], "ci")[1]}
    dense, bm25 = bench["runs"]
    calls = {
        "/api/p/{slug}/runs/{id}/metrics/": ("run_metrics", [dense.pk], {"level": "halves"}),
        "/api/p/{slug}/compare/": ("compare", [], {"runs": f"{dense.pk},{bm25.pk}"}),
        "/api/p/{slug}/runs/{id}/gate/": (
            "gate",
            [dense.pk],
            {"baseline": bm25.pk, "measure": "P@10", "max_drop": 0.5, "level": "halves"},
        ),
        "/api/p/{slug}/runs/": ("upload_run", [], {}),
        "/api/p/{slug}/gold/": ("gold_list", [], {}),
        "/api/p/{slug}/sources/compare/": ("sources_compare", [], {"b": "people"}),
    }
    for path, (name, args, params) in calls.items():
        documented = set(SPEC["paths"][path]["get"]["responses"])
        for who in ("owner", "viewer", "annotator", "outsider", "nobody"):
            token = tokens.get(who, "assay_nope")
            for query in (params, {**params, "level": "nowhere"}):
                status = api(name, token, *args, **query).status_code
                assert str(status) in documented, (path, who, query, status)


def test_the_gold_export_carries_its_policy_and_writes_beir_qrels(personas, bench, tokens):
    import json

    from gold.services import ConsensusPolicy, freeze_gold_set

    gold_set = freeze_gold_set(bench["project"], "release", policy=ConsensusPolicy())
    response = api("gold_export", tokens["owner"], gold_set.pk, format="qrels")
    assert response.status_code == 200
    # The page's download carried it; the API's did not: a qrels file has no room for it.
    assert json.loads(response["Assay-Policy"])["level"] == "documents"
    beir = api("gold_export", tokens["owner"], gold_set.pk, format="beir")
    lines = beir.content.decode().splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore" and len(lines[1].split("\t")) == 3
    assert "Assay-Policy" in beir


def test_trec_eval_s_other_measures_by_their_names(personas, bench, tokens):
    run = bench["runs"][0]
    names = ["binG", "relative_P_5", "rbp", "ndcg_rel", "utility"]
    body = api("run_metrics", tokens["viewer"], run.pk, measure=names).json()
    assert set(names) <= set(body["mean"])
    assert all(0 <= body["mean"][n] <= 1 for n in names if n != "utility")
    for refused in ("relstring", "prefs_simp", "gm_bpref"):
        assert api("run_metrics", tokens["viewer"], run.pk, measure=refused).status_code == 400
