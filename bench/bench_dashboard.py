"""Dashboard and run import at scale (SQLite, production settings).

    .venv/bin/python -m bench dashboard

A generated project: 5,000 documents, a chunking of 10,000 chunks, 5,000 queries, 50,000
chunk labels by two annotators and 10 runs of 100 results per query (5,000,000 results).

- **dashboard**: server time of the full dashboard page (10 runs × 5,000 queries, eight
  measures with bootstrap intervals and Judged@k), first render in a fresh process and
  then the median of REPEATS; and the htmx refresh right after one new label.
- **import**: ``manage.py import_run`` of a 1,000,000-line TREC run (the project's 5,000
  queries × 200 results) in its own process: wall time and peak resident memory
  (``ru_maxrss``).

- **own units**: the same project grown to 30 runs — the 10 above, 10 over a second
  chunking of 15,000 chunks and 10 document runs, 10 of the 30 archived — at level
  ``own`` (each run on its own units: three gold levels), measured in a fresh process:
  first render and the htmx refresh right after one new label; then the first render
  once more in a fresh process after deleting the run index files.

Each run is created as an import leaves it, then indexed as the worker indexes an
imported run (``metrics.tasks.write_own_index``: its index file at its own units), so a
fresh process reads the indexes instead of building them.

Targets: first render ≤ 1.5 s, refresh after one label ≤ 300 ms (both scenarios);
import ≤ 20 s and ≤ 500 MB.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N_DOCUMENTS = 5_000
N_QUERIES = 5_000
N_RUNS = 10
RESULTS = 100
IMPORT_RESULTS = 200  # per query: 5,000 × 200 = 1,000,000 lines
REPEATS = 5


def _env(folder: str) -> dict:
    return {
        **os.environ,
        "ASSAY_DATA_DIR": folder,
        "ASSAY_STATIC_ROOT": str(Path(folder) / "static"),
        "ASSAY_DEBUG": "0",
        "SECRET_KEY": "bench",
        "ALLOWED_HOSTS": "testserver",
        "ASSAY_SSL_REDIRECT": "0",
        "ASSAY_MAX_UPLOAD_BYTES": str(2 * 1024**3),
        "DATABASE_URL": "",
    }


def child(folder: str) -> None:
    """Runs inside the benchmark's own process and database."""
    import django

    django.setup()
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotator.evidence import Evidence
    from annotator.labels import bulk_create_judgments, change_label
    from annotator.models import (
        Chunk,
        Chunking,
        Document,
        Granularity,
        Judgment,
        Membership,
        Project,
        Query,
        Role,
    )
    from metrics.models import Run
    from metrics.tasks import write_own_index

    rng = np.random.default_rng(3)
    User = get_user_model()
    owner = User.objects.create_user("owner", password="x-bench-password")
    annotators = [User.objects.create_user(f"a{i}", password="x-bench-password") for i in range(2)]
    project = Project.objects.create(slug="bench", name="Bench")
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    for user in annotators:
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    Document.objects.bulk_create(
        [
            Document(project=project, doc_id=f"doc{i}", title=f"Doc {i}", text="lorem ipsum " * 20)
            for i in range(N_DOCUMENTS)
        ],
        batch_size=2000,
    )
    documents = list(project.documents.order_by("pk").values_list("pk", flat=True))
    chunking = Chunking.objects.create(project=project, name="c")
    Chunk.objects.bulk_create(
        [
            Chunk(
                chunking=chunking,
                chunk_id=f"doc{i}#{h}",
                document_id=pk,
                start=120 * h,
                end=120 * h + 120,
            )
            for i, pk in enumerate(documents)
            for h in range(2)
        ],
        batch_size=5000,
    )
    Query.objects.bulk_create(
        [Query(project=project, qid=f"q{i}", text=f"question {i}") for i in range(N_QUERIES)],
        batch_size=2000,
    )
    chunks = list(
        Chunk.objects.filter(chunking=chunking)
        .order_by("pk")
        .values_list("pk", "document_id", "start", "end", "chunk_id")
    )
    queries = list(project.queries.order_by("pk").values_list("pk", flat=True))
    judgments = []
    for query in queries:
        for index in rng.choice(len(chunks), 5, replace=False):
            pk, doc, start, end, _ = chunks[index]
            for user in annotators:
                judgments.append(
                    Judgment(
                        query_id=query,
                        annotator=user,
                        granularity=Granularity.CHUNK,
                        document_id=doc,
                        start=start,
                        end=end,
                        chunk=Chunk(pk=pk, chunk_id=""),
                        grade=int(rng.integers(0, 4)),
                    )
                )
    bulk_create_judgments(judgments, changed_by=owner)
    chunk_pks = np.array([c[0] for c in chunks])
    for r in range(N_RUNS):
        run = Run(project=project, name=f"run{r}", level="chunk", chunking=chunking)
        q = np.repeat(queries, RESULTS)
        items = np.concatenate([rng.choice(chunk_pks, RESULTS, replace=False) for _ in queries])
        run.set_results(q, items, rng.random(q.size))
        run.save()
        write_own_index(run.pk)  # what the worker does after an import
    # The 1,000,000-line file for the import benchmark.
    with open(Path(folder) / "run.trec", "w") as handle:
        for i in range(N_QUERIES):
            for rank, index in enumerate(
                rng.choice(len(chunks), IMPORT_RESULTS, replace=False), start=1
            ):
                handle.write(f"q{i} Q0 {chunks[index][4]} {rank} {1000 - rank} bench\n")

    client = Client()
    client.force_login(owner)
    url = "/p/bench/metrics/?level=c&k=10"
    started = time.perf_counter()
    response = client.get(url)
    first = time.perf_counter() - started
    assert response.status_code == 200, response.status_code
    warm = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        client.get(url)
        warm.append(time.perf_counter() - started)
    refresh, label = [], []
    target = Chunk.objects.filter(chunking=chunking).order_by("pk").first()
    query = Query.objects.filter(project=project).order_by("pk").first()
    for grade in range(REPEATS):
        started = time.perf_counter()
        change_label(
            query=query,
            annotator=annotators[0],
            evidence=Evidence.for_chunk(target),
            grade=grade % 4,
        )
        label.append(time.perf_counter() - started)
        started = time.perf_counter()
        partial = client.get(url, HTTP_HX_REQUEST="true")
        refresh.append(time.perf_counter() - started)
        assert partial.status_code == 200
    _grow_to_thirty_runs(project, queries, documents, rng)
    print(
        json.dumps(
            {
                "first": first,
                "warm": statistics.median(warm),
                "refresh": statistics.median(refresh),
                "label": statistics.median(label),
            }
        )
    )


