"""Load: 20 annotators saving labels for 60 s, alone and during a 150,000-document import.

    .venv/bin/python -m bench load               # SQLite, then PostgreSQL
    .venv/bin/python -m bench.bench_load sqlite  # one backend

The server runs as ``bin/start`` runs it: gunicorn (2 processes × 8 threads), DEBUG off,
static files by WhiteNoise, and ``manage.py db_worker --no-reload`` beside it; SQLite in a
temporary data directory, or PostgreSQL in a database ``wt_i12_load`` on
postgres://postgres@127.0.0.1:5432/ (dropped afterwards). The project has 100 documents,
500 chunks and 40 queries; 20 annotators log in through the login form and then each
saves grades one after another (a random chunk, query and grade per save, as the
labelling screen posts them, over real HTTP on loopback) for 60 s, pausing THINK_SECONDS
(1 s) after each answer — faster than people grade, so 20 annotators here are a busy
team. Two unmeasured saves per annotator warm the server up first. Latency is measured by
the client, from sending the request to reading the whole answer.

Scenario "alone": only the saves. Scenario "import": the owner uploads a 150,000-document
JSONL file on the import page, and the saves run while the worker imports it.

"errors" counts answers other than 200 and failed connections; "lost" counts saves that
were answered 200 but whose grade is not the annotator's label at the end (each annotator
saves one at a time, so its last answered save of a unit is that unit's label).
Targets: 0 errors, 0 lost; save p95 <= 300 ms on SQLite, <= 250 ms on PostgreSQL.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from bench.http_client import Browser

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PG_SERVER = "postgres://postgres@127.0.0.1:5432/"
PG_NAME = "wt_i12_load"
ANNOTATORS = 20
SECONDS = 60
THINK_SECONDS = 1.0  # an annotator's pause after each answer (a fast keyboard grader)
WARMUP_SAVES = 2  # per annotator, before the measured window
IMPORT_DOCUMENTS = 150_000
PASSWORD = "load-bench-password-1"
TARGETS = {"sqlite": 300.0, "postgres": 250.0}


# ------------------------------------------------------------------ server side


def setup_project() -> None:
    """Run inside the server's environment (``--setup``): the project and its users."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from annotator.models import Chunk, Chunking, Document, Membership, Project, Query, Role

    rng = random.Random(7)
    words = ["wing", "lift", "drag", "flow", "shock", "layer", "mach", "heat", "plate", "jet"]
    project = Project.objects.create(slug="load", name="Load")
    user_model = get_user_model()
    owner = user_model.objects.create_user("owner", password=PASSWORD)
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    for i in range(ANNOTATORS):
        user = user_model.objects.create_user(f"a{i:02d}", password=PASSWORD)
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    chunking = Chunking.objects.create(project=project, name="c100")
    chunks = []
    for d in range(100):
        text = " ".join(rng.choice(words) for _ in range(100))
        document = Document.objects.create(project=project, doc_id=f"d{d}", text=text)
        size = len(text) // 5
        chunks += [
            Chunk(
                chunking=chunking,
                chunk_id=f"d{d}#{c}",
                document=document,
                start=c * size,
                end=(c + 1) * size,
            )
            for c in range(5)
        ]
    Chunk.objects.bulk_create(chunks)
    queries = Query.objects.bulk_create(
        [Query(project=project, qid=f"q{q}", text=f"query {q}") for q in range(40)]
    )
    chunk_pks = list(Chunk.objects.filter(chunking=chunking).values_list("pk", flat=True))
    print(json.dumps({"queries": [q.pk for q in queries], "chunks": chunk_pks}))


def report_state() -> None:
    """Run inside the server's environment (``--state``): labels and the import job."""
    import django

    django.setup()
    from annotator.models import Document, ImportJob, Judgment

    labels = [
        [username, query, chunk, grade]
        for username, query, chunk, grade in Judgment.objects.filter(
            query__project__slug="load"
        ).values_list("annotator__username", "query_id", "chunk_id", "grade")
    ]
    jobs = [
        {
            "status": job.status,
            "created": job.created_count,
            "seconds": (job.finished_at - job.created_at).total_seconds()
            if job.finished_at
            else None,
            "errors": job.errors[:3],
        }
        for job in ImportJob.objects.all()
    ]
    documents = Document.objects.filter(project__slug="load").count()
    print(json.dumps({"labels": labels, "jobs": jobs, "documents": documents}))


