"""Importing retrieval runs (TREC, JSONL, CSV, XLSX): every line checked, all or nothing.

A regular TREC file takes the columnar reader (``formats.columnar``, polars, a block at
a time: a 10,000,000-line run in well under 1 GB), its ids matched to the project's by a
hash join; any other file, or one that repeats a result, takes ``formats.read_run``,
which names every bad line, its ids matched once per distinct id. Both paths then make
the same checks. Unknown query or item ids are errors by default; with ``keep_known``
those lines are left out and counted on the run, so the dashboard can say how much was
dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from annotator.extensions import ImportKind, ImportResult
from annotator.importing.common import named_rows
from annotator.models import Chunk, Chunking, Project
from formats import MAX_REPORTED, FileRejected, LineErrors
from formats.arrays import RUN_FORMATS
from formats.errors import TEXT, Problem, define, gettext_noop

from .models import Run, RunLevel
from .run_rows import RunRows, read_rows
from .tasks import index_after_import

FORMATS = RUN_FORMATS

RUN_EXISTS = define(
    "run.exists", gettext_noop("a run named %(name)s already exists in this project")
)
UNKNOWN_QUERY_ID = define("run.unknown_query_id", gettext_noop("unknown query id %(id)s"))
UNKNOWN_ID = define("run.unknown_id", gettext_noop("unknown id %(id)s"))
NOTHING_KNOWN = define(
    "run.nothing_known", gettext_noop("no line names a known query and a known id")
)
WRONG_CHUNKING = define(
    "run.wrong_chunking",
    gettext_noop(
        "only %(known)s of the file's %(n)s distinct ids are in %(where)s, but %(share)s are "
        "in %(other)s: upload it against %(other)s (%(option)s); nothing imported"
    ),
)
IN_CHUNKING = define("run.in_chunking", gettext_noop("chunking %(name)s"))
IN_DOCUMENTS = define("run.in_documents", gettext_noop("the project's documents"))
NO_CHUNKING = define("run.no_chunking", gettext_noop("no chunking named %(name)s"))
DROPPED = define(
    "run.dropped",
    gettext_noop("%(n)s line dropped (unknown query or item ids)"),
    plural=gettext_noop("%(n)s lines dropped (unknown query or item ids)"),
)


def import_run(
    project: Project,
    path: str | Path,
    *,
    name: str,
    chunking: Chunking | None = None,
    parameters: dict | None = None,
    format: str | None = None,
    keep_known: bool = False,
    replace: bool = False,
    created_by=None,
    progress: Callable[[float], None] | None = None,
    source_name: str | None = None,
) -> Run:
    """Read, validate and store a run in one transaction; raise ``FileRejected`` on any
    error. ``progress`` is called with the share of the file read so far."""
    path = Path(path)
    if not replace and Run.objects.filter(project=project, name=name).exists():
        raise FileRejected([RUN_EXISTS(name=repr(name))])
    errors = LineErrors()
    query_ids = dict(project.queries.values_list("qid", "pk"))
    if chunking is not None:
        items, column = Chunk.objects.filter(chunking=chunking), "chunk_id"
    else:
        items, column = project.documents.all(), "doc_id"

    def item_ids(named: set[str] | None) -> dict[str, int]:
        # A short run names a few of a million ids: those are read by key.
        return dict(named_rows(items, column, named, column, "pk"))

    rows = read_rows(
        path,
        format,
        errors,
        query_ids,
        item_ids,
        max_bytes=settings.ASSAY_MAX_UPLOAD_BYTES,
        progress=progress,
    )
    hint = _wrong_chunking(project, chunking, rows)
    if hint:
        raise FileRejected([hint])
    unknown_query = rows.query < 0
    unknown_item = (rows.item < 0) & ~unknown_query
    if not keep_known:
        _report(errors, rows, unknown_query, rows.query_ids, UNKNOWN_QUERY_ID)
        _report(errors, rows, unknown_item, rows.item_ids, UNKNOWN_ID)
    known = ~(unknown_query | unknown_item)
    if not errors and rows.size and not known.any():
        errors.add(0, NOTHING_KNOWN())
    errors.raise_if_any()
    dropped = int(np.count_nonzero(~known))
    run = Run(
        project=project,
        name=name,
        chunking=chunking,
        parameters=parameters or {},
        level=RunLevel.CHUNK if chunking is not None else RunLevel.DOCUMENT,
        source=source_name or path.name,
        created_by=created_by,
        n_dropped=dropped,
        dropped_summary={
            "unknown_queries": _summary(np.flatnonzero(unknown_query), rows.query_ids),
            "unknown_items": _summary(np.flatnonzero(unknown_item), rows.item_ids),
        }
        if dropped
        else {},
    )
    query, item, score = rows.query, rows.item, rows.score
    del rows  # the ids are no longer needed: free them before storing
    if dropped:
        query, item, score = query[known], item[known], score[known]
    # Sorted and compressed before the transaction: SQLite's writer lock (taken at BEGIN,
    # IMMEDIATE) is then held for the insert alone, not for seconds of CPU, and people's
    # label saves do not wait behind a large import.
    run.set_results(query, item, score)
    del query, item, score
    with transaction.atomic():
        if replace:
            Run.objects.filter(project=project, name=name).delete()
        run.save()
        index_after_import(run)
    return run


# An upload whose ids are mostly unknown to its chunking (below this share known) while
# another chunking (or the documents) knows nearly all of them (at least this share) is
# refused with a hint: it was almost certainly uploaded against the wrong chunking.
WRONG_BELOW = 0.9
OTHER_AT_LEAST = 0.99


def _wrong_chunking(project: Project, chunking: Chunking | None, rows: RunRows) -> Problem | None:
    """The refusal message when the file's ids belong to another chunking, else None."""
    if not (rows.item < 0).any():
        return None
    names, known = rows.distinct_items()
    if known >= WRONG_BELOW:
        return None
    candidates = [
        (other.name, other.chunks.all(), "chunk_id")
        for other in project.chunkings.exclude(pk=chunking.pk if chunking else None)
    ]
    if chunking is not None:
        candidates.append(("documents", project.documents.all(), "doc_id"))
    for name, items, column in candidates:
        share = _known_share(names, items, column)
        if share >= OTHER_AT_LEAST:
            where = IN_CHUNKING(name=repr(chunking.name)) if chunking else IN_DOCUMENTS()
            option = "--documents" if name == "documents" else f"--chunking {name}"
            return WRONG_CHUNKING(
                known=f"{known:.0%}",
                n=len(names),
                where=where,
                share=f"{share:.0%}",
                other=repr(name),
                option=option,
            )
    return None


