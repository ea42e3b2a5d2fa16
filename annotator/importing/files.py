"""Importing document files (PDF, DOCX, HTML, Markdown, text, .zip): all or nothing.

Every file is read first (``formats.documents``), outside any transaction; if any is bad,
``FileRejected`` names each file (and page) and nothing is written. Then, in one
transaction, each becomes a Document (its doc id is its name, or its path inside a .zip
or below a folder) and its original is kept in the data directory. A file already
imported with the same checksum is left alone; a changed one is refused while labels
exist on it, and replaced only when asked (``replace``) and nothing would be orphaned.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Count

from formats import FileRejected
from formats.documents import ArchiveLimits, Extracted, Limits, document_type, extract, unpack
from formats.documents.extract import UNSUPPORTED
from formats.errors import Problem, define, gettext_noop, of_file

from ..models import Chunk, Document, Judgment, Project
from ..originals import store
from .common import MAX_ID_LENGTH, ImportResult

NO_FILES = define("files.no_files", gettext_noop("no files to import"))
NAME_TOO_LONG = define("files.name_too_long", gettext_noop("the name is longer than %(n)s"))
GIVEN_TWICE = define("files.given_twice", gettext_noop("given twice"))
ZIP_IN_ZIP = define("files.zip_in_zip", gettext_noop("a .zip inside a .zip is not opened"))
HOLDS_LABELS = define(
    "files.holds_labels",
    gettext_noop(
        "changed since it was imported, and it holds %(labels)s; not replaced "
        "(labels would be orphaned)"
    ),
)
ONE_LABEL = define("files.one_label", gettext_noop("1 label by %(who)s for queries %(queries)s"))
LABELS = define("files.labels", gettext_noop("%(n)s labels by %(who)s for queries %(queries)s"))
ON_PAGES = define("files.on_pages", gettext_noop("%(labels)s; pages %(pages)s"))
EXISTS_OTHER = define(
    "files.exists_other",
    gettext_noop(
        "document %(name)s already exists with other content; import with --replace "
        "(or tick “Replace changed files”) to replace it"
    ),
)
CHUNKED = define(
    "files.chunked",
    gettext_noop(
        "chunkings %(chunkings)s have chunks on the old text; delete those chunkings "
        "before replacing it"
    ),
)
REPLACED = define("files.replaced", gettext_noop("%(n)s replaced"))
UNCHANGED = define("files.unchanged", gettext_noop("%(n)s unchanged"))

Progress = Callable[[float], None] | None
FileProgress = Callable[[str, float], None] | None


@dataclass(frozen=True)
class Source:
    """One incoming file: where it is and the name it becomes the doc id of."""

    path: Path
    name: str


def limits() -> Limits:
    return Limits(
        max_bytes=settings.ASSAY_MAX_UPLOAD_BYTES,
        max_pages=settings.ASSAY_MAX_PAGES,
        max_chars=settings.ASSAY_MAX_DOCUMENT_CHARS,
        seconds=settings.ASSAY_EXTRACT_SECONDS,
    )


def sources_from_paths(paths: list[Path], *, recursive: bool = False) -> list[Source]:
    """Files named on a command line; folders give their files (all levels with
    ``recursive``), named by their path below the folder."""
    sources: list[Source] = []
    for path in paths:
        if path.is_dir():
            pattern = "**/*" if recursive else "*"
            for child in sorted(path.glob(pattern)):
                if child.is_file() and not child.name.startswith("."):
                    sources.append(Source(child, child.relative_to(path).as_posix()))
        else:
            sources.append(Source(path, path.name))
    return sources


def import_files(
    project: Project,
    sources: list[Source],
    *,
    replace: bool = False,
    progress: Progress = None,
    file_progress: FileProgress = None,
) -> ImportResult:
    """Import every file of ``sources`` (a .zip gives its members) or none of them."""
    with tempfile.TemporaryDirectory(prefix="assay-files-") as scratch:
        files, errors = _expand(sources, Path(scratch))
        if not files and not errors:
            errors.append(NO_FILES())
        total = sum(_size(source.path) for source in files) or 1
        done = 0
        extracted: list[tuple[Source, Extracted]] = []
        seen: set[str] = set()
        for source in files:
            if file_progress:
                file_progress(source.name, 0.0)
            if len(source.name) > MAX_ID_LENGTH:
                errors.append(of_file(f"{source.name[:60]}…", NAME_TOO_LONG(n=MAX_ID_LENGTH)))
            elif source.name in seen:
                errors.append(of_file(source.name, GIVEN_TWICE()))
            else:
                seen.add(source.name)
                size = _size(source.path)

                def heard(fraction: float, name=source.name, size=size, before=done) -> None:
                    if file_progress:
                        file_progress(name, fraction)
                    if progress:
                        progress(0.9 * (before + fraction * size) / total)

                try:
                    extracted.append((source, extract(source.path, source.name, limits(), heard)))
                except FileRejected as failure:
                    errors.extend(failure.problems)
            done += _size(source.path)
            if file_progress:
                file_progress(source.name, 1.0)
            if progress:
                progress(0.9 * done / total)
        plan, unchanged = _plan(project, extracted, replace, errors)
        if errors:
            raise FileRejected(errors)
        created, replaced = _write(project, plan)
    notes = [REPLACED(n=replaced)] if replaced else []
    notes += [UNCHANGED(n=unchanged)] if unchanged else []
    notes += [warning for _, result in extracted for warning in result.warnings]
    return ImportResult("documents", created + replaced, notes=tuple(notes))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _expand(sources: list[Source], scratch: Path) -> tuple[list[Source], list[Problem]]:
    """Archives replaced by their members; unsupported types reported."""
    files: list[Source] = []
    errors: list[Problem] = []
    for number, source in enumerate(sources):
        if Path(source.name).suffix.lower() == ".zip":
            folder = scratch / f"zip{number}"
            folder.mkdir()
            try:
                members = unpack(source.path, source.name, folder, ArchiveLimits())
            except FileRejected as failure:
                errors.extend(failure.problems)
                continue
            for member, path in members:
                if Path(member).suffix.lower() == ".zip":
                    errors.append(of_file(f"{source.name}/{member}", ZIP_IN_ZIP()))
                else:
                    files.append(Source(path, member))
        else:
            files.append(source)
    for source in files:
        if document_type(source.name) is None:
            suffix = Path(source.name).suffix or "(no extension)"
            errors.append(of_file(source.name, UNSUPPORTED(suffix=suffix)))
    files = [s for s in files if document_type(s.name) is not None]
    return files, errors


def labels_on(document: Document) -> Problem:
    """How many labels a document holds and where: by whom, for which queries, on which pages."""
    labels = Judgment.objects.filter(document=document)
    count = labels.count()
    people = labels.values("annotator__username").annotate(n=Count("id")).order_by("-n")
    queries = sorted(set(labels.values_list("query__qid", flat=True)))
    pages = sorted(
        {p for p in (document.page_of(s) for s in labels.values_list("start", flat=True)) if p}
    )
    who = ", ".join(f"{row['annotator__username']} ({row['n']})" for row in people[:5])
    where = ", ".join(queries[:10]) + (" …" if len(queries) > 10 else "")
    labels = (
        ONE_LABEL(who=who, queries=where) if count == 1 else LABELS(n=count, who=who, queries=where)
    )
    return ON_PAGES(labels=labels, pages=", ".join(map(str, pages[:20]))) if pages else labels


def _plan(project, extracted, replace: bool, errors: list[Problem]):
    """What to write: (source, result, existing document or None); counts unchanged files."""
    existing = {
        d.doc_id: d for d in project.documents.filter(doc_id__in=[s.name for s, _ in extracted])
    }
    plan = []
    unchanged = 0
    for source, result in extracted:
        document = existing.get(source.name)
        if document is None:
            plan.append((source, result, None))
            continue
        if document.metadata.get("sha256") == result.metadata["sha256"]:
            unchanged += 1
            continue
        if Judgment.objects.filter(document=document).exists():
            errors.append(of_file(source.name, HOLDS_LABELS(labels=labels_on(document))))
        elif not replace:
            errors.append(of_file(source.name, EXISTS_OTHER(name=repr(source.name))))
        elif chunkings := sorted(
            set(Chunk.objects.filter(document=document).values_list("chunking__name", flat=True))
        ):
            errors.append(of_file(source.name, CHUNKED(chunkings=", ".join(chunkings))))
        else:
            plan.append((source, result, document))
    return plan, unchanged


def _write(project: Project, plan) -> tuple[int, int]:
    stored: list[Path] = []
    created = replaced = 0
    try:
        with transaction.atomic():
            for source, result, document in plan:
                if document is None:
                    document = Document(project=project, doc_id=source.name)
                    created += 1
                else:
                    replaced += 1
                document.title = result.title
                document.text = result.text
                document.page_starts = result.page_starts
                document.metadata = result.metadata
                document.save()
                path = store(project.pk, result.metadata["sha256"], source.name, source.path)
                if path is not None:
                    stored.append(path)
    except BaseException:
        for path in stored:
            path.unlink(missing_ok=True)
        raise
    return created, replaced
