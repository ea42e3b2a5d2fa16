"""Load: what people visit, alone, during a 150,000-document import and during a
10,000,000-line run import.

    .venv/bin/python -m bench load                                    # every scenario below
    .venv/bin/python -m bench load --backends sqlite --scenarios alone --seconds 30

The server runs as ``bin/start`` runs it on SQLite (gunicorn, 2 processes × 8 threads,
DEBUG off, static files by WhiteNoise, ``manage.py db_worker --no-reload`` beside it, in a
temporary data directory), and on PostgreSQL with 4 gunicorn processes × 8 threads
(database ``wt_i12_load`` on postgres://postgres@127.0.0.1:5432/, dropped afterwards).
The project: 2,000 documents (half Chinese), a chunking of 10,000 chunks, 1,000 queries,
two chunk runs of 20 results per query, two annotators' labels on every query (agreement
and adjudication have work), assignments for everyone.

People: on SQLite 20 annotators and 2 leads, on PostgreSQL 50 annotators and 5 leads.
Each logs in through the login form (timed: "login"), then for SECONDS does what people
do, one request at a time with THINK_SECONDS (1 s) between answers — faster than people
work, so this is a busy team. Annotators: the project list, project home, their queue,
the labelling screen, a grade save, a passage save, a search for an English word and for
a two-character Chinese term, a document view. Leads: the project list and home, the
dashboard, a run's per-query drill-down, agreement, adjudication. Latency is measured by
the client (request sent to answer read), per page type: n, errors, p50, p95, max.

Scenarios: "alone"; "documents import": the owner uploads a JSONL file of 150,000
documents on the import page as the window starts, and the worker imports it meanwhile;
"run import": the same with a TREC run of 10,000,000 lines (the 1,000 queries × 10,000
chunks). "errors" counts answers other than 200 (302 for the login) and failed
connections. Targets: 0 errors, every page type p95 <= 300 ms in every scenario.
"""

from __future__ import annotations

import argparse
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
from urllib.parse import quote

from bench.http_client import Browser

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PG_SERVER = "postgres://postgres@127.0.0.1:5432/"
PG_NAME = "wt_i12_load"
PEOPLE = {"sqlite": (20, 2), "postgres": (50, 5)}  # annotators, leads
WORKERS = {"sqlite": 2, "postgres": 4}  # gunicorn processes (8 threads each)
SECONDS = 60
THINK_SECONDS = 1.0  # a person's pause after each answer (a fast worker)
N_DOCUMENTS = 2_000
CHUNKS_PER_DOCUMENT = 5
N_QUERIES = 1_000
IMPORT_DOCUMENTS = 150_000
RUN_LINES = 10_000_000
PASSWORD = "load-bench-password-1"
TARGET_P95 = 300.0
WORDS = ["wing", "lift", "drag", "flow", "shock", "layer", "mach", "heat", "plate", "jet"]
HAN = "机翼升力阻力流动激波边界层马赫热板喷气合同违约赔偿责任法院判决"

# ------------------------------------------------------------------ server side


