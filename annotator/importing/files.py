"""Importing document files (PDF, DOCX, HTML, Markdown, text, .zip, .gz): all or nothing,
or with the bad files set aside when asked (``skip_bad``).

Which files, under which ids and by which reader is ``file_sources``' business. A file
whose checksum (and reading choices) match the document of its id is recognised as
unchanged by its SHA-256 alone, without being read again. The others are read outside
any transaction; then, in one transaction, each becomes a Document and its original is
kept in the data directory. A changed file replaces its document only when asked
(``replace``) and never while labels (or chunks) stand on the old text: that is checked
again inside the writing transaction, with the documents locked, so a label saved while
the files were read is seen and the document is not replaced under it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Count

from formats import FileRejected
from formats.documents import ArchiveLimits, Extracted, Limits, extract, sha256_of
from formats.documents.extract import ReadOptions
from formats.errors import Problem, define, gettext_noop, of_file

from .. import file_store
from ..models import Chunk, Document, Judgment, Project
from ..originals import store
from .common import MAX_ID_LENGTH, ImportResult
from .file_sources import NO_FILES, Gathered, Selection, Source, gather, sources_from_paths

__all__ = ["FileReport", "Selection", "Source", "import_files", "sources_from_paths"]

Progress = Callable[[float], None] | None
FileProgress = Callable[[str, float], None] | None

NAME_TOO_LONG = define("files.name_too_long", gettext_noop("the name is longer than %(n)s"))
GIVEN_TWICE_AS = define(
    "files.given_twice_as", gettext_noop("%(name)s: given twice (as %(first)s and %(second)s)")
)
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


@dataclass(frozen=True)
class FileReport:
    """What became of each file: ``outcome`` is imported, replaced, unchanged, skipped
    (with its ``problems``) or passed over (not a document)."""

    name: str
    outcome: str
    problems: tuple[Problem, ...] = ()

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "problems": [problem.as_json() for problem in self.problems],
        }


@dataclass
class _Plan:
    new: list[tuple[Source, Extracted]] = field(default_factory=list)
    replace: list[tuple[Source, Extracted, Document]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def limits() -> Limits:
    return Limits(
        max_bytes=settings.ASSAY_MAX_UPLOAD_BYTES,
        max_pages=settings.ASSAY_MAX_PAGES,
        max_chars=settings.ASSAY_MAX_DOCUMENT_CHARS,
        seconds=settings.ASSAY_EXTRACT_SECONDS,
    )


def archive_limits() -> ArchiveLimits:
    return ArchiveLimits(
        max_unpacked_bytes=settings.ASSAY_MAX_UNPACKED_BYTES,
        max_member_bytes=settings.ASSAY_MAX_UPLOAD_BYTES,
    )


def import_files(
    project: Project,
    sources: list[Source],
    *,
    replace: bool = False,
    skip_bad: bool = False,
    options: ReadOptions | None = None,
    progress: Progress = None,
    file_progress: FileProgress = None,
) -> ImportResult:
    """Import every file of ``sources`` or none of them (``FileRejected`` names each bad
    file); with ``skip_bad`` the good ones, and the result's report lists the others."""
    options = options or ReadOptions()
    with tempfile.TemporaryDirectory(prefix="assay-files-") as scratch:
        found = gather(sources, Path(scratch), archive_limits())
        _check_names(found)
        if not found.files and not found.problems:
            found.refuse("", [NO_FILES])
        plan = _read(project, found, Path(scratch), replace, options, progress, file_progress)
        if found.problems and (not skip_bad or "" in found.problems):
            raise FileRejected(_messages(found))
        created, replaced = _write(project, plan, found, skip_bad)
        if found.problems and not skip_bad:
            raise FileRejected(_messages(found))
    return _result(plan, found, created, replaced)


def _messages(found: Gathered) -> list[str]:
    return found.messages()


def _check_names(found: Gathered) -> None:
    """Ids too long, or two files that become the same id, are problems of those files."""
    first: dict[str, str] = {}
    kept = []
    for candidate in found.files:
        source = candidate.source
        if len(source.doc_id) > MAX_ID_LENGTH:
            found.refuse(
                source.name, [of_file(source.name[:60] + "…", NAME_TOO_LONG(n=MAX_ID_LENGTH))]
            )
        elif source.doc_id in first:
            twice = GIVEN_TWICE_AS(
                name=source.doc_id, first=first[source.doc_id], second=source.name
            )
            found.refuse(source.name, [twice])
        else:
            first[source.doc_id] = source.name
            kept.append(candidate)
    found.files = kept


