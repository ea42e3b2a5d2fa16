"""Real worker processes for the fault-injection tests, on the test run's database.

``python -m tests.worker_process`` runs ``manage.py db_worker`` with the database named
by ``ASSAY_WORKER_DB`` (the test database) and the settings given as JSON in
``ASSAY_WORKER_SETTINGS``. With ``ASSAY_WORKER_HANG_IMPORT=<file>`` an import stops half
way (at its second progress report, a few hundred rows in): it writes that file and waits
for ever, so that a test can kill the worker mid-import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = os.environ["ASSAY_WORKER_DB"]
    for name, value in json.loads(os.environ.get("ASSAY_WORKER_SETTINGS", "{}")).items():
        setattr(settings, name, value)
    import django

    django.setup()
    hang = os.environ.get("ASSAY_WORKER_HANG_IMPORT")
    if hang:
        from annotator import import_jobs

        original = import_jobs.JobProgress.__call__
        calls = []

        def stall(self, fraction: float) -> None:
            original(self, fraction)
            calls.append(fraction)
            if len(calls) >= 2 and fraction < 1 and not Path(hang).exists():
                Path(hang).write_text(str(fraction))
                time.sleep(3600)

        import_jobs.JobProgress.__call__ = stall
    from django.core.management import call_command

    options = {"startup_delay": False, "reload": False, "interval": 0.1, "verbosity": 1}
    options["queue_name"] = "default,judging"  # imports and judging alike
    call_command("db_worker", *sys.argv[1:], **options)


def start(connection, tmp_path: Path, name: str, *, env: dict | None = None, **settings):
    """Start a worker process on the test database; its output goes to ``<name>.log``.
    An in-memory SQLite database cannot be shared with another process: the test is
    skipped then (``bin/test`` always uses a file)."""
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        import pytest

        pytest.skip("another process cannot reach an in-memory SQLite database")
    from django.conf import settings as ours

    environment = dict(os.environ)
    environment.update(
        ASSAY_WORKER_DB=str(connection.settings_dict["NAME"]),
        # The test's own file store, so that the worker finds the uploads.
        ASSAY_WORKER_SETTINGS=json.dumps({"STORAGES": ours.STORAGES, **settings}),
        **(env or {}),
    )
    log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(
        [sys.executable, "-m", "tests.worker_process"],
        cwd=ROOT,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def wait_for(condition, *, seconds: float = 60, what: str = "") -> None:
    """Poll ``condition`` until it holds; fail after ``seconds`` (a deadline, not a
    measurement: the tests assert what happened, never how fast)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting: {what}")


if __name__ == "__main__":
    main()
