"""Every list paginates: a page of rows, a pager that keeps the other parameters, the
rest on the next page, a bad page number a 400 (web.pages.page_of)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import numpy as np
import pytest
from django.urls import reverse

import web.pages
from annotator.models import Document, ImportJob, Membership, Project, Query, Role

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def small_pages(monkeypatch):
    monkeypatch.setattr(web.pages, "PAGE_SIZE", 2)


def projects(personas, corpus):
    for i in range(2):
        project = Project.objects.create(slug=f"pp{i}", name=f"paged-project-{i}")
        Membership.objects.create(project=project, user=personas["owner"], role=Role.VIEWER)
    return reverse("annotator:project_list"), ["Acme search", "paged-project-0", "paged-project-1"]


def documents(personas, corpus):
    Document.objects.bulk_create(
        [Document(project=personas["project"], doc_id=f"paged-doc-{i}", text="t") for i in range(2)]
    )
    return reverse("annotator:document_list", args=["acme"]), [">d1<", "paged-doc-0", "paged-doc-1"]


def queries(personas, corpus):
    Query.objects.bulk_create(
        [Query(project=personas["project"], qid=f"paged-q-{i}", text="t") for i in range(2)]
    )
    return reverse("annotator:query_list", args=["acme"]), [">q1<", "paged-q-0", "paged-q-1"]


def members(personas, corpus):
    names = [f"<td>{n}" for n in ("adam", "alice", "anna", "arno", "vera")]
    return reverse("annotator:members", args=["acme"]), names


def labels(personas, corpus):
    from annotator.evidence import Evidence
    from annotator.labels import change_label

    for key in ("owner", "adjudicator", "annotator"):
        change_label(
            query=corpus["query"],
            annotator=personas[key],
            evidence=Evidence.for_chunk(corpus["chunk"]),
            grade=1,
        )
    url = reverse("annotator:query_detail", args=["acme", corpus["query"].pk])
    return url, ["<td>adam</td>", "<td>alice</td>", "<td>anna</td>"]


def _runs(personas, corpus, archived):
    from metrics.models import Run

    for i in range(3):
        run = Run(
            project=personas["project"],
            name=f"{'old' if archived else 'new'}-run-{i}",
            level="chunk",
            chunking=corpus["chunking"],
            archived_at=datetime(2026, 1, 1, tzinfo=UTC) if archived else None,
        )
        run.set_results(np.array([corpus["query"].pk]), np.array([corpus["chunk"].pk]), np.ones(1))
        run.save()
    return reverse("metrics:runs", args=["acme"])


def active_runs(personas, corpus):
    return _runs(personas, corpus, False), ["new-run-0", "new-run-1", "new-run-2"]


def archived_runs(personas, corpus):
    return _runs(personas, corpus, True), ["old-run-0", "old-run-1", "old-run-2"]


def gold_sets(personas, corpus):
    from gold.services import ConsensusPolicy, freeze_gold_set

    for i in range(3):
        freeze_gold_set(personas["project"], f"paged-gold-{i}", policy=ConsensusPolicy())
    return reverse("gold:list", args=["acme"]), [f"paged-gold-{i}" for i in range(3)]


def import_jobs(personas, corpus):
    for i in range(3):
        ImportJob.objects.create(project=personas["project"], kind="queries", filename=f"f-{i}.csv")
    return reverse("annotator:import_upload", args=["acme"]), [f"f-{i}.csv" for i in range(3)]


def judge_jobs(personas, corpus):
    from judges.models import JudgeJob
    from judges.services import create_judge

    judge = create_judge(
        personas["project"],
        slug="j",
        name="J",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        api_key_env="ASSAY_JUDGE_KEY_J",
        by_operator=True,
    )
    jobs = [
        JudgeJob.objects.create(version=judge.current, scope="pool", budget=10) for _ in range(3)
    ]
    url = reverse("judges:detail", args=["acme", judge.pk])
    return url, [f'/judges/jobs/{job.pk}/"' for job in jobs]


LISTS = {
    "projects": (projects, "page"),
    "documents": (documents, "page"),
    "queries": (queries, "page"),
    "members": (members, "page"),
    "labels of a query": (labels, "page"),
    "runs": (active_runs, "page"),
    "archived runs": (archived_runs, "archived_page"),
    "gold sets": (gold_sets, "page"),
    "import jobs": (import_jobs, "page"),
    "judge jobs": (judge_jobs, "page"),
}


@pytest.mark.parametrize("name", LISTS)
def test_every_list_paginates(login, personas, corpus, name):
    setup, parameter = LISTS[name]
    url, items = setup(personas, corpus)
    client = login(personas["owner"])
    seen: list[set[str]] = []
    number = 1
    while True:
        response = client.get(url, {parameter: number, "keep": "x"})
        assert response.status_code == 200, (name, number)
        body = response.content.decode()
        seen.append({item for item in items if item in body})
        assert len(seen[-1]) <= 2, (name, number, seen[-1])
        pager = re.search(f'<nav class="pager" data-parameter="{parameter}">.*?</nav>', body, re.S)
        assert pager, (name, number)
        link = re.search(r'rel="next" href="([^"]+)"', pager.group())
        if link is None:
            break
        assert f"{parameter}={number + 1}" in link.group(1) and "keep=x" in link.group(1)
        number += 1
    assert number == (len(items) + 1) // 2, name
    assert set().union(*seen) == set(items) and sum(map(len, seen)) == len(items), (name, seen)
    assert client.get(url, {parameter: "x"}).status_code == 400
    assert client.get(url, {parameter: "0"}).status_code == 400
    # Past the end: the last page, not an error.
    assert client.get(url, {parameter: 99}).status_code == 200


def test_the_adjudication_queue_shows_a_page_of_queries(login, personas, corpus, monkeypatch):
    from annotator.evidence import Evidence
    from annotator.labels import change_label
    from gold import views as gold_views

    monkeypatch.setattr(gold_views, "QUEUE_QUERIES", 2)
    queries = [corpus["query"]] + [
        Query.objects.create(project=personas["project"], qid=f"disputed-{i}", text="t")
        for i in range(2)
    ]
    for query in queries:
        for key, grade in (("annotator", 0), ("annotator2", 3)):
            change_label(
                query=query,
                annotator=personas[key],
                evidence=Evidence.for_chunk(corpus["chunk"]),
                grade=grade,
            )
    client = login(personas["owner"])
    url = reverse("gold:queue", args=["acme"])
    first = client.get(url, {"level": "documents"}).content.decode()
    second = client.get(url, {"level": "documents", "page": 2}).content.decode()
    shown = [re.findall(r'data-qid="([^"]+)"', body) for body in (first, second)]
    assert [len(s) for s in shown] == [2, 1]
    assert sorted(shown[0] + shown[1]) == sorted(q.qid for q in queries)
    assert "3 disputed units" in first and 'rel="next"' in first
    assert client.get(url, {"level": "documents", "page": "x"}).status_code == 400


def test_a_runs_per_query_table_shows_a_page(login, personas, corpus):
    from metrics.models import Run

    queries = [corpus["query"]] + [
        Query.objects.create(project=personas["project"], qid=f"pq{i}", text="t") for i in range(4)
    ]
    run = Run(project=personas["project"], name="r", level="chunk", chunking=corpus["chunking"])
    run.set_results(
        np.array([q.pk for q in queries]), np.array([corpus["chunk"].pk] * 5), np.ones(5)
    )
    run.save()
    from annotator.evidence import Evidence
    from annotator.labels import change_label

    for query in queries:  # measured queries are those with gold
        change_label(
            query=query,
            annotator=personas["annotator"],
            evidence=Evidence.for_chunk(corpus["chunk"]),
            grade=2,
        )
    client = login(personas["owner"])
    url = reverse("metrics:run_detail", args=["acme", run.pk])
    bodies = [client.get(url, {"page": n}).content.decode() for n in (1, 2, 3)]
    tables = [body.split('id="per-query"')[1].split("</table>")[0] for body in bodies]
    shown = [re.findall(r"/q/([^/]+)/\?", table) for table in tables]
    assert [len(s) for s in shown] == [2, 2, 1]
    assert sorted(qid for page in shown for qid in page) == sorted(q.qid for q in queries)


def _disputed_queries(personas, corpus, n: int, first: int = 0) -> list:
    from annotator.evidence import Evidence
    from annotator.labels import change_label

    queries = [
        Query.objects.create(project=personas["project"], qid=f"disputed-{i}", text="t")
        for i in range(first, first + n)
    ]
    for query in queries:
        for key, grade in (("annotator", 0), ("annotator2", 3)):
            change_label(
                query=query,
                annotator=personas[key],
                evidence=Evidence.for_chunk(corpus["chunk"]),
                grade=grade,
            )
    return queries


def test_the_adjudication_queue_reads_as_much_for_two_queries_as_for_six(
    login, personas, corpus, monkeypatch
):
    """Each item's links name the project: read once, not once per query shown; and
    only the page's units are read (documents, evidence, adjudications)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from gold import views as gold_views

    monkeypatch.setattr(gold_views, "QUEUE_QUERIES", 6)
    client = login(personas["owner"])
    url = reverse("gold:queue", args=["acme"])
    counts = []
    for n in (2, 4):
        _disputed_queries(personas, corpus, n, first=0 if n == 2 else 2)  # 2, then 6
        client.get(url, {"level": "documents"})  # caches warm
        with CaptureQueriesContext(connection) as captured:
            body = client.get(url, {"level": "documents"}).content.decode()
        assert len(re.findall(r'data-qid="([^"]+)"', body)) == {2: 2, 4: 6}[n]
        counts.append(len(captured))
    assert counts[0] == counts[1]


def test_the_agreement_page_shows_a_page_of_queries(login, personas, corpus):
    queries = _disputed_queries(personas, corpus, 3)
    client = login(personas["owner"])
    url = reverse("gold:agreement", args=["acme"])
    bodies = [client.get(url, {"level": "documents", "page": n}).content.decode() for n in (1, 2)]
    tables = [b.split('id="query-disagreement"')[1].split("</table>")[0] for b in bodies]
    shown = [re.findall(r">(disputed-\d)</a>", t) for t in tables]
    assert [len(s) for s in shown] == [2, 1]
    assert sorted(shown[0] + shown[1]) == sorted(q.qid for q in queries)
    assert 'rel="next"' in bodies[0]
    assert client.get(url, {"page": "0"}).status_code == 400
