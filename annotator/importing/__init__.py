"""One import path for the management commands and the web upload page.

``run_import(kind, project, path, ...)`` checks the file (size, encoding, format), reads it
as numbered rows (``formats``) and hands them to the importer of that kind; everything is
written in one transaction or not at all. Apps that sit above annotator add kinds of their
own at start-up with ``register_kind`` (metrics adds "run"), so annotator never imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from formats import FileRejected, RowSource, check_file, detect_format
from formats.documents.extract import ReadOptions
from formats.errors import define, gettext_noop

from ..models import Project
from .common import ImportResult
from .corpus import import_chunks, import_documents, import_queries, locate
from .files import import_files
from .judgments import import_labels
from .uploads import uploaded_sources

PROGRESS_EVERY = 500
UNKNOWN_KIND = define(
    "import.unknown_kind", gettext_noop("unknown import kind %(kind)s; use one of %(kinds)s")
)
WRONG_FORMAT = define(
    "import.wrong_format", gettext_noop("%(kind)s cannot be read from %(format)s; use %(formats)s")
)
Progress = Callable[[float], None] | None

__all__ = [
    "ImportKind",
    "ImportResult",
    "import_chunks",
    "import_documents",
    "import_labels",
    "import_queries",
    "kinds",
    "locate",
    "register_kind",
    "run_import",
]


@dataclass(frozen=True)
class ImportKind:
    """A kind of file the import page and commands take.

    ``load(project, path, fmt=, options=, progress=, changed_by=, source_name=)`` imports
    one file of a format in ``formats`` (the first is the default) and returns an
    ``ImportResult``; ``source_name`` is the name the file was uploaded under."""

    name: str
    label: str | Promise
    formats: tuple[str, ...]
    load: Callable[..., ImportResult]
    # Kinds that tell file types apart themselves (document files) skip ``detect_format``.
    own_types: bool = False
    # What the import page says next to the kind: the format in a sentence, and a small
    # example file (a path under static/) to download.
    help: str | Promise = ""
    example: str = ""
    # Options of the import page a kind registered by another app takes, by the form's
    # field names ("run_name", "parameters", "chunking"): named like a run.
    takes: tuple[str, ...] = ()


_KINDS: dict[str, ImportKind] = {}


def register_kind(kind: ImportKind) -> None:
    """Make a kind available to ``run_import`` (called from an AppConfig's ``ready``)."""
    _KINDS[kind.name] = kind


def kinds() -> list[ImportKind]:
    """Every kind, annotator's own first, in the order they were registered."""
    return list(_KINDS.values())


def run_import(
    kind: str,
    project: Project,
    path: str | Path,
    *,
    format: str | None = None,
    options: dict | None = None,
    progress: Progress = None,
    changed_by=None,
    source_name: str | None = None,
) -> ImportResult:
    """Import one file of ``kind``; raise ``FileRejected`` (nothing written) on any problem.

    ``options``: chunks need ``chunking`` (and may give ``parameters``); labels need
    ``annotator`` and ``level`` (and ``chunking`` at chunk level); other kinds say what
    they need. ``progress`` is called with the share of the file read so far.
    """
    spec = _KINDS.get(kind)
    if spec is None:
        raise FileRejected([UNKNOWN_KIND(kind=repr(kind), kinds=", ".join(_KINDS))])
    path = Path(path)
    fmt = (
        spec.formats[0]
        if spec.own_types
        else detect_format(path, format, default=spec.formats[0], allowed=spec.formats)
    )
    if fmt not in spec.formats:
        raise FileRejected([WRONG_FORMAT(kind=kind, format=fmt, formats=", ".join(spec.formats))])
    result = spec.load(
        project,
        path,
        fmt=fmt,
        options=options or {},
        progress=progress,
        changed_by=changed_by,
        source_name=source_name or path.name,
    )
    if progress is not None:
        progress(1.0)
    return result


def _rows(path: Path, fmt: str, progress: Progress) -> tuple[RowSource, Callable | None]:
    """The file's rows, checked first, and a tick that reports progress now and then."""
    check_file(path, settings.ASSAY_MAX_UPLOAD_BYTES)
    source = RowSource(
        path,
        fmt,
        max_chars=settings.ASSAY_MAX_DOCUMENT_CHARS,
        max_bytes=settings.ASSAY_MAX_UPLOAD_BYTES,
    )
    if progress is None:
        return source, None
    count = 0

    def tick() -> None:
        nonlocal count
        count += 1
        if count % PROGRESS_EVERY == 0:
            progress(source.fraction())

    return source, tick


def _documents(project, path, *, fmt, options, progress, **_) -> ImportResult:
    source, tick = _rows(path, fmt, progress)
    return import_documents(project, source, tick=tick)


def _queries(project, path, *, fmt, options, progress, **_) -> ImportResult:
    source, tick = _rows(path, fmt, progress)
    return import_queries(project, source, tick=tick)


def _chunks(project, path, *, fmt, options, progress, **_) -> ImportResult:
    source, tick = _rows(path, fmt, progress)
    return import_chunks(
        project,
        source,
        chunking=options.get("chunking", ""),
        parameters=options.get("parameters"),
        tick=tick,
    )


def _labels(project, path, *, fmt, options, progress, changed_by, **_) -> ImportResult:
    source, tick = _rows(path, fmt, progress)
    return import_labels(
        project,
        source,
        annotator=options.get("annotator", ""),
        level=options.get("level", "document"),
        chunking=options.get("chunking"),
        changed_by=changed_by,
        tick=tick,
    )


def _files(project, path, *, options, progress, source_name, **_) -> ImportResult:
    return import_files(
        project,
        uploaded_sources(path, source_name),
        replace=bool(options.get("replace")),
        skip_bad=bool(options.get("skip_bad")),
        options=ReadOptions(
            html_whole_page=bool(options.get("html_whole_page")),
            docx_headers=bool(options.get("docx_headers")),
        ),
        progress=progress,
        file_progress=getattr(progress, "file", None),
    )


TABLES = ("jsonl", "csv", "xlsx")
EXAMPLES = "assay/examples/"
for _kind in (
    ImportKind(
        "documents",
        _("Documents"),
        TABLES,
        _documents,
        help=_(
            "JSONL, CSV or XLSX, one document a line: `doc_id`, `title`, and `text` (or "
            "`pages`, a list of page texts); any other field becomes metadata."
        ),
        example=EXAMPLES + "documents.jsonl",
    ),
    ImportKind(
        "chunks",
        _("Chunks (a chunking)"),
        TABLES,
        _chunks,
        help=_(
            "JSONL, CSV or XLSX: `chunk_id`, `doc_id` and either `start` and `end` (character "
            "offsets, the end excluded) or the chunk's `text`, which is found in the document."
        ),
        example=EXAMPLES + "chunks.csv",
    ),
    ImportKind(
        "queries",
        _("Queries"),
        TABLES,
        _queries,
        help=_(
            "JSONL, CSV or XLSX: `qid`, `text`, optional `reference_answer` and `tags`; any "
            "other field becomes metadata."
        ),
        example=EXAMPLES + "queries.jsonl",
    ),
    ImportKind(
        "labels",
        _("Existing labels (qrels / gold JSONL)"),
        ("qrels", "tsv", "json", *TABLES),
        _labels,
        help=_(
            "Chunks and documents: TREC qrels (`qid 0 id grade`), BEIR qrels TSV "
            "(`query-id corpus-id score`), gold JSONL (`qid`, `gold_evidence`, `rel_map`) "
            "or rows `qid, docid|chunk_id, grade`. Passages: rows "
            "`qid, doc_id, start, end, grade`. Pages: rows `qid, doc_id, page, grade`. "
            "Grades 0–3."
        ),
        example=EXAMPLES + "labels.qrels",
    ),
    ImportKind(
        "files",
        _("Document files (PDF, Word, HTML, Markdown, text, or a .zip of them)"),
        ("files",),
        _files,
        own_types=True,
        help=_(
            "PDF (with a text layer), Word .docx, HTML, Markdown, plain text, or a .zip of "
            "them; each file becomes one document named by its file name."
        ),
        example=EXAMPLES + "manual.md",
    ),
):
    register_kind(_kind)

# The BEIR folder import sits on the kinds above; imported here so that its problem codes
# are registered in every process (a page may show what a worker stored).
from . import beir  # noqa: E402, F401
