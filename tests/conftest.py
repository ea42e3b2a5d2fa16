"""Shared fixtures: named personas, one per role, plus an outsider, and a small project.

Tests marked ``slow`` (long cross-checks against other libraries) are deselected unless
pytest runs with ``--slow``, as CI does (``.ci/run``).
"""

from __future__ import annotations

import contextlib

import pytest
from django.contrib.auth import get_user_model
from django.utils import translation
from hypothesis import settings as hypothesis_settings

from annotator.models import Chunk, Chunking, Document, Membership, Project, Query, Role

# Property tests assert rules, never speed: no per-example deadline (a loaded machine
# made the default 200 ms deadline fail tests whose rule held).
hypothesis_settings.register_profile("assay", deadline=None)
hypothesis_settings.load_profile("assay")

PASSWORD = "correct-horse-battery"
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", help="also run the tests marked slow")
    parser.addoption(
        "--database-only",
        action="store_true",
        help="run only the tests that reach a database (the rest do the same on any one)",
    )


# What a test that reaches the database asks for, directly or through its fixtures (a
# fixture that unblocks the database itself asks for ``django_db_setup``): pytest-django
# refuses database access to a test that has none of them or the marker.
DATABASE_FIXTURES = {"db", "transactional_db", "live_server", "django_db_setup"}


def reaches_database(item) -> bool:
    return bool(item.get_closest_marker("django_db")) or bool(
        DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
    )


def pytest_collection_modifyitems(config, items):
    """Without ``--slow``, leave the slow tests out of the run (deselected, not skipped).
    Every test that reads the demo database is in a module listed in
    ``tests.demo_database.MODULES`` (so that one worker builds it), with a longer timeout."""
    from tests.demo_database import MODULES, TIMEOUT

    readers = [i for i in items if "demo_template" in getattr(i, "fixturenames", ())]
    strays = sorted({i.nodeid.split("::")[0] for i in readers} - set(MODULES))
    if strays:
        raise pytest.UsageError(f"tests.demo_database.MODULES lacks {', '.join(strays)}")
    for item in readers:
        item.add_marker(pytest.mark.timeout(TIMEOUT))
    left_out = []
    if not config.getoption("--slow"):
        left_out += [item for item in items if item.get_closest_marker("slow")]
    if config.getoption("--database-only"):
        left_out += [item for item in items if not reaches_database(item)]
    if left_out:
        ids = {id(item) for item in left_out}
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if id(item) not in ids]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``-n`` (``--dist load``), the tests that read the demo database run on one
    worker (``tests.demo_database``)."""
    if config.getvalue("dist") != "load":
        return None
    from tests.demo_database import scheduler

    return scheduler(config, log)


@pytest.fixture(autouse=True, scope="session")
def run_index_dir(tmp_path_factory):
    """Run index files (``metrics.run_indexes``) go to the session's own folder."""
    from django.test import override_settings

    override = override_settings(ASSAY_RUN_INDEX_DIR=tmp_path_factory.mktemp("run-index"))
    override.enable()
    yield
    override.disable()


def make_user(username: str):
    return get_user_model().objects.create_user(username=username, password=PASSWORD)


@pytest.fixture
def personas(db):
    """alice owns, adam adjudicates, anna and arno annotate, vera views, otto is outside."""
    project = Project.objects.create(slug="acme", name="Acme search")
    users = {
        "owner": make_user("alice"),
        "adjudicator": make_user("adam"),
        "annotator": make_user("anna"),
        "annotator2": make_user("arno"),
        "viewer": make_user("vera"),
        "outsider": make_user("otto"),
    }
    roles = {
        "owner": Role.OWNER,
        "adjudicator": Role.ADJUDICATOR,
        "annotator": Role.ANNOTATOR,
        "annotator2": Role.ANNOTATOR,
        "viewer": Role.VIEWER,
    }
    for key, role in roles.items():
        Membership.objects.create(project=project, user=users[key], role=role)
    # The outsider owns another project, so "member of something" is not enough.
    other = Project.objects.create(slug="other", name="Other project")
    Membership.objects.create(project=other, user=users["outsider"], role=Role.OWNER)
    return {"project": project, "other": other, **users}


@pytest.fixture
def corpus(personas):
    """One document with pages, one chunking, one query in the persona project."""
    project = personas["project"]
    text = "First page about <script>alert(1)</script> & wings.\n\n第二页：机翼的升力。"
    document = Document.objects.create(
        project=project,
        doc_id="d1",
        title="Wings & <b>lift</b>",
        text=text,
        page_starts=[0, text.index("第二页")],
    )
    chunking = Chunking.objects.create(project=project, name="c256", parameters={"size": 256})
    chunk = Chunk.objects.create(
        chunking=chunking, chunk_id="d1#0", document=document, start=0, end=len(text)
    )
    query = Query.objects.create(project=project, qid="q1", text="How do wings <lift>?")
    return {"document": document, "chunking": chunking, "chunk": chunk, "query": query}


@pytest.fixture
def login(client):
    def _login(user):
        client.force_login(user)
        return client

    return _login


@pytest.fixture(autouse=True)
def default_language_after_each_test():
    """A request in Chinese leaves Chinese active in the test's thread (LocaleMiddleware
    activates the request's language and nothing resets it): the next test starts again
    from the default language, whatever ran before it on the same worker."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Tests create many users; the production hasher is deliberately slow."""
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture(autouse=True)
def originals_in_tmp(settings, tmp_path):
    """The file store (uploads, originals of imported document files, page images) is a
    folder of the test's own."""
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "store"), "allow_overwrite": True},
        },
    }


@pytest.fixture(scope="session")
def demo_template(django_db_setup, django_db_blocker, tmp_path_factory):
    """The worker's test database with ``manage.py demo`` run in it, built once
    (``tests.demo_database``); its files (PDF originals, page images) in a folder of its own."""
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import override_settings

    from tests.demo_database import copy_database, drop_database, pointed_at

    folder = tmp_path_factory.mktemp("demo")
    storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    storage["OPTIONS"] = {"location": str(folder / "store"), "allow_overwrite": True}
    with django_db_blocker.unblock():
        name = copy_database(connection.settings_dict["NAME"], folder)
        overrides = override_settings(
            STORAGES={**settings.STORAGES, "default": storage}, PASSWORD_HASHERS=FAST_HASHERS
        )
        with pointed_at(name), overrides:
            call_command("demo", verbosity=0)
        yield name, folder
        drop_database(name)


@contextlib.contextmanager
def _demo_copy(demo_template, django_db_blocker):
    from tests.demo_database import copy_database, drop_database, pointed_at

    name, folder = demo_template
    with django_db_blocker.unblock():
        copy = copy_database(name, folder)
        try:
            with pointed_at(copy):
                yield
        finally:
            drop_database(copy)


@pytest.fixture(scope="module")
def demo_module(demo_template, django_db_blocker):
    """The module's tests run on a fresh copy of the demo database (each test in its own
    transaction, rolled back, as usual); the copy is dropped after the module."""
    with _demo_copy(demo_template, django_db_blocker):
        yield


@pytest.fixture
def demo_for_transactional_test(demo_template, django_db_blocker):
    """A transactional test (a live server's, say) runs on a fresh copy of the demo
    database, dropped afterwards: the flush that follows the test empties the worker's own
    test database, not the demo's tens of thousands of rows."""
    with _demo_copy(demo_template, django_db_blocker):
        yield
