"""Scale: every page and command, from 10,000 to 1,000,000 documents.

    .venv/bin/python -m bench scale                             # small, medium; both databases
    .venv/bin/python -m bench scale --sizes small,medium,large       # large on PostgreSQL only
    .venv/bin/python -m bench scale --sizes small --backends sqlite --repeats 10

Each (size, database) runs in its own process with production settings (DEBUG off), in
a fresh temporary folder (SQLite) or a fresh PostgreSQL database ``assay_scale_<size>``
on postgres://postgres@127.0.0.1:5432/ (dropped afterwards unless ``--keep``). The
project is generated with bulk SQL (bench/scale_project.py; sizes in ``SIZES``). Then:

- every page of the permission matrix's URL list (tests/test_project_views.PAGE_ROLES,
  as the owner sees it), the project list, and the search screen for English words and
  Chinese 2- and 4-character terms: the first request (with the per-process caches
  emptied just before: a cold process) and then REPEATS warm requests (p50, p95); server
  time around Django's test client; with ``--after-change``, one more request right after
  one label changed (what a page costs while people label);
- the common path of every management command, once, in the same process.

Printed: one table per database with each page's warm p95 per size, its first request,
and its growth exponent (the slope of log p95 against log documents, least squares over
the sizes measured); a chart (docs/scale.svg). Targets: every page p95 ≤ 300 ms; pages
that evaluate runs: warm ≤ 300 ms, first ≤ 1.5 s; pages showing a bounded amount of
data grow with exponent ≤ 0.2; search p95 ≤ 100 ms.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_SERVER = "postgres://postgres@127.0.0.1:5432/"
REPEATS = 20
DEFAULT_SIZES = ["small", "medium"]
BACKENDS = ["sqlite", "postgres"]

# Pages that evaluate runs or compare every label (their figures rest on all the data):
# warm ≤ 300 ms, first render ≤ 1.5 s; no growth target.
EVALUATES = {
    "metrics:dashboard",
    "metrics:dashboard_chart",
    "metrics:compare",
    "metrics:run_detail",
    "metrics:run_histogram",
    "metrics:run_query",
    "metrics:series",
    "gold:agreement",
    "gold:queue",
    "gold:detail",
    "judges:calibration",
}
# Downloads of a whole table (every label, every result): they grow with the data.
WHOLE_FILES = {
    "metrics:export",
    "metrics:qrels_file",
    "metrics:run_file",
    "gold:disagreements_download",
    "gold:export",
}


def _env(folder: str, backend: str, size: str) -> dict:
    env = {
        **os.environ,
        "ASSAY_DATA_DIR": folder,
        "ASSAY_STATIC_ROOT": str(Path(folder) / "static"),
        "ASSAY_DEBUG": "0",
        "SECRET_KEY": "bench-scale",
        "ALLOWED_HOSTS": "testserver",
        "ASSAY_SSL_REDIRECT": "0",
        "ASSAY_HTTPS": "0",
        "DATABASE_URL": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "PYTHONPATH": str(ROOT),
    }
    if backend == "postgres":
        env["DATABASE_URL"] = PG_SERVER + f"assay_scale_{size}"
    return env


def _psql(sql: str) -> None:
    subprocess.run(
        ["psql", PG_SERVER + "postgres", "-q", "-c", sql], check=True, capture_output=True
    )


# ------------------------------------------------------------------ inside the child


def _objects(generated, *, create: bool = True) -> dict:
    """The objects the permission matrix's URLs name, in the generated project."""
    from annotator.importing.files import Source, import_files
    from annotator.models import Chunk, Chunking, ImportJob, Project, Query
    from gold.models import GoldSet
    from judges.models import JudgeJob
    from judges.services import create_judge
    from metrics.models import Run
    from tests.document_files import write_pdf

    project = Project.objects.get(slug=generated.project_slug)
    owner = project.memberships.get(role="owner").user
    if create:
        folder = Path(os.environ["ASSAY_DATA_DIR"])
        pdf = write_pdf(folder / "manual.pdf", [["Page one of the manual."], ["Page two."]])
        import_files(project, [Source(pdf, "manual.pdf")])
        judge = create_judge(
            project,
            slug="j",
            name="J",
            base_url="http://127.0.0.1:1/v1",
            model="m",
            api_key_env="ASSAY_JUDGE_KEY_J",
            by_operator=True,
        )
        JudgeJob.objects.create(version=judge.current, scope="pool", budget=10)
        ImportJob.objects.create(
            project=project, kind="queries", filename="q.csv", created_by=owner
        )
    document = project.documents.get(doc_id="manual.pdf")
    query = Query.objects.filter(project=project).order_by("pk").first()
    chunking = Chunking.objects.filter(project=project).order_by("pk").first()
    judge = project.judges.get(slug="j")
    job = JudgeJob.objects.filter(version__judge=judge).first()
    job_import = ImportJob.objects.filter(project=project).first()
    from answers.models import Answer, AnswerRun
    from quality.dimensions import offer_source_quality

    # The quality estimate's partial is fetched with a judge and a dimension.
    dimension = offer_source_quality(project, unit="document")

    # An answer run with one answer (for the answers pages), made once in a kept project.
    answer_run, _new = AnswerRun.objects.get_or_create(
        project=project, name="bench-answers", defaults={"shape": "simple"}
    )
    answer = answer_run.answers.order_by("pk").first() or Answer.objects.create(
        run=answer_run, query=query, text="An answer."
    )
    return {
        # First: "answers:…" names pick the answer run before "run" is matched.
        "answers": answer_run.pk,
        "answer": answer.pk,
        "project": project,
        "owner": owner,
        "run": Run.objects.filter(project=project).order_by("pk").first().pk,
        "query": query.pk,
        "qid": query.qid,
        "document": document.pk,
        "page": 1,
        "chunking": chunking.pk,
        "chunk": Chunk.objects.filter(chunking=chunking).order_by("pk").first().pk,
        "gold": GoldSet.objects.filter(project=project).order_by("pk").first().pk,
        "import": None,
        "job_id": job_import.pk,
        "judge": judge.pk,
        "job": job.pk,
        "dimension": dimension.key,
    }


