"""Labelling screen benchmark: server time to open the judging screen and to save a grade.

    .venv/bin/python -m bench.bench_labelling            # SQLite and PostgreSQL
    .venv/bin/python -m bench.bench_labelling sqlite     # one backend

Generates one project with 100,000 chunks (10,000 documents, English and Chinese text),
10,000 queries, two chunk-level runs (top 20 per query, so pools of up to 20 candidates
at the default pool depth of 10), 20,000 assignments and 100,000 judgments (each with its
history row), in a temporary SQLite file and in a PostgreSQL database ``assay_bench`` at
postgres://postgres@127.0.0.1:5432/ (dropped afterwards). Each backend runs in its own
process, with production settings (DEBUG off). Server time is measured around Django's
test client (middleware, session, view, templates; no network), over REQUESTS requests
after WARMUP unmeasured ones; p50 and p95 are reported, with the SQL query count of one
request. Targets: screen p95 <= 100 ms, save p95 <= 30 ms.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

from bench.labelling_project import generate

REQUESTS = 300
WARMUP = 20
PG_SERVER = "postgres://postgres@127.0.0.1:5432/"
PG_NAME = "assay_bench"
ROOT = Path(__file__).resolve().parent.parent

TARGETS = {"screen": 100.0, "save": 30.0}


def _timed(call, n: int) -> list[float]:
    for _ in range(WARMUP):
        call()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        response = call()
        times.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"status {response.status_code}: {response.content[:300]!r}")
    return times


def _summary(times: list[float], queries: int) -> dict:
    ordered = sorted(times)
    return {
        "n": len(times),
        "p50": statistics.median(ordered),
        "p95": ordered[round(0.95 * (len(ordered) - 1))],
        "queries": queries,
    }


def _count_queries(call) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured)


def measure(data: dict, rng: random.Random) -> dict:
    from django.test import Client
    from django.urls import reverse

    from annotator.models import Assignment

    annotator = data["annotators"][0]
    client = Client()
    client.force_login(annotator)
    mine = list(
        Assignment.objects.filter(project=data["project"], annotator=annotator).values_list(
            "query_id", flat=True
        )
    )
    slug = data["project"].slug

    def open_screen():
        query_pk = rng.choice(mine)
        return client.get(reverse("annotator:label_query", args=[slug, query_pk]))

    def save_grade():
        query_pk = rng.choice(mine)
        chunk_pk = rng.choice(data["pools"][query_pk])
        return client.post(
            reverse("annotator:label_query_judge", args=[slug, query_pk]),
            {"chunk": chunk_pk, "grade": rng.randint(0, 3), "elapsed": "2.5"},
            HTTP_HX_REQUEST="true",
        )

    def search_chunks():
        query_pk = rng.choice(mine)
        term = rng.choice(["wing", "lift", "court", "aero", "一丁", "中国", "lawcase"])
        return client.get(
            reverse("annotator:label_query_search", args=[slug, query_pk]),
            {"q": term},
            HTTP_HX_REQUEST="true",
        )

    from annotator import pool

    results = {}
    for name, call, n in (
        ("screen", open_screen, REQUESTS),
        ("save", save_grade, REQUESTS),
        ("search", search_chunks, REQUESTS // 3),
    ):
        results[name] = _summary(_timed(call, n), _count_queries(call))
    # The same screen when no run exists: the pool comes from full-text search.
    with mock.patch.object(pool, "ranking_source", lambda: pool._no_runs):
        results["screen_fallback"] = _summary(
            _timed(open_screen, REQUESTS // 3), _count_queries(open_screen)
        )
    return results


# ------------------------------------------------------------------ processes


def child(backend: str) -> None:
    """Runs in a fresh process whose environment points Django at the benchmark database."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    call_command("collectstatic", verbosity=0, interactive=False)
    rng = random.Random(20261122)
    data = generate(rng)
    results = measure(data, rng)
    print(
        json.dumps(
            {
                "backend": backend,
                "server": f"{connection.vendor} {connection.Database.sqlite_version}"
                if connection.vendor == "sqlite"
                else f"PostgreSQL {connection.pg_version // 10000}",
                "generate_seconds": data["seconds"],
                "counts": data["counts"],
                "results": results,
            }
        )
    )


def _pg_admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(PG_SERVER + "postgres", autocommit=True) as conn:
        conn.execute(sql)


def run_backend(backend: str) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "ASSAY_DEBUG": "0",
            "SECRET_KEY": "benchmark-only-secret-key-" + "x" * 40,
            "ASSAY_SSL_REDIRECT": "0",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "ASSAY_CONN_MAX_AGE": "600",
        }
    )
    env.pop("DATABASE_URL", None)
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        env["ASSAY_DATA_DIR"] = tmp
        env["ASSAY_STATIC_ROOT"] = str(Path(tmp) / "static")
        if backend == "postgres":
            _pg_admin(f"DROP DATABASE IF EXISTS {PG_NAME}")
            _pg_admin(f"CREATE DATABASE {PG_NAME}")
            env["DATABASE_URL"] = PG_SERVER + PG_NAME
        try:
            done = subprocess.run(
                [sys.executable, "-m", "bench.bench_labelling", "--child", backend],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            if backend == "postgres":
                _pg_admin(f"DROP DATABASE IF EXISTS {PG_NAME}")
    if done.returncode != 0:
        raise RuntimeError(f"{backend} benchmark failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(reports: list[dict]) -> str:
    lines = [
        "| Backend | Request | p50 (ms) | p95 (ms) | target p95 | SQL queries | n |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    labels = {
        "screen": "open the labelling screen",
        "save": "save a grade (htmx)",
        "search": "search chunks (htmx)",
        "screen_fallback": "open the screen, no runs (pool from search)",
    }
    for report in reports:
        for name, result in report["results"].items():
            target = f"≤ {TARGETS[name]:.0f}" if name in TARGETS else "—"
            lines.append(
                f"| {report['server']} | {labels[name]} | {result['p50']:.1f} | "
                f"{result['p95']:.1f} | {target} | {result['queries']} | {result['n']} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1])
        return
    backends = [a for a in argv if a in ("sqlite", "postgres")] or ["sqlite", "postgres"]
    reports = []
    for backend in backends:
        print(f"… {backend}: generating and measuring", file=sys.stderr, flush=True)
        report = run_backend(backend)
        counts = ", ".join(f"{v:,} {k}" for k, v in report["counts"].items())
        print(
            f"{report['server']}: {counts} (generated in {report['generate_seconds']:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
        reports.append(report)
    print(table(reports))


if __name__ == "__main__":
    main()
