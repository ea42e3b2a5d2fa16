"""On a slice of the Cranfield demo with a judge that labelled the pool's holes: every
default number stands on people + assessors only — dashboard, drill-down, API metrics and
qrels download equal ``evaluate`` on the qrels of those labels — choosing ``judge:<slug>``
changes them and says so, and the API and the pages agree for every measure and level."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotator.chunking import window_spans
from annotator.evidence import Evidence
from annotator.importing import import_chunks, import_documents, import_queries, run_import
from annotator.labels import change_label
from annotator.models import Chunk, Judgment
from api.models import ApiToken
from demo.loading import DEMO_DIR
from judges.engine import execute_job
from judges.services import plan_job, start_job
from metrics.baseline import bm25_run
from metrics.evaluation import MEASURE_CATALOGUE, measure_name
from metrics.models import Run

from .conftest import KEY, KEY_ENV, Sleeps, fake_judge
from .fake_llm import FakeLLM
from .test_demo_holes import demo_slice, plan_job_pool, rows  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db
MEASURES = [measure_name(m, 10) for m in MEASURE_CATALOGUE]


@pytest.fixture
def lecard_slice(personas, monkeypatch, tmp_path):
    """A slice of the LeCaRD demo (Chinese criminal cases): two queries, the documents the
    experts graded for them and as many others, the demo's chunking and BM25 run, the
    experts' document-level labels imported as ``lecard-experts``."""
    project = personas["project"]
    folder = DEMO_DIR / "lecard"
    qrels = [line.split() for line in (folder / "qrels.txt").read_text().splitlines() if line]
    qids = list(dict.fromkeys(row[0] for row in qrels))[:2]
    graded = sorted({row[2] for row in qrels if row[0] in qids})[:20]
    others = []
    wanted = set(graded)

    def documents():
        with open(folder / "documents.jsonl", encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if row["doc_id"] in wanted or len(others) < len(graded):
                    if row["doc_id"] not in wanted:
                        others.append(row["doc_id"])
                    yield row

    import_documents(project, enumerate(documents(), start=1))
    queries = [r for _n, r in rows(folder / "queries.jsonl", 1000) if r["qid"] in qids]
    import_queries(project, enumerate(queries, start=1))

    def chunk_rows():
        number = 0
        for doc_id, text in project.documents.values_list("doc_id", "text"):
            for index, (start, end) in enumerate(window_spans(text, 256, 32)):
                number += 1
                chunk = {"chunk_id": f"{doc_id}#{index}", "doc_id": doc_id}
                yield number, {**chunk, "start": start, "end": end}

    import_chunks(project, chunk_rows(), chunking="tokens-256-32", parameters={"size": 256})
    chunking = project.chunkings.get()
    bm25_run(project, chunking=chunking, k=20)
    path = tmp_path / "experts.qrels"
    path.write_text(
        "".join(" ".join(row) + "\n" for row in qrels if row[0] in qids and row[2] in wanted)
    )
    run_import(
        "labels", project, path, options={"annotator": "lecard-experts", "level": "document"}
    )
    monkeypatch.setenv(KEY_ENV, KEY)
    return project, chunking


def judge_the_holes(personas, project, chunking):
    """A person grades the first three pooled chunks of two queries; the fake judge then
    grades every hole of the pool (what neither people nor assessors judged)."""
    pool = plan_job_pool(project, chunking)
    for query in project.queries.order_by("pk")[:2]:
        for chunk in Chunk.objects.filter(pk__in=pool[query.pk][:3]):
            change_label(
                query=query,
                annotator=personas["annotator"],
                evidence=Evidence.for_chunk(chunk),
                grade=2,
            )
    with FakeLLM(KEY) as server:
        judge = fake_judge(project, server, name="Fake", budget=1000)
        plan = plan_job(judge, scope="holes", level="chunk", chunking=chunking.name)
        execute_job(start_job(plan, enqueue=False).pk, sleep=Sleeps())
    assert Judgment.objects.filter(annotator=judge.current.annotator).exists()
    token = ApiToken.create_for(personas["owner"], "ci")[1]
    return project, chunking, token


@pytest.fixture
def judged_demo(personas, demo_slice):  # noqa: F811
    return judge_the_holes(personas, *demo_slice)


@pytest.fixture
def judged_lecard(personas, lecard_slice):
    return judge_the_holes(personas, *lecard_slice)


def download(client, name, **params):
    response = client.get(reverse(name, args=["acme"]), params)
    assert response.status_code == 200, response.content
    return response


@pytest.mark.parametrize("demo", ["judged_demo", "judged_lecard"])
def test_default_numbers_equal_evaluate_on_the_qrels_of_people_and_assessors(
    demo, request, login, tmp_path
):
    project, chunking, token = request.getfixturevalue(demo)
    client = login(project.memberships.get(role="owner").user)
    run = Run.objects.get(project=project)
    api = Client()
    for level in ("documents", chunking.name):
        default_qrels = download(client, "metrics:qrels_file", level=level)
        explicit = download(client, "metrics:qrels_file", level=level, sources="people,assessors")
        judged = download(client, "metrics:qrels_file", level=level, sources="judge:fake")
        assert default_qrels.content == explicit.content
        assert json.loads(default_qrels["Assay-Policy"])["sources"] == ["people", "assessors"]
        assert json.loads(judged["Assay-Policy"])["sources"] == ["judge:fake"]
        assert judged.content != default_qrels.content
        qrels = tmp_path / f"{level}.qrels"
        qrels.write_bytes(default_qrels.content)
        run_file = tmp_path / f"{level}.run"
        run_url = reverse("metrics:run_file", args=["acme", run.pk])
        run_file.write_bytes(client.get(run_url, {"level": level}).content)
        out = io.StringIO()
        call_command(
            "evaluate", str(qrels), str(run_file), "-m", "nDCG@10", "-m", "P@5", "-m", "RR",
            "--json", "--per-query", stdout=out,
        )  # fmt: skip
        evaluated = json.loads(out.getvalue())
        expected = evaluated["mean"]
        dashboard = reverse("metrics:dashboard", args=["acme"])
        page = client.get(dashboard, {"level": level, "k": 10})
        assert 'id="sources-line"' in page.content.decode()
        row = next(r for r in page.context["rows"] if r["run"].pk == run.pk)
        assert row["scores"].mean("nDCG@10") == pytest.approx(expected["nDCG@10"], abs=1e-12)
        # Every drill-down of the default setting: the query's values equal evaluate's.
        measures = {"level": level, "k": 10, "measure": ["nDCG@10", "P@5", "RR"]}
        for qid, values in evaluated["per_query"].items():
            drill = client.get(reverse("metrics:run_query", args=["acme", run.pk, qid]), measures)
            shown = dict(drill.context["query_values"])
            for name in ("nDCG@10", "P@5", "RR"):
                assert shown[name] == pytest.approx(values[name], abs=1e-12), (qid, name)
        # Choosing the judge on the page changes the numbers, and the page says so.
        chosen = client.get(dashboard, {"level": level, "k": 10, "sources": "judge:fake"})
        assert 'data-sources="judge:fake"' in chosen.content.decode()
        assert "judge fake (latest version: v1)" in chosen.content.decode()
        judged_row = next(r for r in chosen.context["rows"] if r["run"].pk == run.pk)
        assert judged_row["judged"] != row["judged"]
        answer = api.get(
            reverse("api:run_metrics", args=["acme", run.pk]),
            {"level": level, "measure": ["nDCG@10", "P@5", "RR"]},
            HTTP_AUTHORIZATION=f"Bearer {token}",
        ).json()
        assert answer["sources"] == ["people", "assessors"]
        for name in ("nDCG@10", "P@5", "RR"):
            assert answer["mean"][name] == pytest.approx(expected[name], abs=1e-12)
        assert set(answer["coverage"]) == {"people", "assessors", "unjudged"}
        assert answer["coverage"]["unjudged"] == pytest.approx(1 - answer["judged"])
        # The judge's labels change the numbers, and the answer says so.
        with_judge = api.get(
            reverse("api:run_metrics", args=["acme", run.pk]),
            {"level": level, "measure": ["nDCG@10"], "sources": "people,assessors,judge:fake"},
            HTTP_AUTHORIZATION=f"Bearer {token}",
        ).json()
        assert with_judge["sources"] == ["people", "assessors", "judge:fake"]
        assert with_judge["gold"]["sources"] == ["people", "assessors", "judge:fake"]
        assert with_judge["judged"] > answer["judged"]
        assert "judge:fake" in with_judge["coverage"]
    # The drill-down of a query stands on the same sources.
    query = project.queries.order_by("pk").first()
    drill = client.get(
        reverse("metrics:run_query", args=["acme", run.pk, query.qid]), {"level": chunking.name}
    )
    body = drill.content.decode()
    assert 'data-sources="people,assessors"' in body and 'id="query-coverage"' in body


@pytest.mark.parametrize("sources", ["", "judge:fake", "people,judges"])
def test_api_and_pages_agree_on_every_measure_and_level(judged_demo, login, sources):
    project, chunking, token = judged_demo
    client = login(project.memberships.get(role="owner").user)
    run = Run.objects.get(project=project)
    for level in ("own", "documents", "pages", chunking.name):
        params = {"level": level, "k": 10, "measure": MEASURE_CATALOGUE, "sources": sources}
        page = client.get(reverse("metrics:dashboard", args=["acme"]), params)
        assert page.status_code == 200
        row = next(r for r in page.context["rows"] if r["run"].pk == run.pk)
        answer = (
            Client()
            .get(
                reverse("api:run_metrics", args=["acme", run.pk]),
                params,
                HTTP_AUTHORIZATION=f"Bearer {token}",
            )
            .json()
        )
        assert answer["sources"] == page.context["setting"].source_names
        for name in MEASURES:
            assert answer["mean"][name] == row["scores"].mean(name), (level, name)
        assert answer["coverage"] == pytest.approx(row["coverage"])
