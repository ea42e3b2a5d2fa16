"""Import jobs stored before problems were data keep their messages, as "text" problems."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.demo_database import copy_database, drop_database, pointed_at

BEFORE = [("annotator", "0010_search_grams")]
AFTER = [("annotator", "0011_import_problems_as_data")]
JUDGES_BEFORE = [("judges", "0001_initial")]
JUDGES_AFTER = [("judges", "0002_problems_as_data")]
# Both tests start from the schema before either migration: each moves one app forward and
# back again, and leaves this state as it found it.
BOTH_BEFORE = BEFORE + JUDGES_BEFORE


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture(scope="module")
def migrated_back(django_db_setup, django_db_blocker, tmp_path_factory):
    """A copy of the worker's test database migrated back to ``BOTH_BEFORE`` once for the
    module, and dropped afterwards: the worker's own database never leaves the latest
    schema, so nothing has to be migrated forward again."""
    with django_db_blocker.unblock():
        name = copy_database(connection.settings_dict["NAME"], tmp_path_factory.mktemp("mig"))
        try:
            with pointed_at(name):
                _migrate(BOTH_BEFORE)
                yield
        finally:
            drop_database(name)


@pytest.mark.django_db(transaction=True)
def test_old_free_text_becomes_text_problems_and_back(migrated_back):
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
        _migrate(BOTH_BEFORE)


@pytest.mark.django_db(transaction=True)
def test_judge_failure_texts_become_text_problems_and_back(migrated_back, judging_rows):
    old = _migrate(BOTH_BEFORE)
    JudgeJob, JudgePair = (old.get_model("judges", name) for name in ("JudgeJob", "JudgePair"))
    job, pair = judging_rows(old)
    JudgeJob.objects.filter(pk=job.pk).update(error="internal error; see the worker's log")
    JudgePair.objects.filter(pk=pair.pk).update(detail="HTTP 429 (rate limited)")
    try:
        new = _migrate(JUDGES_AFTER)
        from formats.errors import TEXT

        assert new.get_model("judges", "JudgeJob").objects.get(pk=job.pk).error == TEXT(
            text="internal error; see the worker's log"
        )
        pairs = new.get_model("judges", "JudgePair").objects
        assert pairs.get(pk=pair.pk).detail == TEXT(text="HTTP 429 (rate limited)")
        assert pairs.exclude(pk=pair.pk).get().detail is None  # no text: no problem
        back = _migrate(JUDGES_BEFORE)
        assert back.get_model("judges", "JudgePair").objects.get(pk=pair.pk).detail == (
            "HTTP 429 (rate limited)"
        )
    finally:
        _migrate(BOTH_BEFORE)


@pytest.fixture
def judging_rows(django_user_model):
    """A job with two pairs, made with the models of a given migration state."""

    def make(state):
        model = state.get_model
        project = model("annotator", "Project").objects.create(slug="j", name="J")
        user = django_user_model.objects.create(username="judge-v1")
        document = model("annotator", "Document").objects.create(
            project=project, doc_id="d", text="t"
        )
        query = model("annotator", "Query").objects.create(project=project, qid="q", text="q")
        judge = model("judges", "Judge").objects.create(
            project_id=project.pk,
            slug="j",
            name="J",
            base_url="http://x/v1",
            model="m",
            api_key_env="ASSAY_JUDGE_KEY_K",
            prompt="p",
        )
        version = model("judges", "JudgeVersion").objects.create(
            judge=judge,
            number=1,
            annotator_id=user.pk,
            prompt="p",
            model="m",
            temperature=0,
            max_tokens=10,
        )
        job = model("judges", "JudgeJob").objects.create(version=version, budget=1)
        pairs = model("judges", "JudgePair").objects
        pair = pairs.create(job=job, query_id=query.pk, document_id=document.pk)
        pairs.create(job=job, query_id=query.pk, document_id=document.pk)
        return job, pair

    return make
