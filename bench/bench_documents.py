"""Document-file import benchmark: one 500-page PDF, 1,000 small PDFs, page images, 500
mixed files (PDF, DOCX, HTML, Markdown) imported and then imported again unchanged, and
the HTML reader on the HTML documentation found on this machine.

    .venv/bin/python -m bench documents
    BENCH_DOCUMENTS_CASES=mixed,html BENCH_DOCUMENTS_MIXED=100 .venv/bin/python -m bench documents

The PDFs are written by the demo's PDF writer (``demo/pdfgen.py``: Courier text pages of
about 2,300 characters each). Each case runs in its own process, with production settings
(DEBUG off) on a temporary SQLite data directory: the whole ``import_files`` (extraction,
checksum, the originals copied into the data directory, documents written) is timed, and
the process's peak resident memory is read from ``getrusage`` before and after, so the
import's own cost is the difference. Text extraction only: page images are rendered on
demand, so the last case times the first render of a page (PDFium at 900 px wide, PNG
written to the cache) and the cached one (the file found in the cache).
"""

from __future__ import annotations

import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIG_PAGES = 500
SMALL_FILES = 1000
RENDERS = 5
WORDS = (
    "pump valve seal shaft casing impeller pressure flow bearing gasket motor drain "
    "inspect replace tighten clean record hours weekly monthly safety gloves manual the "
    "of and to in a is must be every before after when if check oil"
).split()


def _paragraphs(rng: random.Random, n: int) -> list[tuple[str, bool]]:
    blocks = []
    for i in range(n):
        if i % 6 == 0:
            blocks.append((f"Section {i // 6 + 1}", True))
        words = [rng.choice(WORDS) for _ in range(rng.randint(40, 90))]
        blocks.append((" ".join(words).capitalize() + ".", False))
    return blocks


def _write(folder: Path) -> tuple[Path, list[Path]]:
    from demo.pdfgen import layout, write_pdf

    rng = random.Random(17)
    pages = []
    while len(pages) < BIG_PAGES:
        pages += layout(_paragraphs(rng, 400))
    big = write_pdf(folder / "big.pdf", pages[:BIG_PAGES], title="A 500-page manual")
    small_dir = folder / "small"
    small_dir.mkdir()
    smalls = [
        write_pdf(
            small_dir / f"note-{i:04d}.pdf",
            layout(_paragraphs(rng, rng.randint(2, 10))),
            title=f"Note {i}",
        )
        for i in range(SMALL_FILES)
    ]
    return big, smalls


def _setup(data_dir: str) -> None:
    os.environ.update(
        ASSAY_DATA_DIR=data_dir,
        ASSAY_DEBUG="0",
        SECRET_KEY="bench-only-key-" + "x" * 40,
        ASSAY_SSL_REDIRECT="0",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


MIXED = int(os.environ.get("BENCH_DOCUMENTS_MIXED", "500"))
CASES = os.environ.get("BENCH_DOCUMENTS_CASES", "big,small,render,mixed,html").split(",")
HTML_PAGES = "/usr/share/doc"


def _write_mixed(folder: Path, count: int) -> list[Path]:
    """``count`` files, a quarter each PDF, DOCX, HTML and Markdown, of a few paragraphs."""
    import docx

    from demo.pdfgen import layout, write_pdf

    rng = random.Random(29)
    folder.mkdir()
    paths = []
    for i in range(count):
        blocks = _paragraphs(rng, rng.randint(3, 12))
        kind = ("pdf", "docx", "html", "md")[i % 4]
        path = folder / f"doc-{i:04d}.{kind}"
        if kind == "pdf":
            write_pdf(path, layout(blocks), title=f"Doc {i}")
        elif kind == "docx":
            document = docx.Document()
            for text, heading in blocks:
                document.add_heading(text, 1) if heading else document.add_paragraph(text)
            document.save(str(path))
        elif kind == "html":
            body = "".join(f"<h2>{t}</h2>" if h else f"<p>{t}</p>" for t, h in blocks)
            path.write_text(
                f"<!DOCTYPE html><html><head><title>Doc {i}</title></head><body>"
                f"<nav><a href='/'>Home</a></nav><main>{body}</main><footer>Footer</footer>"
                "</body></html>"
            )
        else:
            path.write_text("\n\n".join(f"## {t}" if h else t for t, h in blocks) + "\n")
        paths.append(path)
    return paths


def _previous_html_text(markup: str) -> str:
    """The HTML reader before main content (kept here to compare): the body's text with
    block elements on their own lines, scripts and styles dropped."""
    import re

    from selectolax.lexbor import LexborHTMLParser

    blocks = (
        "address,article,aside,blockquote,br,dd,div,dl,dt,fieldset,figcaption,figure,footer,"
        "form,h1,h2,h3,h4,h5,h6,header,hr,li,main,nav,ol,p,pre,section,table,tr,ul"
    )
    body = LexborHTMLParser(markup).body
    if body is None:
        return ""
    for tag in ["script", "style", "noscript", "template", "svg", "iframe", "object", "head"]:
        for node in body.css(tag):
            node.decompose()
    for node in body.css(blocks):
        node.insert_before("\ue000")
        node.insert_after("\ue000")
    for node in body.css("td,th"):
        node.insert_before("\ue001")
    parts = body.text(separator="").split("\ue000")
    lines = [" ".join(b.split()).replace("\ue001", "\t").strip("\t ") for b in parts]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def html_case() -> dict:
    """The HTML pages of this machine's documentation read three ways, timed."""
    sys.path.insert(0, str(ROOT))
    from formats.documents.html import html_text

    pages = sorted(p for p in Path(HTML_PAGES).rglob("*.html") if p.is_file())
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in pages]
    out = {"pages": len(pages), "megabytes": sum(len(t) for t in texts) / 1024**2}
    for name, read in (
        ("previous", _previous_html_text),
        ("main", lambda t: html_text(t)[0]),
        ("whole", lambda t: html_text(t, whole_page=True)[0]),
    ):
        started = time.perf_counter()
        chars = sum(len(read(t)) for t in texts)
        out[name] = {"seconds": time.perf_counter() - started, "characters": chars}
    return out


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(case: str, folder: str) -> dict:
    """One case in this process: import the files, or render a page."""
    _setup(str(Path(folder) / f"data-{case}"))
    from annotator.importing.files import Source, import_files
    from annotator.models import Project

    project = Project.objects.create(slug=case, name=case)
    root = Path(folder)
    if case == "mixed":
        paths = sorted((root / "mixed").iterdir())
    elif case == "small":
        paths = sorted((root / "small").glob("*.pdf"))
    else:
        paths = [root / "big.pdf"]
    sources = [Source(path, path.name) for path in paths]
    before = _peak_mib()
    started = time.perf_counter()
    result = import_files(project, sources)
    seconds = time.perf_counter() - started
    after = _peak_mib()
    if case == "mixed":
        started = time.perf_counter()
        again = import_files(project, sources)
        unchanged_seconds = time.perf_counter() - started
        assert again.created == 0 and f"{len(paths)} unchanged" in again.detail
    documents = project.documents.all()
    out = {
        "case": case,
        "files": len(sources),
        "documents": result.created,
        "pages": sum(len(d.page_starts) for d in documents),
        "characters": sum(len(d.text) for d in documents),
        "megabytes": sum(p.stat().st_size for p in paths) / 1024**2,
        "seconds": seconds,
        "peak_before_mib": before,
        "peak_after_mib": after,
    }
    if case == "mixed":
        out["unchanged_seconds"] = unchanged_seconds
    if case == "render":
        from annotator import file_store
        from annotator.originals import page_image

        document = documents.get()
        first, cached = [], []
        for number in range(1, RENDERS + 1):
            page = number * BIG_PAGES // (RENDERS + 1)
            started = time.perf_counter()
            path = page_image(document, page)
            first.append(time.perf_counter() - started)
            started = time.perf_counter()
            again = page_image(document, page)
            png = file_store.read_bytes(again)
            cached.append(time.perf_counter() - started)
            assert again == path
        out.update(
            first_ms=[1000 * s for s in first],
            cached_ms=[1000 * s for s in cached],
            png_kib=len(png) / 1024,
        )
    return out


