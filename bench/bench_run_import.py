"""`manage.py import_run` of a 10,000,000-line TREC run: the whole process's time and peak.

    .venv/bin/python -m bench run_import

A fresh SQLite database (production settings) with one project of 10,000 queries and
100,000 documents; the run is bench_trec_eval's 100 k-id file: 10,000 queries × 1,000
results (10,000,000 lines, grouped by query, best first), every id a document of the
project. ``manage.py import_run bench RUN --name dense --documents`` runs as its own
process ``BENCH_REPEATS`` times (default 3, the run replaced each time): wall time from
this process, CPU time and peak resident memory from that child's own rusage
(``os.wait4``: ``ru_maxrss`` of the importing process alone, Django start-up included).
Targets: ≤ 30 s and ≤ 1 GB.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_dashboard import ROOT, _env
from bench.bench_trec_eval import generate

N_QUERIES, N_DOCUMENTS = 10_000, 100_000
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
SETUP = f"""
import django
django.setup()
from annotator.models import Document, Project, Query
project = Project.objects.create(slug="bench", name="Bench")
Query.objects.bulk_create(
    [Query(project=project, qid=f"{{i:05d}}", text="q") for i in range({N_QUERIES})],
    batch_size=5000,
)
Document.objects.bulk_create(
    [Document(project=project, doc_id=f"D{{i:09d}}") for i in range({N_DOCUMENTS})],
    batch_size=5000,
)
"""


# The worker's task body, in its own process; the file is deleted first so that each
# turn builds it.
INDEX = """
import shutil, django
django.setup()
from django.conf import settings
from metrics.models import Run
from metrics.tasks import write_own_index
shutil.rmtree(settings.ASSAY_RUN_INDEX_DIR, ignore_errors=True)
assert write_own_index(Run.objects.get(name="dense").pk)
"""


def measured(command: list[str], env: dict) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    # The files are written (once) by a child: a process forked from a large parent starts
    # with the parent's peak as its own ru_maxrss, which would hide the import's.
    write_files = f"from bench.bench_trec_eval import generate; generate('100k', {N_DOCUMENTS})"
    subprocess.run([sys.executable, "-c", write_files], cwd=ROOT, check=True)
    _qrels, run = generate("100k", N_DOCUMENTS)  # the paths of the files written
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        env = {**_env(folder), "DJANGO_SETTINGS_MODULE": "config.settings"}
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, check=True)
        command = [*manage, "import_run", "bench", str(run), "--name", "dense", "--documents"]
        samples = [measured([*command, *(["--replace"] if i else [])], env) for i in range(REPEATS)]
        # What the worker then does with the import: the run's index file at documents.
        index = [sys.executable, "-c", INDEX]
        indexed = [measured(index, env) for _ in range(REPEATS)]
        index_mb = sum(f.stat().st_size for f in Path(folder, "run-index").glob("*.npy")) / 1e6
    wall, cpu, peak = (statistics.median(s[i] for s in samples) for i in range(3))
    print(
        f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n"
    )
    print("| measurement | figure | target |")
    print("|---|---:|---:|")
    print(
        f"| import_run, 10,000,000-line TREC file (median of {REPEATS}) | {wall:.1f} s | ≤ 30 s |"
    )
    print(f"| import_run, CPU time (user + system) | {cpu:.1f} s | — |")
    print(f"| import_run, peak resident memory (whole process) | {peak:.0f} MB | ≤ 1024 MB |")
    wall, cpu, peak = (statistics.median(s[i] for s in indexed) for i in range(3))
    print(f"| worker: the run's index file at documents (median of {REPEATS}) | {wall:.1f} s | — |")
    print(f"| worker: CPU time (user + system) | {cpu:.1f} s | — |")
    print(f"| worker: peak resident memory (whole process) | {peak:.0f} MB | — |")
    print(f"| worker: the index file's size | {index_mb:.0f} MB | — |")
    for name, runs in (("import", samples), ("index", indexed)):
        each = ", ".join(f"{w:.1f} s / {c:.1f} CPU-s / {p:.0f} MB" for w, c, p in runs)
        print(f"\nevery {name}: {each}")
