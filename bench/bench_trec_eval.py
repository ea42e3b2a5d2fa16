"""`manage.py trec_eval` against trec_eval and pytrec_eval: whole processes, alternating.

    TREC_EVAL=/path/to/trec_eval .venv/bin/python -m bench trec_eval

Every variant of the run file people really have is timed against trec_eval on the same
bytes: ``plain``; ``comment`` (a ``#`` line at the top); ``crlf`` (Windows line ends);
``gzip`` (Assay reads ``run.gz``, trec_eval ``zcat run.gz | trec_eval … -``, the two
processes of the pipe overlapping); ``stdin`` (both read ``-`` from ``< run``).
``BENCH_VARIANTS=plain,gzip`` runs some; pytrec_eval runs on the plain file only.

A seeded collection like a dense retriever's run over a large corpus: 10,000 queries ×
1,000 results (10,000,000 lines, grouped by query, best first), 50 judged items per
query (500,000 qrels lines, grades 0–3, half from the run's top 200), measures
``map P.10 recall.100 ndcg_cut.10 recip_rank``; document ids drawn from a corpus of
100,000,000 (about 9 M distinct ids in the run) and again from one of 100,000. Files go
to bench/out/ (not in the repository); ``BENCH_SETTINGS=9M`` (or ``100k``) runs one
setting, ``BENCH_REPEATS`` sets the number of turns (default 3). Each tool runs as its
own process — start-up, reading and evaluating included — REPEATS times, the tools
taking turns; wall time, CPU time (user + system) and peak resident memory come from
/usr/bin/time. Assay's output must equal trec_eval's line for line, and pytrec_eval's
means must agree to 4 decimals, before a figure is reported. pytrec_eval's process
reads the files with a plain Python loop into its dicts, the way its documentation
shows.
"""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
N_QUERIES, RESULTS, JUDGED = 10_000, 1_000, 50
CORPORA = {"9M": 100_000_000, "100k": 100_000}
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
MEASURES = ["map", "P.10", "recall.100", "ndcg_cut.10", "recip_rank"]
PYTREC = f"""
import sys, pytrec_eval
qrels, run = {{}}, {{}}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, g = line.split()
        qrels.setdefault(q, {{}})[d] = int(g)
with open(sys.argv[2]) as f:
    for line in f:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {{}})[d] = float(s)
names = {{"map", "P_10", "recall_100", "ndcg_cut_10", "recip_rank"}}
result = pytrec_eval.RelevanceEvaluator(qrels, {set(MEASURES)!r}).evaluate(run)
for name in sorted(names):
    print(name, sum(r[name] for r in result.values()) / len(result))
"""


