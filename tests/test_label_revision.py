"""One label revision per project: every label writer moves it in its own transaction, and
the caches of what labels derive are kept per (project, revision), each key with its own
lock — a change or a slow reload in one project leaves every other project's alone."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunking, Document, Membership, Project, Query, Role
from annotator.revisions import revision
from gold.services import ConsensusPolicy, adjudicate, freeze_gold_set
from metrics import label_state as label_state_module
from metrics.evaluation import evaluation_setting
from metrics.label_state import label_state
from metrics.models import Run
from metrics.rankings import cache
from metrics.reports import run_rows

LABEL_TABLES = ("annotator_judgment", "judgmenthistory", "gold_adjudication")


def small_project(slug: str, owner) -> dict:
    project = Project.objects.create(slug=slug, name=slug)
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    documents = [
        Document.objects.create(project=project, doc_id=f"d{i}", title="", text=f"text {i} " * 20)
        for i in range(4)
    ]
    queries = [Query.objects.create(project=project, qid=f"q{i}", text=f"q{i}") for i in range(2)]
    for query in queries:
        for document, grade in zip(documents[:3], (3, 1, 0), strict=True):
            change_label(
                query=query, annotator=owner, evidence=Evidence.for_document(document), grade=grade
            )
    run = Run(project=project, name="bm25", level="document")
    q = np.repeat([x.pk for x in queries], len(documents))
    d = np.tile([x.pk for x in documents], len(queries))
    run.set_results(q, d, np.tile(np.arange(len(documents), 0, -1, dtype=float), len(queries)))
    run.save()
    return {"project": project, "documents": documents, "queries": queries, "owner": owner}


@pytest.fixture
def two_projects(db):
    owner = get_user_model().objects.create_user("olga", password="x")
    cache.clear()
    yield small_project("alpha", owner), small_project("beta", owner)
    cache.clear()


def dashboard(project):
    setting = evaluation_setting(project, level="documents", k=3)
    return {row["run"].name: row["scores"].mean("nDCG@3") for row in run_rows(project, setting)}


@pytest.mark.django_db
def test_every_label_writer_moves_its_own_projects_revision(two_projects, tmp_path):
    a, b = two_projects
    project, other = a["project"], b["project"]

    def moved(action, *, reset=False):
        before, untouched = revision(project.pk), revision(other.pk)
        action()
        after = revision(project.pk)
        assert after.number > before.number
        assert (after.reset == after.number) == reset
        assert revision(other.pk) == untouched

    query, document = a["queries"][0], a["documents"][3]
    evidence = Evidence.for_document(document)

    def label(grade):
        return lambda: change_label(
            query=query, annotator=a["owner"], evidence=evidence, grade=grade
        )

    moved(label(2))
    moved(label(None))
    moved(
        lambda: adjudicate(
            query=query, evidence=evidence, grade=1, reason="", adjudicator=a["owner"]
        )
    )
    gold = []
    moved(lambda: gold.append(freeze_gold_set(project, "g", policy=ConsensusPolicy())))
    moved(lambda: gold[0].delete())
    qrels = tmp_path / "assessors.qrels"
    qrels.write_text("q0 0 d3 2\nq1 0 d3 1\n", encoding="utf-8")
    from annotator.importing import run_import

    options = {"annotator": "assessors", "level": "document"}
    moved(lambda: run_import("labels", project, qrels, options=options))
    # Labels deleted by cascade write no history: the revision is a reset.
    moved(lambda: Document.objects.filter(pk=document.pk).delete(), reset=True)
    moved(lambda: a["queries"][1].delete(), reset=True)
    chunking = Chunking.objects.create(project=project, name="c")
    moved(lambda: chunking.delete(), reset=True)


@pytest.mark.django_db
def test_a_change_in_one_project_leaves_the_others_caches_warm(two_projects):
    a, b = two_projects
    dashboard(a["project"]), dashboard(b["project"])
    kept_b = label_state(b["project"])
    change_label(
        query=a["queries"][0],
        annotator=a["owner"],
        evidence=Evidence.for_document(a["documents"][3]),
        grade=3,
    )
    with CaptureQueriesContext(connection) as queries:
        figures = dashboard(b["project"])
    assert label_state(b["project"]) is kept_b  # the same state object: not read again
    label_reads = [q["sql"] for q in queries if any(t in q["sql"] for t in LABEL_TABLES)]
    assert label_reads == []
    assert figures == dashboard(b["project"])
    # Project a's own state moved on, incrementally (the same epoch).
    before = label_state_module.cache.peek(
        ("labels", "live", a["project"].pk, a["project"].created_at)
    )
    assert before is not None


@pytest.mark.django_db
def test_no_request_reads_every_projects_labels(two_projects, client):
    a, b = two_projects
    client.force_login(a["owner"])
    url = f"/p/{a['project'].slug}/metrics/"
    client.get(url, {"level": "documents"})
    change_label(
        query=b["queries"][0],
        annotator=b["owner"],
        evidence=Evidence.for_document(b["documents"][3]),
        grade=3,
    )
    change_label(
        query=a["queries"][1],
        annotator=a["owner"],
        evidence=Evidence.for_document(a["documents"][3]),
        grade=2,
    )
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url, {"level": "documents"}).status_code == 200
    label_reads = [q["sql"] for q in queries if any(t in q["sql"] for t in LABEL_TABLES)]
    assert label_reads  # the changed query was read again …
    for sql in label_reads:  # … but only this project's rows, never all projects'
        assert "project_id" in sql or "query_id" in sql, sql
        assert "COUNT(" not in sql.upper(), sql


@pytest.mark.django_db(transaction=True)
def test_a_slow_reload_of_one_project_does_not_hold_up_another(two_projects, monkeypatch):
    a, b = two_projects
    dashboard(a["project"]), dashboard(b["project"])
    change_label(
        query=a["queries"][0],
        annotator=a["owner"],
        evidence=Evidence.for_document(a["documents"][3]),
        grade=3,
    )
    change_label(
        query=b["queries"][0],
        annotator=b["owner"],
        evidence=Evidence.for_document(b["documents"][3]),
        grade=3,
    )
    entered, release = threading.Event(), threading.Event()
    real = label_state_module.live_labels

    def slow(project, **kwargs):
        if project.pk == a["project"].pk:
            entered.set()
            release.wait(60)  # held until project b's dashboard is done
        return real(project, **kwargs)

    monkeypatch.setattr(label_state_module, "live_labels", slow)
    failures = []

    def reload_a():
        try:
            dashboard(Project.objects.get(pk=a["project"].pk))
        except Exception as error:  # pragma: no cover - reported below
            failures.append(error)
        finally:
            connection.close()

    worker = threading.Thread(target=reload_a)
    worker.start()
    try:
        assert entered.wait(60)
        # Project a's reload is stuck inside its key's lock; b's dashboard goes on.
        figures = dashboard(b["project"])
        assert worker.is_alive() and not release.is_set()
        assert figures["bm25"] > 0
    finally:
        release.set()
        worker.join(60)
    assert not worker.is_alive() and not failures