def _pages(objects: dict, generated) -> list[tuple[str, str]]:
    from django.urls import reverse

    from tests.test_project_views import PAGE_ROLES, project_urls

    slug = objects["project"].slug
    found = [("annotator:project_list", reverse("annotator:project_list"))]
    for name, url in project_urls(objects, slug=slug):
        allowed = PAGE_ROLES[name]
        if not allowed or "owner" not in allowed:
            continue
        if name == "annotator:import_status":
            url = reverse(name, args=[slug, objects["job_id"]])
        if name == "annotator:document_span_boxes":
            url += "?start=0&end=8"
        if name == "judges:quality_estimate":
            url += f"?judge={objects['judge']}&dimension={objects['dimension']}"
        found.append((name, url))
    search = reverse("annotator:label_query_search", args=[slug, objects["query"]])
    from urllib.parse import quote

    for kind, term in {**generated.english_terms, **generated.chinese_terms}.items():
        found.append((f"search: {kind}", f"{search}?q={quote(term)}"))
    return found


def _measure(client, url: str, repeats: int, clear, change=None) -> dict:
    """First request (caches emptied), ``repeats`` warm ones, and with ``change`` one more
    right after it changed a label ("changed": what a page costs while people label)."""
    clear()
    started = time.perf_counter()
    try:
        response = client.get(url)
    except Exception as error:  # a page that fails is reported, not fatal
        return {
            "status": f"{type(error).__name__}: {str(error)[:120]}",
            "first": 0,
            "p50": 0,
            "p95": 0,
            "n": 0,
        }
    first = (time.perf_counter() - started) * 1000
    status = response.status_code
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        status = status if status != 200 else response.status_code
    times.sort()
    measured = {
        "status": status,
        "first": first,
        "p50": statistics.median(times),
        "p95": times[round(0.95 * (len(times) - 1))],
        "n": repeats,
    }
    if change is not None:
        change()
        started = time.perf_counter()
        client.get(url)
        measured["changed"] = (time.perf_counter() - started) * 1000
    return measured


def _label_changer(project):
    """A function that changes one label of the project (its grade between 1 and 2,
    back and forth), as an annotator's save does."""
    from annotator.evidence import Evidence
    from annotator.labels import change_label
    from annotator.models import Judgment

    def change() -> None:
        label = Judgment.objects.filter(query__project=project).order_by("pk").first()
        change_label(
            query=label.query,
            annotator=label.annotator,
            evidence=Evidence.of_label(label),
            grade=1 if label.grade == 2 else 2,
        )

    return change


