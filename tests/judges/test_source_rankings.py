"""Judge against people: run rankings under two sets of label sources, alike on the page,
in the API and from ``manage.py compare_sources``, equal to scipy on the runs' means."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from api.models import ApiToken
from judges.engine import execute_job
from judges.services import plan_job, start_job
from metrics.evaluation import evaluate_run, evaluation_setting
from metrics.models import Run
from numerics.rank_correlation import tau_ap

from .conftest import Sleeps

pytestmark = pytest.mark.django_db


@pytest.fixture
def ranked(judging):
    chunks, queries = judging["chunks"], judging["queries"]
    for (q, c), grade in {(0, 2): 1, (0, 3): 0, (1, 0): 2, (1, 3): 0}.items():
        change_label(
            query=queries[q],
            annotator=judging["annotator"],
            evidence=Evidence.for_chunk(chunks[c]),
            grade=grade,
        )
    job = start_job(
        plan_job(judging["judge"], scope="holes", level="chunk", chunking="c"), enqueue=False
    )
    execute_job(job.pk, sleep=Sleeps())
    rng = np.random.default_rng(3)
    for name in ("dense", "hybrid", "random", "sparse"):
        run = Run(
            project=judging["project"], name=name, level="chunk", chunking=judging["chunking"]
        )
        q = np.repeat([x.pk for x in queries], len(chunks))
        c = np.concatenate([rng.permutation([x.pk for x in chunks]) for _ in queries])
        run.set_results(q, c, np.tile(np.arange(len(chunks), 0, -1, dtype=float), len(queries)))
        run.save()
    return judging


def means(project, sources, measure="nDCG@10"):
    setting = evaluation_setting(project, level="c", k=10, measures=[measure], sources=sources)
    runs = sorted(Run.objects.filter(project=project), key=lambda r: r.name)
    return {r.name: evaluate_run(r, setting.gold, [measure]).mean(measure) for r in runs}


def test_page_api_and_command_agree_with_scipy(ranked, login):
    from scipy.stats import kendalltau

    project = ranked["project"]
    params = {"a": "people,assessors", "b": "judge:fake", "measure": "nDCG@10", "level": "c"}
    token = ApiToken.create_for(ranked["viewer"], "ci")[1]
    answer = login(ranked["viewer"]).get(reverse("api:sources_compare", args=["acme"]), params)
    assert answer.status_code == 401  # the API takes tokens, not sessions
    from django.test import Client

    api = Client().get(
        reverse("api:sources_compare", args=["acme"]),
        params,
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert api.status_code == 200, api.content
    body = api.json()
    assert body["sources"] == {"a": ["people", "assessors"], "b": ["judge:fake"]}
    people, judge = means(project, "people,assessors"), means(project, "judge:fake")
    names = sorted(people)
    assert [r["name"] for r in body["runs"]] == names
    for row in body["runs"]:
        assert row["a"] == pytest.approx(people[row["name"]], abs=1e-12)
        assert row["b"] == pytest.approx(judge[row["name"]], abs=1e-12)
    x, y = [people[n] for n in names], [judge[n] for n in names]
    assert body["tau"] == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    # τ_AP of b's ordering against a's (the reference): numerics.rank_correlation, checked
    # there against the published values.
    assert body["tau_ap"] == pytest.approx(tau_ap(x, y), abs=1e-12)
    flipped = {
        (a, b) for a in names for b in names if people[a] > people[b] and judge[a] < judge[b]
    }
    assert {(f["above"], f["below"]) for f in body["flips"]} == flipped
    # The command prints the same figures.
    out = io.StringIO()
    call_command(
        "compare_sources", "acme", "--a", "people,assessors", "--b", "judge:fake",
        "-m", "nDCG@10", "--level", "c", "--format", "json", stdout=out,
    )  # fmt: skip
    assert json.loads(out.getvalue()) == body
    text = io.StringIO()
    call_command("compare_sources", "acme", "--b", "judge:fake", "--level", "c", stdout=text)
    assert "Kendall's tau" in text.getvalue() and "tau_AP" in text.getvalue()
    # The page shows them.
    page = login(ranked["viewer"]).get(reverse("metrics:source_rankings", args=["acme"]), params)
    assert page.status_code == 200
    shown = page.context["result"]
    assert shown.as_json() == body
    assert 'id="ranking-table"' in page.content.decode()


def test_per_query_correlations_pool_the_queries_both_judge(ranked):
    from scipy.stats import pearsonr

    from metrics.source_rankings import compare_sources

    project = ranked["project"]
    result = compare_sources(project, "people", "judge:fake", "P@5", level="c")
    a_values, b_values = [], []
    for sources, store in (("people", a_values), ("judge:fake", b_values)):
        setting = evaluation_setting(project, level="c", k=10, measures=["P@5"], sources=sources)
        for run in sorted(Run.objects.filter(project=project), key=lambda r: r.name):
            scores = evaluate_run(run, setting.gold, ["P@5"])
            pairs = zip(setting.gold.query_pks.tolist(), scores.values["P@5"], strict=True)
            store.append(dict(pairs))
    x, y = [], []
    for one, two in zip(a_values, b_values, strict=True):
        for pk in sorted(set(one) & set(two)):
            x.append(one[pk])
            y.append(two[pk])
    assert result.pearson == pytest.approx(pearsonr(x, y).statistic, abs=1e-12)


def test_bad_sources_and_roles(ranked, login):
    client = login(ranked["owner"])
    url = reverse("metrics:source_rankings", args=["acme"])
    assert client.get(url, {"b": "judge:nobody"}).status_code == 400
    assert client.get(url, {"b": "judge:fake", "measure": "nDCG@x"}).status_code == 400
    assert login(ranked["annotator"]).get(url, {"b": "judge:fake"}).status_code == 403
    with pytest.raises(Exception, match="no judge"):
        call_command("compare_sources", "acme", "--b", "judge:nobody", stdout=io.StringIO())
