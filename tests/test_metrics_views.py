"""Dashboards, run pages, drill-down judging, comparison and exports."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import openpyxl
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Judgment, Query
from gold.services import ConsensusPolicy, freeze_gold_set
from metrics.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def bench(personas):
    """Six documents of two chunks each, four queries, labels by two annotators, two runs."""
    project = personas["project"]
    rng = np.random.default_rng(1)
    chunking = Chunking.objects.create(project=project, name="halves")
    docs, chunks = [], []
    for d in range(6):
        text = f"Document {d} about wings and lift. " * 3 + f"Second half {d} on drag."
        doc = Document.objects.create(project=project, doc_id=f"d{d}", title=f"T{d}", text=text)
        docs.append(doc)
        middle = len(text) // 2
        for c, (start, end) in enumerate([(0, middle), (middle, len(text))]):
            chunks.append(
                Chunk.objects.create(
                    chunking=chunking, chunk_id=f"d{d}#{c}", document=doc, start=start, end=end
                )
            )
    queries = [
        Query.objects.create(
            project=project, qid=f"q{i}", text=f"question {i}", tags=["odd"] if i % 2 else ["even"]
        )
        for i in range(4)
    ]
    for query in queries:
        for chunk in rng.choice(chunks, 5, replace=False):
            for persona in ("annotator", "annotator2"):
                change_label(
                    query=query,
                    annotator=personas[persona],
                    evidence=Evidence.for_chunk(chunk),
                    grade=int(rng.integers(0, 4)),
                )
    runs = []
    for name in ("dense <b>", "bm25"):
        run = Run(project=project, name=name, level="chunk", chunking=chunking, parameters={"k": 6})
        q = np.repeat([x.pk for x in queries], 6)
        items = np.concatenate(
            [rng.choice([c.pk for c in chunks], 6, replace=False) for _ in queries]
        )
        # Ties on purpose: the tie-break must be trec_eval's in both paths.
        run.set_results(q, items, np.round(rng.random(q.size) * 3) / 2)
        run.save()
        runs.append(run)
    doc_run = Run(project=project, name="docs", level="document")
    doc_run.set_results(
        np.repeat([x.pk for x in queries], 3),
        np.tile([docs[0].pk, docs[1].pk, docs[2].pk], 4),
        np.tile([3.0, 2, 1], 4),
    )
    doc_run.save()
    return {
        "project": project,
        "chunks": chunks,
        "queries": queries,
        "runs": runs,
        "doc_run": doc_run,
        "docs": docs,
    }


def url(name, *args, **params):
    from urllib.parse import urlencode

    base = reverse(f"metrics:{name}", args=["acme", *args])
    return base + ("?" + urlencode(params, doseq=True) if params else "")


def test_dashboard_full_page_and_partial(login, personas, bench):
    client = login(personas["viewer"])
    full = client.get(url("dashboard", level="halves", k=5))
    assert full.status_code == 200 and b"<html" in full.content
    body = full.content.decode()
    assert "dense &lt;b&gt;" in body and "<b>" not in body.split("dashboard-table")[1][:4000]
    assert 'hx-trigger="every 5s, labels-changed from:body"' in body
    partial = client.get(url("dashboard", level="halves", k=5), HTTP_HX_REQUEST="true")
    assert b"<html" not in partial.content and b'id="dashboard-table"' in partial.content
    assert [r["run"].name for r in partial.context["rows"]] == ["bm25", "dense <b>"]
    documents = client.get(url("dashboard", level="documents"))
    assert [r["run"].name for r in documents.context["rows"]] == ["bm25", "dense <b>", "docs"]


@pytest.mark.parametrize(
    "params",
    [
        {"k": 0},
        {"k": "x"},
        {"level": "nope"},
        {"gold": "abc"},
        {"gold": 99999},
        {"mapping": "near"},
    ],
)
def test_bad_dashboard_parameters_are_400(login, personas, bench, params):
    assert login(personas["viewer"]).get(url("dashboard", **params)).status_code == 400


@pytest.mark.parametrize("level", ["halves", "documents", "pages"])
@pytest.mark.parametrize("frozen", [False, True])
def test_dashboard_equals_evaluate_on_exported_files(
    login, personas, bench, tmp_path, level, frozen
):
    """The acceptance check: every dashboard figure = manage.py evaluate on the exports."""
    client = login(personas["owner"])
    params = {"level": level, "k": 3}
    if frozen:
        gold_set = freeze_gold_set(bench["project"], "g", policy=ConsensusPolicy("median"))
        params["gold"] = gold_set.pk
        qrels = client.get(
            reverse("gold:export", args=["acme", gold_set.pk]), {"level": level, "format": "qrels"}
        ).content
    else:
        qrels = client.get(url("qrels_file", **params)).content
    (tmp_path / "gold.qrels").write_bytes(qrels)
    response = client.get(url("dashboard", **params))
    for row in response.context["rows"]:
        run_text = client.get(url("run_file", row["run"].pk, **params)).content
        run_path = tmp_path / "run.trec"
        run_path.write_bytes(run_text)
        out = io.StringIO()
        names = [cell["name"] for cell in row["cells"]]
        call_command(
            "evaluate",
            str(tmp_path / "gold.qrels"),
            str(run_path),
            "--json",
            *[a for n in names for a in ("-m", n)],
            stdout=out,
        )
        expected = json.loads(out.getvalue())["mean"]
        for cell in row["cells"]:
            assert cell["mean"] == pytest.approx(expected[cell["name"]], abs=1e-12), (
                row["run"].name,
                cell["name"],
            )


def test_run_page_sorting_tags_diagnostics_and_partial(login, personas, bench):
    client = login(personas["viewer"])
    run = bench["runs"][0]
    page = client.get(url("run_detail", run.pk, level="halves", k=5))
    assert page.status_code == 200 and b'id="diagnostics"' in page.content
    values = [r["values"]["nDCG@5"] for r in page.context["rows"]]
    assert values == sorted(values)  # worst first
    best_first = client.get(
        url("run_detail", run.pk, level="halves", k=5, sort="P@5", desc=1), HTTP_HX_REQUEST="true"
    )
    assert b"<html" not in best_first.content
    p = [r["values"]["P@5"] for r in best_first.context["rows"]]
    assert p == sorted(p, reverse=True)
    odd = client.get(url("run_detail", run.pk, level="halves", tag="odd"))
    assert {r["query"].qid for r in odd.context["rows"]} == {"q1", "q3"}
    assert page.context["diagnostics"]["n_evidence"] == Judgment.objects.count()
    svg = client.get(url("run_histogram", run.pk, level="halves"))
    assert svg["Content-Type"].startswith("image/svg+xml") and b"<svg" in svg.content
    wrong = client.get(url("run_detail", bench["doc_run"].pk, level="halves"))
    assert wrong.status_code == 400


def test_run_page_diagnostics_are_kept_until_a_label_changes(login, personas, bench):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotator.sources import resolve_sources
    from gold.units import level_units, live_labels
    from numerics.mapping import MappingPolicy, fragmentation
    from numerics.spans import SpanArrays

    client = login(personas["owner"])
    run, project = bench["runs"][0], bench["project"]
    for sources in ("people", "people,assessors"):
        first = client.get(url("run_detail", run.pk, level="halves", sources=sources))
        labels = live_labels(project, sources=resolve_sources(project, sources))
        chunks = level_units(project, "halves")
        expected = fragmentation(  # what the page computed from the database on every view
            SpanArrays(labels.document, labels.start, labels.end),
            SpanArrays(chunks.document, chunks.start, chunks.end),
            grade=labels.grade,
            policy=first.context["setting"].mapping,
            query=labels.query,
        )
        shown = first.context["diagnostics"]
        assert {k: shown[k] for k in expected} == expected
        with CaptureQueriesContext(connection) as read:
            again = client.get(url("run_detail", run.pk, level="halves", sources=sources))
        assert again.context["diagnostics"] == shown
        assert not [q for q in read.captured_queries if "annotator_judgment" in q["sql"]]
    assert isinstance(first.context["setting"].mapping, MappingPolicy)
    before = client.get(url("run_detail", run.pk, level="halves")).context["diagnostics"]
    change_label(
        query=bench["queries"][0],
        annotator=personas["owner"],
        evidence=Evidence.for_chunk(bench["chunks"][0]),
        grade=3,
    )
    after = client.get(url("run_detail", run.pk, level="halves")).context["diagnostics"]
    assert after["n_evidence"] == before["n_evidence"] + 1


def test_run_page_reads_the_queries_of_its_page_only(login, personas, bench, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    import web.pages

    monkeypatch.setattr(web.pages, "PAGE_SIZE", 2)
    client = login(personas["owner"])
    with CaptureQueriesContext(connection) as read:
        page = client.get(url("run_detail", bench["runs"][0].pk, level="halves", tag="odd"))
    assert sorted(r["query"].qid for r in page.context["rows"]) == ["q1", "q3"]
    assert page.context["tags"] == ["even", "odd"]
    # One read of query texts, of the page's two queries (not every judged query's).
    texts = [q["sql"] for q in read.captured_queries if '"annotator_query"."text"' in q["sql"]]
    assert len(texts) == 1
    assert texts[0].split(" IN (")[1].split(")")[0].count(",") == 1
    whole = client.get(url("run_detail", bench["runs"][0].pk, level="halves"))
    assert len(whole.context["rows"]) == 2 and whole.context["page"].paginator.count == 4


def test_run_histogram_reads_no_query(login, personas, bench):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from metrics import charts

    client = login(personas["owner"])
    run = bench["runs"][0]
    page = client.get(url("run_detail", run.pk, level="halves", k=5, sort="P@5"))
    with CaptureQueriesContext(connection) as read:
        svg = client.get(url("run_histogram", run.pk, level="halves", k=5, sort="P@5"))
    assert not [q for q in read.captured_queries if "annotator_query" in q["sql"]]
    by_pk = sorted(page.context["rows"], key=lambda r: r["query"].pk)
    title = f"P@5 per query · {run.name}"
    expected = charts.histogram(title, [r["values"]["P@5"] for r in by_pk])
    assert svg.content.decode() == expected


def test_drilldown_grades_in_place(login, personas, bench):
    client = login(personas["adjudicator"])
    run, query = bench["runs"][0], bench["queries"][0]
    page = client.get(
        url("run_query", run.pk, query.qid, level="halves", k=3, other=bench["runs"][1].pk)
    )
    assert page.status_code == 200 and b'id="ranking-other"' in page.content
    unjudged = [i for i in page.context["items"] if i["grade"] is None]
    assert unjudged, "the fixture leaves unjudged items in every ranking"
    target = unjudged[0]
    response = client.post(
        url("judge", run.pk, query.qid, level="halves", k=3),
        {"unit": target["unit"], "grade": 3},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200 and response["HX-Trigger"] == "labels-changed"
    assert b"<html" not in response.content
    judged = next(i for i in response.context["items"] if i["unit"] == target["unit"])
    assert judged["grade"] == 3
    label = Judgment.objects.get(
        annotator=personas["adjudicator"], chunk__chunk_id=target["id"], query=query
    )
    assert label.grade == 3 and label.history.count() == 1


def test_drilldown_judging_needs_a_labelling_role_and_csrf(login, personas, bench):
    run, query = bench["runs"][0], bench["queries"][0]
    target = url("judge", run.pk, query.qid, level="halves")
    assert login(personas["viewer"]).post(target, {"unit": 0, "grade": 1}).status_code == 403
    # Annotators label blind: a drill-down shows everyone's grades (tests/test_blind_labelling).
    assert login(personas["annotator"]).post(target, {"unit": 0, "grade": 1}).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(personas["adjudicator"])
    assert strict.post(target, {"unit": 0, "grade": 1}).status_code == 403
    assert login(personas["adjudicator"]).post(target, {"unit": 0, "grade": 9}).status_code == 400
    other_project = reverse("metrics:judge", args=["other", run.pk, query.qid])
    assert (
        login(personas["outsider"]).post(other_project, {"unit": 0, "grade": 1}).status_code == 404
    )


def test_document_and_page_level_grades_become_spans(login, personas, bench):
    client = login(personas["owner"])
    run, query = bench["doc_run"], bench["queries"][1]
    page = client.get(url("run_query", run.pk, query.qid, level="documents"))
    unit = page.context["items"][0]["unit"]
    client.post(url("judge", run.pk, query.qid, level="documents"), {"unit": unit, "grade": 2})
    label = Judgment.objects.get(annotator=personas["owner"], granularity="document")
    assert (label.start, label.end) == (0, len(label.document.text))


def test_compare_two_and_several_runs(login, personas, bench):
    client = login(personas["viewer"])
    a, b = bench["runs"]
    page = client.get(url("compare", level="halves", runs=[a.pk, b.pk]))
    assert page.status_code == 200
    assert page.context["baseline"] == a  # no baseline given: the first run of the URL
    ndcg = page.context["comparison"].measure("nDCG@10")
    row = ndcg.rows[0]
    assert row.wins + row.ties + row.losses == 4 and 0 < row.p_randomization <= 1
    assert b"delta-chart" in page.content and b"Holm" in page.content
    assert b'href="data:image/svg+xml;charset=utf-8,%3Csvg' in page.content
    several = client.get(
        url("compare", level="documents", runs=[a.pk, b.pk, bench["doc_run"].pk]),
        HTTP_HX_REQUEST="true",
    )
    assert b"<html" not in several.content
    assert all(len(m.rows) == 2 for m in several.context["comparison"].measures)
    assert client.get(url("compare", runs=["x"])).status_code == 400


def test_exports(login, personas, bench):
    client = login(personas["viewer"])
    run = bench["runs"][0]
    text = client.get(url("export", level="halves", format="csv")).content.decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:3] == ["run", "run id", "level"] and {r[0] for r in rows[1:]} == {
        "bm25",
        "dense <b>",
    }
    per_query = client.get(url("export", level="halves", format="xlsx", run=run.pk))
    book = openpyxl.load_workbook(io.BytesIO(per_query.content))
    assert book["metrics"].max_row == 5  # header + 4 queries
    chart = client.get(url("dashboard_chart", level="halves"))
    assert chart["Content-Disposition"].endswith('.svg"')
    assert b"dense &lt;b&gt;" in chart.content
    assert client.get(url("export", format="pdf")).status_code == 400


def test_drilldown_grade_records_the_seconds_spent(login, personas, bench):
    from annotator.assignments import MAX_STEP_SECONDS
    from annotator.models import JudgmentHistory

    client = login(personas["adjudicator"])
    run, query = bench["runs"][0], bench["queries"][0]
    judge = url("judge", run.pk, query.qid, level="halves", k=3)
    # Units are the chunks in pk order; grade 3 must be a change for each one used.
    units = [
        index
        for index, chunk in enumerate(bench["chunks"])
        if not Judgment.objects.filter(
            query=query, annotator=personas["adjudicator"], chunk=chunk, grade=3
        ).exists()
    ]
    for unit, elapsed, expected in zip(
        units, ["12.5", "1e9", "x"], [12.5, MAX_STEP_SECONDS, None], strict=False
    ):
        response = client.post(judge, {"unit": unit, "grade": 3, "elapsed": elapsed})
        assert response.status_code == 200
        history = JudgmentHistory.objects.filter(query=query).latest("pk")
        assert history.chunk_id == bench["chunks"][unit].chunk_id and history.new_grade == 3
        timing = getattr(history, "timing", None)
        assert (timing.seconds if timing else None) == expected
    page = client.get(url("run_query", run.pk, query.qid, level="halves"))
    assert b"data-timed" in page.content  # the browser sends `elapsed` with each grade


def test_qrels_downloads_carry_their_policy(login, personas, bench):
    """A qrels file has no room for the policy, so both qrels downloads name it in the
    ``Assay-Policy`` header: the live setting's (the project's mapping) and a version's."""
    project = bench["project"]
    project.mapping = "contains"
    project.save()
    client = login(personas["owner"])
    live = client.get(url("qrels_file", level="documents"))
    assert json.loads(live["Assay-Policy"])["mapping"] == "contains"
    assert json.loads(live["Assay-Policy"])["gold"] == "live"
    gold_set = freeze_gold_set(project, "g", policy=ConsensusPolicy("median"))
    frozen = client.get(
        reverse("gold:export", args=["acme", gold_set.pk]),
        {"level": "documents", "format": "qrels"},
    )
    policy = json.loads(frozen["Assay-Policy"])
    assert policy["rule"] == "median" and policy["mapping"] == "contains"