# ------------------------------------------------------------------ client side


class Server:
    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.data = Path(tempfile.mkdtemp(prefix=f"assay-load-{backend}-"))
        self.env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        self.env.update(
            ASSAY_DEBUG="0",
            ASSAY_HTTPS="0",
            ASSAY_DATA_DIR=str(self.data),
            SECRET_KEY=secrets.token_urlsafe(50),
            PYTHONPATH=str(ROOT),
        )
        if backend == "postgres":
            self.env["DATABASE_URL"] = PG_SERVER + PG_NAME
            self._psql(f"DROP DATABASE IF EXISTS {PG_NAME}")
            self._psql(f"CREATE DATABASE {PG_NAME}")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.processes: list[subprocess.Popen] = []

    def _psql(self, sql: str) -> None:
        subprocess.run(
            ["psql", PG_SERVER + "postgres", "-q", "-c", sql], check=True, capture_output=True
        )

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [str(BIN / "python"), "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def python(self, flag: str) -> dict:
        done = subprocess.run(
            [str(BIN / "python"), "-m", "bench.bench_load", flag],
            cwd=ROOT,
            env={**self.env, "DJANGO_SETTINGS_MODULE": "config.settings"},
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    def start(self) -> None:
        """As bin/start: gunicorn with threads and the worker without the reloader."""
        log = (self.data / "server.log").open("w")
        gunicorn = [
            str(BIN / "gunicorn"),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            "2",
            "--threads",
            "8",
            "--timeout",
            "300",
            "--no-control-socket",
        ]
        worker = [str(BIN / "python"), "manage.py", "db_worker", "--no-reload", "--interval", "1"]
        for command in (gunicorn, worker):
            self.processes.append(
                subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=log)
            )
        for _ in range(240):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("gunicorn did not start")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.backend == "postgres":
            self._psql(f"DROP DATABASE IF EXISTS {PG_NAME}")
        shutil.rmtree(self.data, ignore_errors=True)


def annotate(browser, username, ids, seconds, latencies, errors, expected, seed) -> None:
    rng = random.Random(seed)
    # Spread the annotators' first saves over one pause, as people do not start together.
    time.sleep(rng.random() * THINK_SECONDS)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        query = rng.choice(ids["queries"][:8])
        chunk = rng.choice(ids["chunks"][:50])
        grade = rng.randrange(4)
        started = time.perf_counter()
        try:
            status, _ = browser.post_form(
                f"/p/load/label/{query}/judge/", {"chunk": chunk, "grade": grade}
            )
        except (http.client.HTTPException, OSError) as error:
            errors.append(repr(error))
            continue
        latencies.append((time.perf_counter() - started) * 1000)
        if status == 200:
            expected[(username, query, chunk)] = grade
        else:
            errors.append(status)
        time.sleep(THINK_SECONDS)


def documents_file(path: Path) -> None:
    rng = random.Random(11)
    words = ["wing", "lift", "drag", "flow", "shock", "layer", "mach", "heat", "plate", "jet"]
    with path.open("w") as handle:
        for i in range(IMPORT_DOCUMENTS):
            text = " ".join(rng.choice(words) for _ in range(40))
            handle.write(json.dumps({"doc_id": f"big-{i}", "title": f"doc {i}", "text": text}))
            handle.write("\n")


def upload(browser: Browser, path: Path) -> int:
    _, page = browser.request("GET", "/p/load/imports/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in (("csrfmiddlewaretoken", token), ("kind", "documents")):
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        )
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    body = "".join(parts).encode() + head.encode() + path.read_bytes()
    body += f"\r\n--{boundary}--\r\n".encode()
    status, _ = browser.request(
        "POST",
        "/p/load/imports/",
        body,
        {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Origin": f"http://127.0.0.1:{browser.port}",
        },
    )
    return status


def scenario(server, browsers, ids, expected) -> dict:
    latencies: list[float] = []
    errors: list = []
    threads = [
        threading.Thread(
            target=annotate,
            args=(browser, name, ids, SECONDS, latencies, errors, expected, seed),
        )
        for seed, (name, browser) in enumerate(browsers.items())
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ordered = sorted(latencies)
    return {
        "saves": len(latencies),
        "errors": len(errors),
        "error_kinds": sorted({str(e) for e in errors})[:5],
        "p50": statistics.median(ordered) if ordered else None,
        "p95": ordered[int(0.95 * (len(ordered) - 1))] if ordered else None,
        "max": ordered[-1] if ordered else None,
    }


def run_backend(backend: str) -> list[dict]:
    server = Server(backend)
    try:
        server.manage("migrate", "--noinput")
        server.manage("collectstatic", "--noinput", "-v", "0")
        ids = server.python("--setup")
        big = server.data / "big.jsonl"
        documents_file(big)
        server.start()
        browsers = {}
        login_errors = 0
        for i in range(ANNOTATORS):
            name = f"a{i:02d}"
            browsers[name] = Browser(server.port)
            login_errors += browsers[name].log_in(name, PASSWORD) != 302
        expected: dict = {}
        # Warm-up: every process and thread has served a save before the clock starts.
        warm_errors: list = []
        for browser in browsers.values():
            for round_ in range(WARMUP_SAVES):
                query, chunk = ids["queries"][-1], ids["chunks"][-1 - round_]
                status, _ = browser.post_form(
                    f"/p/load/label/{query}/judge/", {"chunk": chunk, "grade": round_}
                )
                if status != 200:
                    warm_errors.append(status)
        if warm_errors:
            raise RuntimeError(f"warm-up saves failed: {warm_errors[:5]}")
        rows = [{"scenario": "alone", "login_errors": login_errors}]
        rows[0].update(scenario(server, browsers, ids, expected))
        print(rows[0], flush=True)
        owner = Browser(server.port)
        owner_login = owner.log_in("owner", PASSWORD)
        assert owner_login == 302, owner_login
        started = time.perf_counter()
        upload_status = upload(owner, big)
        upload_seconds = time.perf_counter() - started
        rows.append({"scenario": "import", "upload_status": upload_status})
        rows[1].update(scenario(server, browsers, ids, expected))
        # Logins still work at the end of the import window.
        rows[1]["login_errors"] = sum(
            Browser(server.port).log_in(f"a{i:02d}", PASSWORD) != 302 for i in range(3)
        )
        deadline = time.perf_counter() + 3600
        while True:
            state = server.python("--state")
            if all(job["status"] in ("done", "failed") for job in state["jobs"]):
                break
            if time.perf_counter() > deadline:
                break
            time.sleep(5)
        final = {(u, q, c): g for u, q, c, g in state["labels"]}
        lost = sum(final.get(key) != grade for key, grade in expected.items())
        for row in rows:
            row["lost"] = lost
        rows[1]["upload_seconds"] = upload_seconds
        rows[1]["jobs"] = state["jobs"]
        rows[1]["documents"] = state["documents"]
        return rows
    finally:
        server.stop()


def table(results: dict[str, list[dict]]) -> str:
    lines = [
        "| backend | scenario | saves | errors | lost | p50 ms | p95 ms | max ms | target p95 |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for backend, rows in results.items():
        for row in rows:
            lines.append(
                f"| {backend} | {row['scenario']} | {row['saves']} | {row['errors']} | "
                f"{row['lost']} | {row['p50']:.0f} | {row['p95']:.0f} | {row['max']:.0f} | "
                f"{TARGETS[backend]:.0f} |"
            )
    return "\n".join(lines)


def main(backends: list[str] | None = None) -> None:
    backends = backends or ["sqlite", "postgres"]
    results = {}
    for backend in backends:
        print(f"running {backend} …", flush=True)
        results[backend] = run_backend(backend)
        print(json.dumps(results[backend], indent=1, default=str), flush=True)
    print(table(results))


if __name__ == "__main__":
    if sys.argv[1:] == ["--setup"]:
        setup_project()
    elif sys.argv[1:] == ["--state"]:
        report_state()
    else:
        main(sys.argv[1:] or None)