def setup_project(annotators: int, leads: int) -> None:
    """Run inside the server's environment (``--setup``): the project, its people, data."""
    import django

    django.setup()
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import transaction

    from annotator.labels import bulk_create_judgments
    from annotator.models import (
        Assignment,
        Chunk,
        Chunking,
        Document,
        Judgment,
        Membership,
        Project,
        Query,
        Role,
    )
    from metrics.models import Run
    from metrics.tasks import write_own_index

    rng = random.Random(7)
    password = make_password(PASSWORD)
    users = get_user_model()
    with transaction.atomic():
        project = Project.objects.create(slug="load", name="Load")
        owner = users.objects.create(username="owner", password=password)
        Membership.objects.create(project=project, user=owner, role=Role.OWNER)
        people = {"annotators": [], "leads": []}
        for i in range(annotators):
            user = users.objects.create(username=f"a{i:02d}", password=password)
            Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
            people["annotators"].append(user)
        for i in range(leads):
            user = users.objects.create(username=f"lead{i}", password=password)
            Membership.objects.create(project=project, user=user, role=Role.ADJUDICATOR)
            people["leads"].append(user)
        chunking = Chunking.objects.create(project=project, name="c5")
        documents = []
        for d in range(N_DOCUMENTS):
            if d % 2:
                text = "".join(rng.choice(HAN) for _ in range(300)) + "。"
            else:
                text = " ".join(rng.choice(WORDS) for _ in range(100)) + "."
            documents.append(Document(project=project, doc_id=f"d{d}", title=f"doc {d}", text=text))
        documents = Document.objects.bulk_create(documents, batch_size=1000)
        chunks = []
        for document in documents:
            size = len(document.text) // CHUNKS_PER_DOCUMENT
            for c in range(CHUNKS_PER_DOCUMENT):
                end = len(document.text) if c == CHUNKS_PER_DOCUMENT - 1 else (c + 1) * size
                chunks.append(
                    Chunk(
                        chunking=chunking,
                        chunk_id=f"{document.doc_id}#{c}",
                        document=document,
                        start=c * size,
                        end=end,
                    )
                )
        chunks = Chunk.objects.bulk_create(chunks, batch_size=2000)
        queries = Query.objects.bulk_create(
            [
                Query(project=project, qid=f"q{q}", text=f"{rng.choice(WORDS)} {q}")
                for q in range(N_QUERIES)
            ]
        )
        chunk_pks = np.array([c.pk for c in chunks])
        query_pks = np.array([q.pk for q in queries])
        nprng = np.random.default_rng(3)
        pools = {}
        for name in ("bm25", "dense"):
            picked = np.array([nprng.choice(chunk_pks, 20, replace=False) for _ in queries])
            scores = np.sort(nprng.random(picked.shape), axis=1)[:, ::-1]
            run = Run(project=project, name=name, level="chunk", chunking=chunking)
            run.set_results(np.repeat(query_pks, 20), picked.ravel(), scores.ravel())
            run.save()
            for qpk, row in zip(query_pks.tolist(), picked[:, :10].tolist(), strict=True):
                pools.setdefault(qpk, []).extend(row)
        by_pk = {c.pk: c for c in chunks}
        everyone = people["annotators"]
        judgments, assignments = [], []
        for qi, query in enumerate(queries):
            pair = (everyone[qi % len(everyone)], everyone[(qi + 1) % len(everyone)])
            for user in everyone:
                assignments.append(Assignment(project=project, query=query, annotator=user))
            for k, user in enumerate(pair):
                for chunk_pk in list(dict.fromkeys(pools[query.pk]))[:4]:
                    chunk = by_pk[chunk_pk]
                    grade = (chunk_pk + k * rng.randrange(2)) % 4
                    judgments.append(
                        Judgment(
                            query=query,
                            annotator=user,
                            granularity="chunk",
                            document_id=chunk.document_id,
                            start=chunk.start,
                            end=chunk.end,
                            chunk=chunk,
                            grade=grade,
                        )
                    )
        Assignment.objects.bulk_create(assignments, batch_size=5000)
        bulk_create_judgments(judgments, changed_by=owner, batch_size=5000)
    for run in Run.objects.filter(project=project):
        write_own_index(run.pk)
    print(
        json.dumps(
            {
                "queries": query_pks.tolist(),
                "chunks": chunk_pks.tolist(),
                "documents": [d.pk for d in documents],
                "spans": {str(c.pk): [c.document_id, c.start, c.end] for c in chunks[:500]},
                "run": Run.objects.get(project=project, name="bm25").pk,
            }
        )
    )
    _ = Judgment  # written through bulk_create_judgments