def _commands(objects: dict, folder: Path) -> dict[str, float]:
    """The common path of each management command, timed once."""
    from django.core.management import call_command

    project = objects["project"]
    slug = project.slug
    first_run = project.runs.order_by("pk").first()
    qids = list(project.queries.order_by("pk").values_list("qid", flat=True)[:50])
    doc_ids = list(project.documents.order_by("pk").values_list("doc_id", flat=True)[:20])
    (folder / "docs.jsonl").write_text(
        "".join(
            json.dumps({"doc_id": f"new-{i}", "title": f"new {i}", "text": "wing lift " * 50})
            + "\n"
            for i in range(200)
        )
    )
    (folder / "queries.csv").write_text(
        "qid,text\n" + "".join(f"new-q{i},how does the wing lift {i}\n" for i in range(100))
    )
    (folder / "labels.qrels").write_text(
        "".join(
            f"{q} 0 {d} {(i + j) % 4}\n" for i, q in enumerate(qids) for j, d in enumerate(doc_ids)
        )
    )
    (folder / "run.trec").write_text(
        "".join(f"{q} Q0 {d} {j + 1} {20 - j} cmd\n" for q in qids for j, d in enumerate(doc_ids))
    )
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    steps = [
        (
            "create_project",
            [
                "create_project",
                f"{slug}-new",
                "--name",
                "New",
                "--owner",
                objects["owner"].username,
            ],
        ),
        ("create_token", ["create_token", objects["owner"].username, "--name", "bench"]),
        ("import_documents", ["import_documents", slug, str(folder / "docs.jsonl")]),
        ("import_queries", ["import_queries", slug, str(folder / "queries.csv")]),
        (
            "import_labels",
            [
                "import_labels",
                slug,
                str(folder / "labels.qrels"),
                "--annotator",
                "assessors",
                "--level",
                "document",
            ],
        ),
        (
            "import_run",
            ["import_run", slug, str(folder / "run.trec"), "--name", "cmd-run", "--documents"],
        ),
        (
            "import_documents (new project)",
            ["import_documents", f"{slug}-new", str(folder / "docs.jsonl")],
        ),
        (
            "chunk_documents (new project)",
            ["chunk_documents", f"{slug}-new", "--size", "64", "--overlap", "8"],
        ),
        ("bm25_run (new project)", ["bm25_run", f"{slug}-new", "--documents"]),
        ("export_run", ["export_run", slug, str(first_run.pk)]),
        ("export_metrics", ["export_metrics", slug, "--output", str(folder / "m.csv")]),
        ("disagreements", ["disagreements", slug, "--level", "documents"]),
        ("freeze_gold", ["freeze_gold", slug, "--name", "cmd-gold"]),
        ("export_gold", ["export_gold", slug, "team", "-o", str(folder / "gold.jsonl")]),
        ("export_project", ["export_project", slug, "-o", str(folder / "backup.zip")]),
        (
            "import_project",
            ["import_project", str(folder / "backup.zip"), "--slug", f"{slug}-copy"],
        ),
    ]
    skipped = {n for n in os.environ.get("ASSAY_SCALE_SKIP_COMMANDS", "").split(",") if n}
    timings = {}
    for name, args in steps:
        if name in skipped:
            continue
        started = time.perf_counter()
        try:
            call_command(*args, **quiet)
            timings[name] = round((time.perf_counter() - started) * 1000)
        except Exception as error:
            timings[name] = f"failed: {type(error).__name__}: {str(error)[:200]}"
    return timings