def _grow_to_thirty_runs(project, queries, documents, rng) -> None:
    """Add a chunking of three 80-character chunks per document, 10 runs over it and 10
    document runs, then archive 10 of the 30 runs."""
    import numpy as np
    from django.utils import timezone

    from annotator.models import Chunk, Chunking
    from metrics.models import Run
    from metrics.tasks import write_own_index

    thirds = Chunking.objects.create(project=project, name="c3")
    Chunk.objects.bulk_create(
        [
            Chunk(
                chunking=thirds,
                chunk_id=f"doc{i}#{h}",
                document_id=pk,
                start=80 * h,
                end=80 * h + 80,
            )
            for i, pk in enumerate(documents)
            for h in range(3)
        ],
        batch_size=5000,
    )
    third_pks = np.array(
        Chunk.objects.filter(chunking=thirds).order_by("pk").values_list("pk", flat=True)
    )
    document_pks = np.array(documents)
    q = np.repeat(queries, RESULTS)
    for r in range(N_RUNS):
        for name, chunking, items in (
            (f"thirds{r}", thirds, third_pks),
            (f"docs{r}", None, document_pks),
        ):
            run = Run(
                project=project,
                name=name,
                level="chunk" if chunking else "document",
                chunking=chunking,
            )
            chosen = np.concatenate([rng.choice(items, RESULTS, replace=False) for _ in queries])
            run.set_results(q, chosen, rng.random(q.size))
            run.save()
            write_own_index(run.pk)  # what the worker does after an import
    archived = [f"run{i}" for i in range(4)] + [f"thirds{i}" for i in range(3)]
    archived += [f"docs{i}" for i in range(3)]
    Run.objects.filter(project=project, name__in=archived).update(archived_at=timezone.now())