def report_state() -> None:
    """Run inside the server's environment (``--state``): the import jobs and the labels."""
    import django

    django.setup()
    from annotator.models import ImportJob, Judgment

    jobs = [
        {
            "kind": job.kind,
            "status": job.status,
            "created": job.created_count,
            "seconds": (job.finished_at - job.created_at).total_seconds()
            if job.finished_at
            else None,
            "problems": [str(p) for p in job.problems[:3]],
        }
        for job in ImportJob.objects.all()
    ]
    labels = list(
        Judgment.objects.filter(query__project__slug="load", granularity="chunk").values_list(
            "annotator__username", "query_id", "chunk_id", "grade"
        )
    )
    print(json.dumps({"jobs": jobs, "labels": labels}))


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
            ASSAY_MAX_UPLOAD_BYTES=str(2 * 1024**3),
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

    def python(self, *flags: str) -> dict:
        done = subprocess.run(
            [str(BIN / "python"), "-m", "bench.bench_load", *flags],
            cwd=ROOT,
            env={**self.env, "DJANGO_SETTINGS_MODULE": "config.settings"},
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    def start(self) -> None:
        """As bin/start (SQLite) or a production PostgreSQL setup: gunicorn with threads
        and the worker without the reloader."""
        log = (self.data / "server.log").open("w")
        gunicorn = [
            str(BIN / "gunicorn"),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(WORKERS[self.backend]),
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
        # The server's log outlives its data folder: errors are read there.
        kept = Path(tempfile.gettempdir()) / f"assay-load-{self.backend}-server.log"
        shutil.copyfile(self.data / "server.log", kept)
        print(f"server log: {kept}", flush=True)
        shutil.rmtree(self.data, ignore_errors=True)


class Tally:
    """Latencies and errors per page type, from every thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {}
        self.errors: dict[str, list] = {}

    def timed(self, page: str, call, ok=(200,)) -> int | None:
        """Time one request; its status (None when the connection failed)."""
        started = time.perf_counter()
        try:
            status, _body = call()
        except (http.client.HTTPException, OSError) as error:
            with self.lock:
                self.errors.setdefault(page, []).append(repr(error))
            return None
        elapsed = (time.perf_counter() - started) * 1000
        with self.lock:
            self.times.setdefault(page, []).append(elapsed)
            if status not in ok:
                self.errors.setdefault(page, []).append(status)
        return status

    def rows(self) -> dict:
        out = {}
        for page in sorted(set(self.times) | set(self.errors)):
            ordered = sorted(self.times.get(page, []))
            out[page] = {
                "n": len(ordered),
                "errors": len(self.errors.get(page, [])),
                "error_kinds": sorted({str(e) for e in self.errors.get(page, [])})[:3],
                "p50": statistics.median(ordered) if ordered else None,
                "p95": ordered[int(0.95 * (len(ordered) - 1))] if ordered else None,
                "max": ordered[-1] if ordered else None,
            }
        return out


def annotator_actions(browser: Browser, ids: dict, rng: random.Random):
    """One thing an annotator does: (page type, the call, the chunk label it saves)."""
    query = rng.choice(ids["queries"][:200])
    grade = rng.randrange(4)
    chunk = rng.choice(list(ids["spans"]))
    document, start, end = ids["spans"][chunk]
    label = f"/p/load/label/{query}/"
    choices = [
        ("project list", lambda: browser.request("GET", "/")),
        ("project home", lambda: browser.request("GET", "/p/load/")),
        ("queue", lambda: browser.request("GET", "/p/load/queue/")),
        ("labelling screen", lambda: browser.request("GET", label)),
        (
            "grade save",
            lambda: browser.post_form(label + "judge/", {"chunk": chunk, "grade": grade}),
        ),
        (
            "passage save",
            lambda: browser.post_form(
                label + "judge/",
                {
                    "granularity": "passage",
                    "document": document,
                    "start": start,
                    "end": min(end, start + 12),
                    "grade": rng.randrange(4),
                },
            ),
        ),
        (
            "search (English)",
            lambda: browser.request("GET", label + "search/?q=" + rng.choice(WORDS)),
        ),
        (
            "search (Chinese)",
            lambda: browser.request(
                "GET", label + "search/?q=" + quote(rng.choice(["升力", "合同", "违约", "边界"]))
            ),
        ),
        ("document view", lambda: browser.request("GET", f"{label}document/?document={document}")),
    ]
    # Labelling is what annotators mostly do.
    weights = [1, 1, 1, 3, 5, 2, 1, 1, 2]
    page, call = rng.choices(choices, weights)[0]
    return page, call, (query, int(chunk), grade) if page == "grade save" else None


def lead_actions(browser: Browser, ids: dict, rng: random.Random):
    qid = f"q{rng.randrange(200)}"
    choices = [
        ("project list", lambda: browser.request("GET", "/")),
        ("project home", lambda: browser.request("GET", "/p/load/")),
        ("dashboard", lambda: browser.request("GET", "/p/load/metrics/")),
        ("drill-down", lambda: browser.request("GET", f"/p/load/runs/{ids['run']}/q/{qid}/")),
        ("agreement", lambda: browser.request("GET", "/p/load/agreement/")),
        ("adjudication", lambda: browser.request("GET", "/p/load/adjudicate/")),
    ]
    return (*rng.choice(choices), None)


def person(name, browser, actions, ids, seconds, tally, expected, seed) -> None:
    rng = random.Random(seed)
    time.sleep(rng.random() * THINK_SECONDS)  # people do not start together
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        page, call, saves = actions(browser, ids, rng)
        if tally.timed(page, call) == 200 and saves:
            query, chunk, grade = saves  # one save at a time: the last answered one stands
            expected[(name, query, chunk)] = grade
        time.sleep(THINK_SECONDS)


def documents_file(path: Path) -> None:
    rng = random.Random(11)
    with path.open("w") as handle:
        for i in range(IMPORT_DOCUMENTS):
            text = " ".join(rng.choice(WORDS) for _ in range(40))
            handle.write(json.dumps({"doc_id": f"big-{i}", "title": f"doc {i}", "text": text}))
            handle.write("\n")


def run_file(path: Path, ids: dict) -> None:
    """RUN_LINES lines: every query × as many chunks as it takes (chunk ids d<n>#<c>)."""
    per_query = RUN_LINES // N_QUERIES
    chunk_ids = [f"d{d}#{c}" for d in range(N_DOCUMENTS) for c in range(CHUNKS_PER_DOCUMENT)]
    with path.open("w") as handle:
        for q in range(N_QUERIES):
            handle.writelines(
                f"q{q} Q0 {chunk_ids[k]} {k + 1} {per_query - k} load\n" for k in range(per_query)
            )


def upload(browser: Browser, path: Path, fields: dict) -> int:
    _, page = browser.request("GET", "/p/load/imports/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in {"csrfmiddlewaretoken": token, **fields}.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        )
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
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


def scenario(browsers: dict, ids: dict, seconds: float, expected: dict) -> dict:
    tally = Tally()
    threads = []
    for seed, (name, browser) in enumerate(browsers.items()):
        actions = lead_actions if name.startswith("lead") else annotator_actions
        threads.append(
            threading.Thread(
                target=person,
                args=(name, browser, actions, ids, seconds, tally, expected, seed),
                daemon=True,
            )
        )
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally.rows()


def run_backend(backend: str, scenarios: list[str], seconds: float) -> list[dict]:
    annotators, leads = PEOPLE[backend]
    server = Server(backend)
    try:
        server.manage("migrate", "--noinput")
        server.manage("collectstatic", "--noinput", "-v", "0")
        ids = server.python("--setup", str(annotators), str(leads))
        server.start()
        names = [f"a{i:02d}" for i in range(annotators)] + [f"lead{i}" for i in range(leads)]
        logins = Tally()
        browsers = {}
        for name in names:
            browsers[name] = Browser(server.port)
            logins.timed(
                "login", lambda b=browsers[name], n=name: (b.log_in(n, PASSWORD), b""), ok=(302,)
            )
        # Warm-up: every page type once per process, unmeasured.
        warm = Tally()
        rng = random.Random(1)
        for name, browser in list(browsers.items())[: 2 * 8]:
            actions = lead_actions if name.startswith("lead") else annotator_actions
            for _ in range(6):
                page, call, _saves = actions(browser, ids, rng)
                warm.timed(page, call)
        owner = Browser(server.port)
        assert owner.log_in("owner", PASSWORD) == 302
        results = []
        expected: dict = {}
        for name in scenarios:
            row = {"backend": backend, "scenario": name}
            if name == "documents import":
                big = server.data / "big.jsonl"
                documents_file(big)
                row["upload_status"] = upload(owner, big, {"kind": "documents"})
            elif name == "run import":
                big = server.data / "big.trec"
                run_file(big, ids)
                row["upload_status"] = upload(
                    owner, big, {"kind": "run", "run_name": "ten-million", "chunking": "c5"}
                )
            row["pages"] = scenario(browsers, ids, seconds, expected)
            if name == "alone":
                row["pages"].update(logins.rows())
            if name != "alone":
                deadline = time.perf_counter() + 3600
                while time.perf_counter() < deadline:
                    state = server.python("--state")
                    if all(job["status"] in ("done", "failed") for job in state["jobs"]):
                        break
                    time.sleep(5)
                row["jobs"] = state["jobs"]
            results.append(row)
        # Saves answered 200 whose grade is not the annotator's label at the end.
        final = server.python("--state")["labels"]
        labels = {(u, q, c): g for u, q, c, g in final}
        lost = sum(labels.get(key) != grade for key, grade in expected.items())
        for row in results:
            row["lost"] = lost
            print(json.dumps(row, default=str), flush=True)
        return results
    finally:
        server.stop()


def table(results: list[dict]) -> str:
    lines = [
        "| backend | scenario | page | n | errors | lost saves | p50 ms | p95 ms | max ms "
        "| verdict |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in results:
        for page, r in row["pages"].items():
            fine = r["errors"] == 0 and not row.get("lost") and (r["p95"] or 0) <= TARGET_P95
            number = lambda v: "—" if v is None else f"{v:.0f}"  # noqa: E731
            lines.append(
                f"| {row['backend']} | {row['scenario']} | {page} | {r['n']} | {r['errors']} | "
                f"{row.get('lost', '—')} | "
                f"{number(r['p50'])} | {number(r['p95'])} | {number(r['max'])} | "
                f"{'ok' if fine else 'MISSED'} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--setup"]:
        setup_project(int(argv[1]), int(argv[2]))
        return
    if argv[:1] == ["--state"]:
        report_state()
        return
    parser = argparse.ArgumentParser(prog="python -m bench load")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--scenarios", default="alone,documents import,run import")
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("backend", nargs="*", default=[], help="sqlite or postgres (old form)")
    options = parser.parse_args(argv)
    backends = options.backend or options.backends.split(",")
    results = []
    for backend in backends:
        print(f"running {backend} …", flush=True)
        results += run_backend(backend, options.scenarios.split(","), options.seconds)
        if options.json:
            Path(options.json).write_text(json.dumps(results, indent=1, default=str))
    print(table(results))


if __name__ == "__main__":
    main()
