"""Import jobs stored before problems were data keep their messages, as "text" problems."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotator", "0010_search_grams")]
AFTER = [("annotator", "0011_import_problems_as_data")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_old_free_text_becomes_text_problems_and_back():
    old = _migrate(BEFORE)
    project = old.get_model("annotator", "Project").objects.create(slug="old", name="Old")
    ImportJob = old.get_model("annotator", "ImportJob")
    failed = ImportJob.objects.create(
        project=project,
        kind="queries",
        filename="q.jsonl",
        status="failed",
        errors=["line 3: missing query text", "the file holds no queries"],
    )
    done = ImportJob.objects.create(
        project=project,
        kind="run",
        filename="r.trec",
        status="done",
        detail="bm25; 2 lines dropped",
    )
    try:
        new = _migrate(AFTER).get_model("annotator", "ImportJob")
        from formats.errors import TEXT

        assert new.objects.get(pk=failed.pk).problems == [
            TEXT(text="line 3: missing query text"),
            TEXT(text="the file holds no queries"),
        ]
        assert new.objects.get(pk=done.pk).notes == [TEXT(text="bm25; 2 lines dropped")]
        assert new.objects.get(pk=done.pk).problems == []
        back = _migrate(BEFORE).get_model("annotator", "ImportJob")
        assert back.objects.get(pk=failed.pk).errors == [
            "line 3: missing query text",
            "the file holds no queries",
        ]
        assert back.objects.get(pk=done.pk).detail == "bm25; 2 lines dropped"
    finally:
        _migrate(executor_leaf())


def executor_leaf():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()