def _read(project, found: Gathered, scratch, replace, options, progress, file_progress) -> _Plan:
    """Unchanged files recognised by checksum; the others read, and planned as new or as
    replacements (problems recorded by file name)."""
    reading = options.as_metadata()
    ids = [candidate.source.doc_id for candidate in found.files]
    existing = {
        doc_id: (pk, metadata)
        for pk, doc_id, metadata in project.documents.filter(doc_id__in=ids).values_list(
            "pk", "doc_id", "metadata"
        )
    }
    plan = _Plan()
    total = sum(_size(candidate.source.path) for candidate in found.files) or 1
    done = 0
    for candidate in found.files:
        source = candidate.source
        size = _size(source.path)
        if file_progress:
            file_progress(source.name, 0.0)
        checksum = sha256_of(source.path)
        pk, metadata = existing.get(source.doc_id, (None, {}))
        metadata = metadata if isinstance(metadata, dict) else {}
        if (
            pk is not None
            and metadata.get("sha256") == checksum
            and metadata.get("extraction", reading) == reading
        ):
            plan.unchanged.append(source.name)
        elif pk is not None and not replace:
            problem = EXISTS_OTHER(name=repr(source.doc_id))
            found.refuse(source.name, [of_file(source.name, problem)])
        else:

            def heard(fraction: float, name=source.name, before=done, size=size) -> None:
                if file_progress:
                    file_progress(name, fraction)
                if progress:
                    progress(0.9 * (before + fraction * size) / total)

            try:
                path, reader = candidate.readable(scratch, settings.ASSAY_MAX_UPLOAD_BYTES)
                result = extract(
                    path,
                    source.name,
                    limits(),
                    heard,
                    kind=reader,
                    options=options,
                    sha256=checksum,
                )
            except FileRejected as failure:
                found.refuse(source.name, failure.problems)
            else:
                if candidate.packed:  # the original kept is the .gz as it came
                    result.metadata.update(media_type="application/gzip", file_size=size)
                document = Document.objects.get(pk=pk) if pk is not None else None
                if document is None:
                    plan.new.append((source, result))
                elif problem := _why_not_replaced(document):
                    found.refuse(source.name, [of_file(source.name, problem)])
                else:
                    plan.replace.append((source, result, document))
        done += size
        if file_progress:
            file_progress(source.name, 1.0)
        if progress:
            progress(0.9 * done / total)
    return plan


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


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


def _why_not_replaced(document: Document) -> Problem | None:
    """Why a document cannot be replaced now (labels or chunks on its text), or None."""
    if Judgment.objects.filter(document=document).exists():
        return HOLDS_LABELS(labels=labels_on(document))
    chunkings = sorted(
        set(Chunk.objects.filter(document=document).values_list("chunking__name", flat=True))
    )
    if chunkings:
        return CHUNKED(chunkings=", ".join(chunkings))
    return None


def _write(project: Project, plan: _Plan, found: Gathered, skip_bad: bool) -> tuple[int, int]:
    """New documents and replacements in one transaction. The documents to replace are
    locked and checked again there: a label written since they were read (the writer's
    foreign key waits on the lock, or SQLite's one writer waits for the transaction)
    keeps its document from being replaced."""
    stored: list[str] = []
    created = replaced = 0
    try:
        with transaction.atomic():
            locked = {
                d.pk: d
                for d in Document.objects.select_for_update().filter(
                    pk__in=[document.pk for _, _, document in plan.replace]
                )
            }
            for source, _, document in plan.replace:
                current = locked.get(document.pk)
                problem = _why_not_replaced(current) if current else None
                if problem:
                    found.refuse(source.name, [of_file(source.name, problem)])
            if found.problems and not skip_bad:
                return 0, 0
            for source, result in plan.new:
                document = Document(project=project, doc_id=source.doc_id)
                _fill(document, result)
                created += 1
                stored += _keep(project, source, result)
            for source, result, document in plan.replace:
                if source.name in found.problems or document.pk not in locked:
                    continue
                current = locked[document.pk]
                _fill(current, result)
                replaced += 1
                stored += _keep(project, source, result)
    except BaseException:
        for name in stored:
            file_store.delete(name)
        raise
    return created, replaced


def _fill(document: Document, result: Extracted) -> None:
    document.title = result.title
    document.text = result.text
    document.page_starts = result.page_starts
    document.metadata = result.metadata
    document.save()


def _keep(project: Project, source: Source, result: Extracted) -> list[str]:
    """Put the original into the file store; its name when it was not there yet."""
    name = store(project.pk, result.metadata["sha256"], source.name, source.path)
    return [name] if name is not None else []


def _result(plan: _Plan, found: Gathered, created: int, replaced: int) -> ImportResult:
    report = [FileReport(s.name, "imported") for s, _ in plan.new]
    report += [
        FileReport(s.name, "replaced") for s, _, _ in plan.replace if s.name not in found.problems
    ]
    report += [FileReport(name, "unchanged") for name in plan.unchanged]
    problems = sorted(found.problems.items(), key=lambda item: found.order.get(item[0], -1))
    report += [FileReport(name, "skipped", tuple(p)) for name, p in problems if name]
    report += [FileReport(name, "passed over") for name in found.passed_over]
    results = [r for _, r in plan.new] + [
        r for s, r, _ in plan.replace if s.name not in found.problems
    ]
    notes = [REPLACED(n=replaced)] if replaced else []
    notes += [UNCHANGED(n=len(plan.unchanged))] if plan.unchanged else []
    notes += [warning for result in results for warning in result.warnings]
    return ImportResult(
        "documents",
        created + replaced,
        notes=tuple(notes),
        skipped=len(found.problems),
        report=tuple(report),
    )
