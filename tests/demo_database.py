"""The demo, built once per test session (once per xdist worker) into a database of its own,
and a fresh copy of that database for each test module (or browser test) that reads it.

``manage.py demo`` imports two datasets, chunks them twice, ranks them with BM25 and loads
their runs: about a minute of work, then as long again to delete it row by row when a
transactional test flushes. Here it is done once; the readers get a copy (SQLite's backup
of the file, PostgreSQL's ``CREATE DATABASE … TEMPLATE``) that is dropped afterwards, never
flushed. Under ``-n``, the modules that read it (``MODULES``) go to one worker, first, so
that one worker builds it (``tests/conftest.py``, ``pytest_xdist_make_scheduler``).

While a copy is in use, the default connection's settings name it: every thread's new
connection (the live server answers each request in a thread of its own) opens it too.
"""

from __future__ import annotations

import itertools
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

from django.db import connection
from django.db.utils import OperationalError, ProgrammingError

# Every test module that reads the demo database (a collection check keeps this complete).
MODULES = (
    "tests/answers/test_demo_answers.py",
    "tests/browser/test_demo.py",
    "tests/test_demo_gold.py",
    "tests/test_own_units_demo.py",
)
# Modules whose tests share a costly module fixture (a database migrated back, a deployment's
# data folder): each goes to one worker whole, which builds the fixture once.
SHARED_SETUP = ("tests/test_problem_migrations.py", "tests/test_production.py")
# Building the demo is minutes of work on a loaded machine, not a hung test.
TIMEOUT = 900

_copies = itertools.count(1)


def scheduler(config, log):
    """xdist's scheduling by groups: the tests of ``MODULES`` are one group, each module of
    ``SHARED_SETUP`` another; every other test is a group of its own, handed out as
    ``--dist load`` does. The largest group is handed out first, so the demo's worker
    starts on it while the other takes the rest."""
    from xdist.scheduler import LoadGroupScheduling

    class DemoTogether(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::")[0]
            if module in MODULES:
                return "demo"
            if module in SHARED_SETUP:
                return module
            return super()._split_scope(nodeid)

    return DemoTogether(config, log)


@contextmanager
def pointed_at(name: str):
    """Inside the block, the default database (of this and every other thread) is ``name``."""
    settings = connection.settings_dict
    original = settings["NAME"]
    connection.close()
    settings["NAME"] = name
    try:
        yield
    finally:
        connection.close()
        settings["NAME"] = original


def copy_database(source: str, folder: Path) -> str:
    """A new database holding what ``source`` holds now; its name."""
    if connection.vendor == "sqlite":
        target = str(folder / f"copy-{next(_copies)}.sqlite3")
        if not Path(source).exists():  # an in-memory test database cannot be copied
            raise RuntimeError("the demo's tests need ASSAY_TEST_SQLITE (bin/test sets it)")
        connection.close()
        with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
            src.backup(dst)
        src.close()
        dst.close()
        return target
    target = f"{connection.settings_dict['NAME']}_demo{next(_copies)}"[:63]
    connection.close()
    with connection._nodb_cursor() as cursor:
        # A copy left by a run that was killed goes (the names are this worker's own).
        cursor.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
        for attempt in range(5):
            try:
                cursor.execute(f'CREATE DATABASE "{target}" TEMPLATE "{source}"')
                return target
            except (OperationalError, ProgrammingError):
                # A thread of the live server may still hold the source open for a moment,
                # or a thread of an earlier test left its connection open: no test of this
                # worker runs now, so another session on its own database is a leftover.
                if attempt == 4:
                    raise
                time.sleep(0.5)
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    [source],
                )
    raise AssertionError("unreachable")


def drop_database(name: str) -> None:
    if connection.vendor == "sqlite":
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(name + suffix).unlink(missing_ok=True)
        return
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