def _known_share(names: set[str], items, column: str) -> float:
    """The share of ``names`` that ``items`` (rows with ids in ``column``) hold."""
    known = sum(1 for (name,) in named_rows(items, column, names, column) if name in names)
    return known / len(names)


def _report(errors: LineErrors, rows: RunRows, unknown, names, kind) -> None:
    """One ``line N: unknown … 'id'`` per unknown row; only the reported ones are named."""
    where = np.flatnonzero(unknown)
    shown = names(where[:MAX_REPORTED])
    errors.add_each(rows.lines(where), lambda i: kind(id=repr(shown[i])))


def _summary(where: np.ndarray, names) -> dict:
    """The dropped rows ``where``: how many, how many distinct ids, the first 20."""
    distinct = names(where, distinct=True)
    return {"results": int(where.size), "ids": len(distinct), "examples": distinct[:20]}


def _load(project, path, *, fmt, options, progress, changed_by, source_name) -> ImportResult:
    """The import page's "run" kind (registered by ``MetricsConfig.ready``)."""
    chunking = None
    if options.get("chunking"):
        chunking = Chunking.objects.filter(project=project, name=options["chunking"]).first()
        if chunking is None:
            raise FileRejected([NO_CHUNKING(name=repr(options["chunking"]))])
    run = import_run(
        project,
        path,
        name=options["name"],
        chunking=chunking,
        parameters=options.get("parameters") or {},
        format=fmt,
        keep_known=bool(options.get("keep_known")),
        replace=bool(options.get("replace")),
        created_by=changed_by,
        progress=progress,
        source_name=source_name,
    )
    if options.get("tags") or options.get("series"):  # an API upload handed to the worker
        run.tags, run.series = options.get("tags") or [], options.get("series") or ""
        Run.objects.filter(pk=run.pk).update(tags=run.tags, series=run.series)
    notes = (TEXT(text=run.name),) + ((DROPPED(n=run.n_dropped),) if run.n_dropped else ())
    return ImportResult("run", run.n_results, notes=notes)


RUN_KIND = ImportKind(
    "run",
    _("Retrieval run"),
    FORMATS,
    _load,
    help=_(
        "TREC run (`qid Q0 id rank score tag`; gzip too), TSV (`qid docid score`), JSONL "
        "(`qid`, `retrieved`, `scores`), BEIR-style JSON (`{qid: {id: score}}`) or "
        "CSV/XLSX columns `qid`, `docid|chunk_id`, `score|rank`. Chunk runs name their "
        "chunking."
    ),
    example="assay/examples/run.trec",
)
