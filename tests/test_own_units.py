"""Level "each run's own units": every run on its own chunks (or documents), one table.

The acceptance check: each figure equals ``manage.py evaluate`` on the qrels exported at
the run's level and on the run's exported file — on a demo-shaped project (two chunkings,
passage and document labels, chunk and document runs) and, with ``--slow``, on both demo
projects as ``manage.py demo`` builds them (``tests/test_own_units_demo.py``).
"""

from __future__ import annotations

import io
import json
from urllib.parse import urlencode

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from gold.services import ConsensusPolicy, freeze_gold_set
from metrics.models import Run

pytestmark = pytest.mark.django_db


def _url(slug: str, name: str, *args, **params) -> str:
    return reverse(f"metrics:{name}", args=[slug, *args]) + "?" + urlencode(params)


@pytest.fixture
def two_chunkings(personas):
    """Eight documents cut in halves and in thirds, five queries labelled by passages and
    whole documents, a chunk run over each chunking and a document run."""
    project = personas["project"]
    rng = np.random.default_rng(7)
    halves = Chunking.objects.create(project=project, name="tokens-512-64")
    thirds = Chunking.objects.create(project=project, name="tokens-256-32")
    documents = []
    for d in range(8):
        text = f"Document {d} on wings, lift and drag at transonic speed. " * 6
        document = Document.objects.create(project=project, doc_id=f"d{d}", title="", text=text)
        documents.append(document)
        for chunking, parts in ((halves, 2), (thirds, 3)):
            bounds = np.linspace(0, len(text), parts + 1).astype(int)
            for c in range(parts):
                Chunk.objects.create(
                    chunking=chunking,
                    chunk_id=f"d{d}#{c}",
                    document=document,
                    start=int(bounds[c]),
                    end=int(bounds[c + 1]),
                )
    queries = [Query.objects.create(project=project, qid=f"q{i}", text=f"q {i}") for i in range(5)]
    for query in queries:
        for document in rng.choice(documents, 3, replace=False):
            start = int(rng.integers(0, len(document.text) - 40))
            change_label(
                query=query,
                annotator=personas["annotator"],
                evidence=Evidence.for_passage(document, start, start + 30),
                grade=int(rng.integers(0, 4)),
            )
        change_label(
            query=query,
            annotator=personas["annotator2"],
            evidence=Evidence.for_document(documents[int(rng.integers(0, 8))]),
            grade=int(rng.integers(1, 4)),
        )
    for chunking in (halves, thirds):
        pks = list(chunking.chunks.values_list("pk", flat=True))
        for name in ("bm25", "dense"):
            run = Run(
                project=project,
                name=f"{name} · {chunking.name}",
                level="chunk",
                chunking=chunking,
            )
            q = np.repeat([x.pk for x in queries], 8)
            items = np.concatenate([rng.choice(pks, 8, replace=False) for _ in queries])
            run.set_results(q, items, np.round(rng.random(q.size) * 4) / 2)  # ties on purpose
            run.save()
    doc_run = Run(project=project, name="docs", level="document")
    doc_run.set_results(
        np.repeat([x.pk for x in queries], 4),
        np.tile([d.pk for d in documents[:4]], 5),
        np.tile([4.0, 3, 3, 1], 5),
    )
    doc_run.save()
    return project