def generate(name: str, corpus: int, seed: int = 7) -> tuple[Path, Path]:
    """Write (once) the qrels and run files of one setting; returns their paths."""
    import polars as pl

    OUT.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = OUT / f"trec_eval_{name}.qrels", OUT / f"trec_eval_{name}.run"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    if corpus >= 10 * N_QUERIES * RESULTS:
        items = rng.integers(0, corpus, size=(N_QUERIES, RESULTS))
        for q in np.flatnonzero((np.diff(np.sort(items, axis=1), axis=1) == 0).any(axis=1)):
            items[q] = rng.choice(corpus, RESULTS, replace=False)
    else:
        items = np.stack([rng.choice(corpus, RESULTS, replace=False) for _ in range(N_QUERIES)])
    scores = -np.sort(-np.round(rng.random((N_QUERIES, RESULTS)) * 100, 4), axis=1)
    query = np.repeat(np.arange(N_QUERIES), RESULTS)
    pl.DataFrame(
        {
            "qid": pl.Series(query).cast(pl.String).str.pad_start(5, "0"),
            "q0": pl.repeat("Q0", query.size, eager=True),
            "docid": pl.Series(items.ravel()).cast(pl.String).str.pad_start(9, "0"),
            "rank": pl.Series(np.tile(np.arange(1, RESULTS + 1), N_QUERIES)),
            "score": pl.Series(scores.ravel()),
            "tag": pl.repeat("dense", query.size, eager=True),
        }
    ).with_columns(pl.format("D{}", "docid").alias("docid")).write_csv(
        run_path, separator=" ", include_header=False, quote_style="never"
    )
    judged_q, judged_d = [], []
    for q in range(N_QUERIES):
        pool = np.unique(
            np.r_[
                rng.choice(items[q, :200], JUDGED // 2, replace=False),
                rng.integers(0, corpus, JUDGED),
            ]
        )
        pool = rng.permutation(pool)[:JUDGED]
        judged_q.append(np.full(pool.size, q))
        judged_d.append(pool)
    judged_query, judged_item = np.concatenate(judged_q), np.concatenate(judged_d)
    pl.DataFrame(
        {
            "qid": pl.Series(judged_query).cast(pl.String).str.pad_start(5, "0"),
            "iteration": pl.repeat("0", judged_query.size, eager=True),
            "docid": pl.Series(judged_item).cast(pl.String).str.pad_start(9, "0"),
            "grade": pl.Series(rng.choice([0, 0, 0, 1, 2, 3], size=judged_query.size)),
        }
    ).with_columns(pl.format("D{}", "docid").alias("docid")).write_csv(
        qrels_path, separator=" ", include_header=False, quote_style="never"
    )
    return qrels_path, run_path


VARIANTS = ("plain", "comment", "crlf", "gzip", "stdin")


def variant(run: Path, name: str) -> Path:
    """The run file of a variant, written once beside the plain one."""
    if name in ("plain", "stdin"):
        return run
    path = run.with_name(f"{run.name}.{name}" + (".gz" if name == "gzip" else ""))
    if path.exists():
        return path
    if name == "comment":
        with path.open("wb") as out, run.open("rb") as source:
            out.write(b"# run dense: 10,000 queries x 1,000 results, written by the benchmark\n")
            while block := source.read(1 << 24):
                out.write(block)
    elif name == "crlf":
        with path.open("wb") as out, run.open("rb") as source:
            for line in source:
                out.write(line[:-1] + b"\r\n")
    else:
        with path.open("wb") as out:
            subprocess.run(["gzip", "-c", str(run)], stdout=out, check=True)
    return path


def timed(command: list[str] | str) -> tuple[str, float, float, float]:
    """(stdout, wall s, CPU s, peak MB) of one process (or shell pipeline: its largest
    process's peak), from /usr/bin/time."""
    if isinstance(command, str):
        command = ["sh", "-c", command]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        done = subprocess.run(
            ["/usr/bin/time", "-o", report.name, "-f", "%e %U %S %M", *command],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        wall, user, system, kilobytes = report.read().split()[-4:]
    return done.stdout, float(wall), float(user) + float(system), int(kilobytes) / 1024


def commands(trec_eval: str, qrels: Path, run: Path, name: str) -> dict[str, list[str] | str]:
    """The Assay and trec_eval commands of one variant (and pytrec_eval's on plain)."""
    flags = [flag for m in MEASURES for flag in ("-m", m)]
    assay = [sys.executable, "manage.py", "trec_eval", *flags, str(qrels)]
    theirs = [trec_eval, *flags, str(qrels)]
    path = variant(run, name)
    if name == "gzip":
        tools = {ASSAY: [*assay, str(path)], TREC_EVAL: f"zcat {path} | {shlex.join(theirs)} -"}
    elif name == "stdin":
        tools = {
            ASSAY: f"{shlex.join(assay)} - < {path}",
            TREC_EVAL: f"{shlex.join(theirs)} - < {path}",
        }
    else:
        tools = {ASSAY: [*assay, str(path)], TREC_EVAL: [*theirs, str(path)]}
    if name == "plain":
        tools[PYTREC_EVAL] = [sys.executable, "-c", PYTREC, str(qrels), str(run)]
    return tools


ASSAY, TREC_EVAL, PYTREC_EVAL = "Assay (manage.py trec_eval)", "trec_eval", "pytrec_eval"


def check(outputs: dict[str, str]) -> None:
    """Assay prints what trec_eval prints; pytrec_eval's means agree to 4 decimals."""
    ours, theirs = outputs[ASSAY], outputs[TREC_EVAL]
    assert ours == theirs, (ours, theirs)
    if PYTREC_EVAL not in outputs:
        return
    means = {line.split()[0]: float(line.split()[2]) for line in theirs.splitlines()}
    for line in outputs[PYTREC_EVAL].splitlines():
        name, value = line.split()
        assert abs(means[name] - float(value)) < 1e-4, (name, means[name], value)


def main() -> None:
    trec_eval = os.environ.get("TREC_EVAL")
    if not trec_eval:
        print("set TREC_EVAL to a trec_eval binary built from usnistgov/trec_eval")
        return
    print(
        "| run ids | variant | tool | wall s (median) | CPU s | peak MB | wall ÷ trec_eval | "
        "peak ÷ trec_eval | runs |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    wanted = os.environ.get("BENCH_SETTINGS", ",".join(CORPORA)).split(",")
    variants = os.environ.get("BENCH_VARIANTS", ",".join(VARIANTS)).split(",")
    for name, corpus in CORPORA.items():
        if name not in wanted:
            continue
        qrels, run = generate(name, corpus)
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        for kind in variants:
            tools = commands(trec_eval, qrels, run, kind)
            samples: dict[str, list[tuple[float, float, float]]] = {t: [] for t in tools}
            for repeat in range(REPEATS):
                order = list(tools)[repeat % len(tools) :] + list(tools)[: repeat % len(tools)]
                outputs = {}
                for tool in order:
                    outputs[tool], *figures = timed(tools[tool])
                    samples[tool].append(tuple(figures))
                check(outputs)
            median = {
                t: [statistics.median(s[i] for s in samples[t]) for i in range(3)] for t in tools
            }
            for tool in tools:
                wall, cpu, peak = median[tool]
                print(
                    f"| {name} | {kind} | {tool} | {wall:.2f} | {cpu:.2f} | {peak:.0f} | "
                    f"{wall / median[TREC_EVAL][0]:.2f} | {peak / median[TREC_EVAL][2]:.2f} | "
                    f"{REPEATS} |",
                    flush=True,
                )
            for tool in tools:
                each = ", ".join(
                    f"{w:.1f} s / {c:.1f} CPU-s / {p:.0f} MB" for w, c, p in samples[tool]
                )
                print(f"<!-- {name} {kind} {tool}: {each} -->")
        after = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"\n{name}: load average {load} before, {after} after\n", flush=True)