def _run(case: str, folder: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_documents", "--child", case, folder],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"the {case} case failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    sys.path.insert(0, str(ROOT))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="assay-bench-docs-") as folder:
        started = time.perf_counter()
        if {"big", "small", "render"} & set(CASES):
            _big, smalls = _write(Path(folder))
            print(
                f"wrote 1 × {BIG_PAGES} pages and {len(smalls)} small PDFs in "
                f"{time.perf_counter() - started:.1f} s"
            )
        if "mixed" in CASES:
            _write_mixed(Path(folder) / "mixed", MIXED)
        results = {c: _run(c, folder) for c in ("big", "small", "render", "mixed") if c in CASES}
    if "mixed" in results:
        r = results["mixed"]
        print()
        print(
            "| Import of mixed files (PDF, DOCX, HTML, Markdown) | files | characters | MB "
            "| first import (s) | unchanged again (s) | peak RSS (MiB) |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        print(
            f"| {r['files']:,} files, a quarter of each kind | {r['files']:,} | "
            f"{r['characters']:,} | {r['megabytes']:.1f} | {r['seconds']:.2f} | "
            f"{r['unchanged_seconds']:.3f} | {r['peak_after_mib']:.0f} |"
        )
    if "html" in CASES and Path(HTML_PAGES).is_dir():
        h = html_case()
        print()
        print(
            f"| HTML reader on {h['pages']} pages of {HTML_PAGES} ({h['megabytes']:.1f} MB) "
            "| time (s) | characters kept |"
        )
        print("|---|---:|---:|")
        for key, label in (
            ("previous", "previous reader (the body's text)"),
            ("main", "main content (default)"),
            ("whole", "whole page (`--html-whole-page`)"),
        ):
            print(f"| {label} | {h[key]['seconds']:.2f} | {h[key]['characters']:,} |")
    if not {"big", "small", "render"} <= set(results):
        return
    print()
    print(
        "| Import | files | pages | characters | MB | time (s) | peak RSS (MiB) "
        "| of which the import |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    labels = {"big": f"one {BIG_PAGES}-page PDF", "small": f"{SMALL_FILES:,} small PDFs"}
    for case in ("big", "small"):
        r = results[case]
        print(
            f"| {labels[case]} | {r['files']:,} | {r['pages']:,} | {r['characters']:,} | "
            f"{r['megabytes']:.1f} | {r['seconds']:.2f} | {r['peak_after_mib']:.0f} | "
            f"{r['peak_after_mib'] - r['peak_before_mib']:.0f} |"
        )
    r = results["render"]
    print()
    print(f"| Page image (900 px, of the {BIG_PAGES}-page PDF) | median (ms) | max (ms) | n |")
    print("|---|---:|---:|---:|")
    for key, label in (
        ("first_ms", "first render (PDFium + PNG + cache write)"),
        ("cached_ms", "cached (found and read)"),
    ):
        values = r[key]
        print(f"| {label} | {statistics.median(values):.1f} | {max(values):.1f} | {len(values)} |")
    print(f"\nPNG size: {r['png_kib']:.0f} KiB per page")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], sys.argv[3])))
    else:
        main()