def own_child(folder: str, *, first_only: bool = False) -> None:
    """A fresh process: the own-units dashboard of the 30-run project (``first_only``: the
    first render alone)."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotator.evidence import Evidence
    from annotator.labels import change_label
    from annotator.models import Chunk, Query
    from metrics.models import Run

    User = get_user_model()
    client = Client()
    client.force_login(User.objects.get(username="owner"))
    url = "/p/bench/metrics/?level=own&k=10"
    started = time.perf_counter()
    response = client.get(url)
    first = time.perf_counter() - started
    assert response.status_code == 200, response.status_code
    body = response.content.decode()
    # Other sections (quality shares) list runs too: count the runs named, once each.
    shown = set(re.findall(r'<tr data-run="([^"]+)"', body))
    assert len(shown) == 20 and Run.objects.count() == 30, (len(shown), Run.objects.count())
    assert all(f'data-unit-level="{level}"' in body for level in ("c", "c3", "documents"))
    if first_only:
        print(json.dumps({"first": first}))
        return
    warm, refresh = [], []
    for _ in range(REPEATS):
        started = time.perf_counter()
        client.get(url)
        warm.append(time.perf_counter() - started)
    annotator = User.objects.get(username="a0")
    target = Chunk.objects.filter(chunking__name="c").order_by("pk").first()
    query = Query.objects.filter(project__slug="bench").order_by("pk").first()
    for grade in range(REPEATS):
        change_label(
            query=query,
            annotator=annotator,
            evidence=Evidence.for_chunk(target),
            grade=3 - grade % 4,
        )
        started = time.perf_counter()
        partial = client.get(url, HTTP_HX_REQUEST="true")
        refresh.append(time.perf_counter() - started)
        assert partial.status_code == 200
    print(
        json.dumps(
            {
                "first": first,
                "warm": statistics.median(warm),
                "refresh": statistics.median(refresh),
            }
        )
    )


def _figures_of(code: str, env: dict) -> dict:
    """Run ``python -c code`` in its own process; the JSON object it prints last."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = _env(folder)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True
        )
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        env = {**env, "DJANGO_SETTINGS_MODULE": "config.settings"}
        started = time.perf_counter()
        figures = _figures_of(
            "import sys; sys.argv=['x']; from bench.bench_dashboard import child; "
            f"child({folder!r})",
            env,
        )
        generated = time.perf_counter() - started
        own_figures = _figures_of("from bench.bench_dashboard import own_child; own_child('')", env)
        # The same first render when no run has its index file yet (no worker ran after
        # the imports): every index is built in the request, and its file written.
        shutil.rmtree(Path(folder) / "run-index")
        own_figures["cold"] = _figures_of(
            "from bench.bench_dashboard import own_child; own_child('', first_only=True)", env
        )["first"]
        script = (
            "import resource, time, django; django.setup(); "
            "from django.core.management import call_command; t = time.perf_counter(); "
            f"call_command('import_run', 'bench', {str(Path(folder) / 'run.trec')!r}, "
            "'--name', 'imported', '--chunking', 'c', verbosity=0); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        )
        result = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        )
        *other, last = result.stdout.strip().splitlines()
        print("\n".join(other), file=sys.stderr)
        seconds, max_kb = last.split()
    print(
        f"SQLite, production settings; built and measured in {generated:.0f} s: {N_DOCUMENTS:,} "
        f"documents, {2 * N_DOCUMENTS:,} chunks, {N_QUERIES:,} queries, 50,000 labels, "
        f"{N_RUNS} runs × {RESULTS} results per query\n"
    )
    print("| measurement | figure | target |")
    print("|---|---:|---:|")
    print(
        f"| dashboard, first render (nothing cached) | {figures['first'] * 1000:.0f} ms "
        "| ≤ 1500 ms |"
    )
    print(f"| dashboard, warm (median of {REPEATS}) | {figures['warm'] * 1000:.0f} ms | — |")
    print(f"| saving one label | {figures['label'] * 1000:.0f} ms | — |")
    print(
        f"| dashboard refresh after one label (htmx, median of {REPEATS}) | "
        f"{figures['refresh'] * 1000:.0f} ms | ≤ 300 ms |"
    )
    print(f"| import_run, 1,000,000-line TREC file | {float(seconds):.1f} s | ≤ 20 s |")
    print(f"| import_run, peak resident memory | {int(max_kb) / 1024:.0f} MB | ≤ 500 MB |")
    print(
        "\nOwn units: 30 runs (10 over `c`, 10 over `c3` of 15,000 chunks, 10 document "
        "runs; 10 archived), level `own`, 20 active runs on three gold levels\n"
    )
    print("| measurement | figure | target |")
    print("|---|---:|---:|")
    print(
        f"| own units, first render in a fresh process | {own_figures['first'] * 1000:.0f} ms "
        "| ≤ 1500 ms |"
    )
    print(
        "| own units, first render in a fresh process, no run index files "
        f"| {own_figures['cold'] * 1000:.0f} ms | — |"
    )
    print(f"| own units, warm (median of {REPEATS}) | {own_figures['warm'] * 1000:.0f} ms | — |")
    print(
        f"| own units, refresh after one label (htmx, median of {REPEATS}) | "
        f"{own_figures['refresh'] * 1000:.0f} ms | ≤ 300 ms |"
    )


if __name__ == "__main__":
    main()
