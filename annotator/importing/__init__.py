"""One import path for the management commands and the web upload page.

``run_import(kind, project, path, ...)`` checks the file (size, encoding, format), reads it
as numbered rows and hands them to the importer of that kind; everything is written in
one transaction or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..models import Project
from .errors import ImportFailed, LineErrors
from .importers import (
    ImportResult,
    import_chunks,
    import_documents,
    import_labels,
    import_queries,
    locate,
)
from .readers import RowSource, check_file, detect_format, read_rows

KINDS = ("documents", "chunks", "queries", "labels")
KIND_FORMATS = {
    "documents": ("jsonl", "csv", "xlsx"),
    "chunks": ("jsonl", "csv", "xlsx"),
    "queries": ("jsonl", "csv", "xlsx"),
    "labels": ("qrels", "jsonl", "csv", "xlsx"),
}
PROGRESS_EVERY = 500

__all__ = [
    "KINDS",
    "ImportFailed",
    "ImportResult",
    "LineErrors",
    "import_chunks",
    "import_documents",
    "import_labels",
    "import_queries",
    "locate",
    "read_rows",
    "run_import",
]


def run_import(
    kind: str,
    project: Project,
    path: str | Path,
    *,
    format: str | None = None,
    options: dict | None = None,
    progress: Callable[[float], None] | None = None,
    changed_by=None,
) -> ImportResult:
    """Import one file of ``kind``; raise ``ImportFailed`` (nothing written) on any problem.

    ``options``: chunks need ``chunking`` (and may give ``parameters``); labels need
    ``annotator`` and ``level`` (and ``chunking`` at chunk level). ``progress`` is called
    with the share of the file read so far.
    """
    if kind not in KINDS:
        raise ImportFailed([f"unknown import kind {kind!r}; use one of {', '.join(KINDS)}"])
    path = Path(path)
    options = options or {}
    fmt = detect_format(path, format, default="qrels" if kind == "labels" else "jsonl")
    if fmt not in KIND_FORMATS[kind]:
        raise ImportFailed(
            [f"{kind} cannot be read from {fmt}; use {', '.join(KIND_FORMATS[kind])}"]
        )
    check_file(path)
    source = RowSource(path, fmt)
    tick = None
    if progress is not None:
        count = 0

        def tick() -> None:
            nonlocal count
            count += 1
            if count % PROGRESS_EVERY == 0:
                progress(source.fraction())

    if kind == "documents":
        result = import_documents(project, source, tick=tick)
    elif kind == "queries":
        result = import_queries(project, source, tick=tick)
    elif kind == "chunks":
        result = import_chunks(
            project,
            source,
            chunking=options.get("chunking", ""),
            parameters=options.get("parameters"),
            tick=tick,
        )
    else:
        result = import_labels(
            project,
            source,
            annotator=options.get("annotator", ""),
            level=options.get("level", "document"),
            chunking=options.get("chunking"),
            changed_by=changed_by,
            tick=tick,
        )
    if progress is not None:
        progress(1.0)
    return result
