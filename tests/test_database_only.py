"""``--database-only`` (CI's PostgreSQL run) keeps every test that reaches a database and
leaves out the ones pytest-django refuses database access (they ran on SQLite already)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ["tests/numerics/test_bm25.py", "tests/test_label_counts.py", "tests/test_demo_gold.py"]


def collected(*options: str) -> set[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "--slow",
            *options,
            *FILES,
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_only_the_tests_that_cannot_reach_a_database_are_left_out():
    every, kept = collected(), collected("--database-only")
    left_out = every - kept
    assert kept < every
    # Pure numerics never reach a database; a test with the db fixture and one whose
    # fixture unblocks the database itself (the demo's) are kept.
    assert left_out and all(t.startswith("tests/numerics/") for t in left_out)
    assert any(t.startswith("tests/test_label_counts.py") for t in kept)
    assert any(t.startswith("tests/test_demo_gold.py") for t in kept)