def child(size: str, repeats: int, folder: str) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from bench.scale_project import Generated, generate
    from metrics.rankings import cache

    kept = Path(folder) / "generated.json"
    call_command("migrate", "--noinput", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)
    if kept.is_file():  # a kept folder (--data): measure its project again
        generated = Generated(**json.loads(kept.read_text()))
        generate_seconds = generated.seconds.get("total", 0)
        objects = _objects(generated, create=False)
    else:
        started = time.perf_counter()
        generated = generate(
            size, search_indexes=os.environ.get("ASSAY_SCALE_SEARCH_INDEXES") != "0"
        )
        generate_seconds = time.perf_counter() - started
        generated.seconds["total"] = round(generate_seconds, 1)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
        objects = _objects(generated)
        kept.write_text(json.dumps(generated.__dict__))
    client = Client()
    client.force_login(objects["owner"])
    pages = {}
    wanted = [p for p in os.environ.get("ASSAY_SCALE_PAGES", "").split(",") if p]
    change = None
    if os.environ.get("ASSAY_SCALE_AFTER_CHANGE") == "1":
        change = _label_changer(objects["project"])
    for name, url in _pages(objects, generated):
        if wanted and not any(w in name for w in wanted):
            continue
        if name.startswith("search:") and not generated.search_indexes:
            print(name, "not measured: generated without the search indexes", file=sys.stderr)
            continue
        pages[name] = _measure(client, url, repeats, cache.clear, change)
        print(name, json.dumps(pages[name]), file=sys.stderr, flush=True)
    commands = {}
    if os.environ.get("ASSAY_SCALE_COMMANDS", "1") == "1":
        commands = _commands(objects, Path(folder))
    print(
        json.dumps(
            {
                "size": size,
                "backend": connection.vendor,
                "counts": generated.counts,
                "generate_seconds": round(generate_seconds, 1),
                "generate_steps": generated.seconds,
                "pages": pages,
                "commands": commands,
            }
        )
    )


# ------------------------------------------------------------------ the parent


def run_one(
    size: str,
    backend: str,
    repeats: int,
    keep: bool,
    data: str | None,
    pages: str = "",
    commands: bool = True,
    skip_commands: str = "",
    after_change: bool = False,
    search_indexes: bool = True,
) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"assay-scale-{size}-") as scratch:
        folder = scratch
        if data:  # keep the generated project (SQLite file and PostgreSQL database)
            folder = str(Path(data) / f"{size}-{backend}")
            Path(folder).mkdir(parents=True, exist_ok=True)
            keep = True
        env = _env(folder, backend, size)
        env["ASSAY_SCALE_PAGES"] = pages
        env["ASSAY_SCALE_COMMANDS"] = "1" if commands else "0"
        env["ASSAY_SCALE_SKIP_COMMANDS"] = skip_commands
        env["ASSAY_SCALE_AFTER_CHANGE"] = "1" if after_change else "0"
        env["ASSAY_SCALE_SEARCH_INDEXES"] = "1" if search_indexes else "0"
        reuse = (Path(folder) / "generated.json").is_file()
        if backend == "postgres" and not reuse:
            _psql(f"DROP DATABASE IF EXISTS assay_scale_{size}")
            _psql(f"CREATE DATABASE assay_scale_{size}")
        try:
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "bench.bench_scale", "--child", size, str(repeats), folder],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"{size}/{backend} failed (exit {done.returncode})")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result["seconds"] = round(time.perf_counter() - started)
            return result
        finally:
            if backend == "postgres" and not keep:
                _psql(f"DROP DATABASE IF EXISTS assay_scale_{size}")


