"""A judging job over the holes of a slice of the Cranfield demo: real documents, the demo's
chunking and BM25 run, the demo assessors' imported labels (a pseudo-annotator, so not
"people") and one person's labels; the fake endpoint answers deterministic grades."""

from __future__ import annotations

import json
from itertools import islice

import pytest

from annotator.chunking import window_spans
from annotator.evidence import Evidence
from annotator.importing import import_chunks, import_documents, import_queries, run_import
from annotator.labels import change_label
from annotator.models import Chunk, Judgment
from demo.loading import DEMO_DIR
from judges.engine import execute_job
from judges.models import PairStatus
from judges.services import plan_job, start_job
from metrics.baseline import bm25_run

from .conftest import KEY, KEY_ENV, Sleeps, fake_judge
from .fake_llm import FakeLLM

pytestmark = pytest.mark.django_db
N_DOCUMENTS, N_QUERIES = 60, 3


def rows(path, n):
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(islice(handle, n), start=1):
            yield number, json.loads(line)


@pytest.fixture
def demo_slice(personas, monkeypatch, tmp_path):
    project = personas["project"]
    folder = DEMO_DIR / "cranfield"
    import_documents(project, rows(folder / "documents.jsonl", N_DOCUMENTS))
    import_queries(project, rows(folder / "queries.jsonl", N_QUERIES))

    def chunk_rows():
        number = 0
        for doc_id, text in project.documents.values_list("doc_id", "text"):
            for index, (start, end) in enumerate(window_spans(text, 256, 32)):
                number += 1
                yield (
                    number,
                    {"chunk_id": f"{doc_id}#{index}", "doc_id": doc_id, "start": start, "end": end},
                )

    import_chunks(project, chunk_rows(), chunking="tokens-256-32", parameters={"size": 256})
    chunking = project.chunkings.get()
    bm25_run(project, chunking=chunking, k=20)
    known = set(project.documents.values_list("doc_id", flat=True))
    qrels = [
        line
        for line in (folder / "qrels.txt").read_text().splitlines()
        if line.split()[0] in {"1", "2", "3"} and line.split()[2] in known
    ]
    path = tmp_path / "assessors.qrels"
    path.write_text("\n".join(qrels) + "\n")
    run_import(
        "labels", project, path, options={"annotator": "cranfield-assessors", "level": "document"}
    )
    monkeypatch.setenv(KEY_ENV, KEY)
    return project, chunking


def test_job_over_the_demo_holes(personas, demo_slice):
    project, chunking = demo_slice
    query = project.queries.order_by("pk").first()
    pool = plan_job_pool(project, chunking)
    # A person grades the first two pooled chunks of the first query: no longer holes.
    first = [Chunk.objects.get(pk=pk) for pk in pool[query.pk][:2]]
    for chunk in first:
        change_label(
            query=query,
            annotator=personas["annotator"],
            evidence=Evidence.for_chunk(chunk),
            grade=2,
        )
    with FakeLLM(KEY) as server:
        judge = fake_judge(project, server, name="Fake", budget=1000)
        plan = plan_job(judge, scope="holes", level="chunk", chunking=chunking.name)
        n_pool = sum(len(v) for v in pool.values())
        assert len(plan.pairs) == n_pool - 2  # the assessors' labels are not people's
        job = execute_job(start_job(plan, enqueue=False).pk, sleep=Sleeps())
        assert (
            job.pairs.filter(status=PairStatus.JUDGED).count()
            == job.n_pairs
            == len(server.requests)
        )
        assert job.calls == job.n_pairs and job.retries == 0
        labels = Judgment.objects.filter(annotator=job.version.annotator)
        assert labels.count() == job.n_pairs
        for label in labels.select_related("chunk", "document")[:50]:
            passage = label.document.text[label.start : label.end]
            assert label.grade == len(passage) % 4  # the server's deterministic grade
        assert not labels.filter(query=query, chunk__in=first).exists()
        again = plan_job(judge, scope="holes", level="chunk", chunking=chunking.name)
        assert again.pairs == [] and again.already == job.n_pairs


def plan_job_pool(project, chunking) -> dict[int, list[int]]:
    """Each query's pooled chunk pks: the top pool_depth of the BM25 run."""
    from judges.scope import scope_pairs

    pool: dict[int, list[int]] = {}
    for pair in scope_pairs(project, scope="pool", level="chunk", chunking=chunking):
        pool.setdefault(pair.query, []).append(pair.chunk)
    return pool