def _check_against_evaluate(client, slug: str, tmp_path, params: dict, gold_set=None) -> int:
    """Every cell of the own-units dashboard = ``evaluate`` on the exported files; returns
    how many rows were checked."""
    response = client.get(_url(slug, "dashboard", level="own", **params))
    assert response.status_code == 200
    rows = response.context["rows"]
    for row in rows:
        level = row["unit_level"]
        if gold_set is None:
            qrels = client.get(_url(slug, "qrels_file", level=level, **params)).content
        else:
            qrels = client.get(
                reverse("gold:export", args=[slug, gold_set.pk]),
                {"level": level, "format": "qrels"},
            ).content
        (tmp_path / "gold.qrels").write_bytes(qrels)
        run_file = client.get(_url(slug, "run_file", row["run"].pk, level="own", **params))
        assert run_file.status_code == 200
        (tmp_path / "run.trec").write_bytes(run_file.content)
        out = io.StringIO()
        names = [cell["name"] for cell in row["cells"]]
        call_command(
            "evaluate",
            str(tmp_path / "gold.qrels"),
            str(tmp_path / "run.trec"),
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
    return len(rows)


def test_own_units_is_the_default_with_several_chunkings(login, personas, two_chunkings):
    client = login(personas["viewer"])
    response = client.get(reverse("metrics:dashboard", args=["acme"]))
    assert response.context["setting"].level == "own"
    levels = {r["run"].name: (r["unit_level"], r["n_units"]) for r in response.context["rows"]}
    assert levels == {
        "bm25 · tokens-256-32": ("tokens-256-32", 24),
        "dense · tokens-256-32": ("tokens-256-32", 24),
        "bm25 · tokens-512-64": ("tokens-512-64", 16),
        "dense · tokens-512-64": ("tokens-512-64", 16),
        "docs": ("documents", 8),
    }
    body = response.content.decode()
    assert 'id="own-units-note"' in body and "recall" in body
    # At one chunking's level only its runs and the lifted levels' runs appear.
    chunk = client.get(_url("acme", "dashboard", level="tokens-256-32"))
    assert [r["run"].name for r in chunk.context["rows"]] == [
        "bm25 · tokens-256-32",
        "dense · tokens-256-32",
    ]
    assert 'id="own-units-note"' not in chunk.content.decode()


def test_single_chunking_defaults_to_documents(login, personas, two_chunkings):
    from django.utils import timezone

    # Archived runs do not count: one chunking left among the active runs.
    Run.objects.filter(chunking__name="tokens-512-64").update(archived_at=timezone.now())
    response = login(personas["viewer"]).get(reverse("metrics:dashboard", args=["acme"]))
    assert response.context["setting"].level == "documents"


@pytest.mark.parametrize("frozen", [False, True])
def test_own_units_equals_evaluate_on_exported_files(
    login, personas, two_chunkings, tmp_path, frozen
):
    client = login(personas["owner"])
    params = {"k": 5}
    gold_set = None
    if frozen:
        gold_set = freeze_gold_set(two_chunkings, "g", policy=ConsensusPolicy("max"))
        params["gold"] = gold_set.pk
    assert _check_against_evaluate(client, "acme", tmp_path, params, gold_set) == 5


def test_document_label_share_warning(login, personas, two_chunkings):
    """Mostly whole-document labels at chunk level: the dashboard says so, with the share."""
    client = login(personas["viewer"])
    body = client.get(_url("acme", "dashboard", level="own")).content.decode()
    assert 'id="document-label-warning"' not in body  # passages are most of the labels
    project = two_chunkings
    for query in project.queries.all():
        for document in project.documents.all()[:4]:
            change_label(
                query=query,
                annotator=personas["adjudicator"],
                evidence=Evidence.for_document(document),
                grade=2,
            )
    body = client.get(_url("acme", "dashboard", level="own")).content.decode()
    warning = body.split('id="document-label-warning">')[1].split("</p>")[0]
    from metrics.evaluation import document_label_share

    share = document_label_share(project, None)
    assert share > 0.5 and f"({share * 100:.0f} %)" in warning
    # At document level the share changes nothing: no warning.
    body = client.get(_url("acme", "dashboard", level="documents")).content.decode()
    assert 'id="document-label-warning"' not in body


def test_own_level_reaches_run_page_drilldown_and_compare(login, personas, two_chunkings):
    client = login(personas["owner"])
    runs = {r.name: r for r in Run.objects.filter(project=two_chunkings)}
    small, large = runs["bm25 · tokens-256-32"], runs["bm25 · tokens-512-64"]
    page = client.get(_url("acme", "run_detail", small.pk, level="own"))
    assert page.status_code == 200 and page.context["setting"].level == "tokens-256-32"
    query = two_chunkings.queries.get(qid="q0")
    drill = client.get(_url("acme", "run_query", small.pk, query.qid, level="own"))
    assert drill.status_code == 200
    compare = client.get(
        reverse("metrics:compare", args=["acme"])
        + f"?level=own&runs={small.pk}&runs={large.pk}&runs={runs['docs'].pk}"
    )
    assert compare.status_code == 200 and compare.context["baseline"] == small
    assert all(len(m.rows) == 2 for m in compare.context["comparison"].measures)