def exponent(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(time) against log(size)."""
    points = [(x, y) for x, y in points if x > 0 and y > 0]
    if len(points) < 2:
        return None
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def _kind(name: str) -> str:
    if name in EVALUATES:
        return "evaluates"
    if name in WHOLE_FILES:
        return "whole file"
    return "search" if name.startswith("search") else "bounded"


def _verdict(name: str, rows: list[dict], slope: float | None) -> str:
    kind = _kind(name)
    worst_p95 = max(r["p95"] for r in rows)
    worst_first = max(r["first"] for r in rows)
    misses = []
    if kind == "search" and worst_p95 > 100:
        misses.append("p95 > 100")
    elif kind != "whole file" and worst_p95 > 300:
        misses.append("p95 > 300")
    if kind == "evaluates" and worst_first > 1500:
        misses.append("first > 1.5 s")
    if kind in ("bounded", "search") and slope is not None and slope > 0.2:
        misses.append("exponent > 0.2")
    if any(r["status"] not in (200, 400) for r in rows):
        misses.append("status " + ",".join(str(r["status"]) for r in rows))
    return "; ".join(misses) or "ok"


def table(results: list[dict]) -> str:
    lines = []
    for backend in sorted({r["backend"] for r in results}):
        mine = sorted(
            (r for r in results if r["backend"] == backend), key=lambda r: r["counts"]["documents"]
        )
        sizes = [r["size"] for r in mine]
        lines.append(
            f"\n**{backend}** — "
            + "; ".join(
                f"{r['size']}: {r['counts']['documents']:,} documents, "
                f"{r['counts']['chunks']:,} chunks, {r['counts']['queries']:,} queries, "
                f"{r['counts']['runs']} runs, {r['counts']['labels']:,} labels "
                f"(generated in {r['generate_seconds']:.0f} s)"
                for r in mine
            )
            + "\n"
        )
        header = " | ".join(f"{s} p50 / p95 / first (ms)" for s in sizes)
        lines.append(f"| page | kind | {header} | exponent | verdict |")
        lines.append("|---|---|" + "---:|" * len(sizes) + "---:|---|")
        for name in mine[0]["pages"]:
            rows = [r["pages"][name] for r in mine if name in r["pages"]]
            slope = exponent([(r["counts"]["documents"], r["pages"][name]["p95"]) for r in mine])
            cells = " | ".join(f"{p['p50']:.0f} / {p['p95']:.0f} / {p['first']:.0f}" for p in rows)
            shown = "—" if slope is None else f"{slope:.2f}"
            lines.append(
                f"| {name} | {_kind(name)} | {cells} | {shown} | {_verdict(name, rows, slope)} |"
            )
        lines.append("")
        lines.append("| command | " + " | ".join(f"{s} (ms)" for s in sizes) + " | exponent |")
        lines.append("|---|" + "---:|" * len(sizes) + "---:|")
        for name in mine[0]["commands"]:
            values = [r["commands"].get(name) for r in mine]
            numbers = [
                (r["counts"]["documents"], v)
                for r, v in zip(mine, values, strict=True)
                if isinstance(v, (int, float))
            ]
            slope = exponent(numbers)
            cells = " | ".join(f"{v:,}" if isinstance(v, (int, float)) else str(v) for v in values)
            lines.append(f"| {name} | {cells} | {'—' if slope is None else f'{slope:.2f}'} |")
    return "\n".join(lines)


def changed_table(results: list[dict]) -> str:
    """Each page's request right after a label change (ms), per database and size."""
    lines = []
    for backend in sorted({r["backend"] for r in results}):
        rows = [r for r in results if r["backend"] == backend]
        sizes = [r["size"] for r in rows]
        lines += [
            f"\n{backend}: right after one label change (ms)\n",
            "| page | " + " | ".join(sizes) + " |",
            "|---|" + "---:|" * len(sizes),
        ]
        for name in rows[0]["pages"]:
            cells = [r["pages"].get(name, {}).get("changed") for r in rows]
            text = ["–" if c is None else f"{c:.0f}" for c in cells]
            lines.append(f"| {name} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def chart(results: list[dict], path: Path) -> None:
    """Warm p95 of every page against documents, log-log, one panel per database."""
    backends = sorted({r["backend"] for r in results})
    width, height, pad = 460, 340, 56
    svg = [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        f'width="{width * len(backends)}" height="{height}" '
        'font-family="sans-serif" font-size="11">'
    ]
    for panel, backend in enumerate(backends):
        mine = sorted(
            (r for r in results if r["backend"] == backend), key=lambda r: r["counts"]["documents"]
        )
        xs = [r["counts"]["documents"] for r in mine]
        ys = [p["p95"] for r in mine for p in r["pages"].values() if p["p95"] > 0]
        if not xs or not ys:
            continue
        x0, x1 = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
        y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(max(ys), 300)))
        left = panel * width

        def px(x, left=left, x0=x0, x1=x1):
            return left + pad + (math.log10(x) - x0) / (x1 - x0 or 1) * (width - 2 * pad)

        def py(y, y0=y0, y1=y1):
            return height - pad - (math.log10(y) - y0) / (y1 - y0 or 1) * (height - 2 * pad)

        svg.append(
            f'<text x="{left + pad}" y="18" font-weight="bold">{backend}: warm p95 per page</text>'
        )
        for decade in range(y0, y1 + 1):
            y = py(10**decade)
            svg.append(
                f'<line x1="{left + pad}" x2="{left + width - pad}" y1="{y:.1f}" '
                f'y2="{y:.1f}" stroke="#ddd"/>'
            )
            svg.append(f'<text x="{left + 4}" y="{y + 4:.1f}">{10**decade:g} ms</text>')
        limit = py(300)
        svg.append(
            f'<line x1="{left + pad}" x2="{left + width - pad}" y1="{limit:.1f}" '
            f'y2="{limit:.1f}" stroke="#c00" stroke-dasharray="4 3"/>'
        )
        svg.append(
            f'<text x="{left + width - pad - 40}" y="{limit - 4:.1f}" fill="#c00">300 ms</text>'
        )
        for x in xs:
            svg.append(f'<text x="{px(x) - 18:.1f}" y="{height - pad + 16}">{x:,}</text>')
        svg.append(f'<text x="{left + width / 2 - 30}" y="{height - 12}">documents</text>')
        for name in mine[0]["pages"]:
            points = [
                (r["counts"]["documents"], r["pages"][name]["p95"])
                for r in mine
                if name in r["pages"]
            ]
            colour = {"evaluates": "#1f77b4", "whole file": "#999", "search": "#2ca02c"}.get(
                _kind(name), "#ff7f0e"
            )
            path_d = " ".join(
                f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(max(y, 10**y0)):.1f}"
                for i, (x, y) in enumerate(points)
            )
            svg.append(
                f'<path d="{path_d}" fill="none" stroke="{colour}" stroke-width="1.2" '
                f'opacity="0.8"><title>{name}</title></path>'
            )
            for x, y in points:  # one size alone is a point, not a line
                svg.append(
                    f'<circle cx="{px(x):.1f}" cy="{py(max(y, 10**y0)):.1f}" r="2.5" '
                    f'fill="{colour}" opacity="0.8"><title>{name}: {y:.0f} ms</title></circle>'
                )
        for i, (label, colour) in enumerate(
            [
                ("bounded pages", "#ff7f0e"),
                ("pages evaluating runs", "#1f77b4"),
                ("search", "#2ca02c"),
                ("whole-table files", "#999"),
            ]
        ):
            svg.append(
                f'<rect x="{left + pad + 4}" y="{30 + i * 14}" width="10" height="3" '
                f'fill="{colour}"/>'
            )
            svg.append(f'<text x="{left + pad + 18}" y="{34 + i * 14}">{label}</text>')
    svg.append("</svg>")
    path.write_text("\n".join(svg) + "\n")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), argv[3])
        return
    parser = argparse.ArgumentParser(prog="python -m bench scale")
    parser.add_argument("--sizes", default=",".join(DEFAULT_SIZES))
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL databases")
    parser.add_argument(
        "--data", help="keep each generated project in this folder and measure it again next time"
    )
    parser.add_argument(
        "--pages",
        default="",
        help="measure only the pages whose names contain one of these comma-separated parts",
    )
    parser.add_argument(
        "--no-commands",
        dest="commands",
        action="store_false",
        help="measure the pages only (the commands add to the kept project)",
    )
    parser.add_argument(
        "--skip-commands",
        default="",
        help="comma-separated names of commands not to time (export_project,import_project: "
        "a whole-project backup and restore take an hour or more at large)",
    )
    parser.add_argument(
        "--after-change",
        action="store_true",
        help="also time each page once right after a label change (what it costs while "
        "people label; the change is a grade moved between 1 and 2 on one label)",
    )
    parser.add_argument(
        "--no-search-indexes",
        dest="search_indexes",
        action="store_false",
        help="generate without the search tables' GIN indexes (one to two hours at large on "
        "two cores); the search pages are then not measured on that project",
    )
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--chart", default=str(ROOT / "docs" / "scale.svg"))
    options = parser.parse_args(argv)
    results = []
    for size in options.sizes.split(","):
        for backend in options.backends.split(","):
            if size == "large" and backend == "sqlite":
                continue  # large runs on PostgreSQL only
            print(f"… {size} on {backend}", file=sys.stderr, flush=True)
            result = run_one(
                size,
                backend,
                options.repeats,
                options.keep,
                options.data,
                options.pages,
                options.commands,
                options.skip_commands,
                options.after_change,
                options.search_indexes,
            )
            print(f"  done in {result['seconds']} s", file=sys.stderr, flush=True)
            results.append(result)
            if options.json:
                Path(options.json).write_text(json.dumps(results, indent=1))
    print(table(results))
    if options.after_change:
        print(changed_table(results))
    chart(results, Path(options.chart))
    print(f"\nchart: {options.chart}")


if __name__ == "__main__":
    main()
