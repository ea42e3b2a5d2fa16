"""Which files an import of document files takes, under which ids, read by which reader.

Paths named on a command line (or uploaded) are taken as given; folders give their files
(all levels with ``recursive``), filtered by ``--include``/``--exclude`` globs; a .zip
gives its members and a .gz its content. A file's document id is its name (its path
below the folder or inside the .zip) with whitespace turned into ``_`` (ids are single
tokens). The reader comes from the name and the bytes together (``formats.documents.
sniff``): a file found in a folder whose name is no document type is passed over with a
note, unless an ``--include`` glob names it.
"""

from __future__ import annotations

import fnmatch
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from formats import FileRejected
from formats.documents import ArchiveLimits, document_type, unpack
from formats.documents.extract import NO_SUCH_FILE
from formats.documents.sniff import MISMATCH, WHAT, content_type, gunzip, reader_for
from formats.errors import define, gettext_noop, of_file
from formats.values import as_token

ZIP_IN_ZIP = define("files.zip_in_zip", gettext_noop("a .zip inside a .zip is not opened"))
NO_FILES = define("files.no_files", gettext_noop("no files to import"))


@dataclass(frozen=True)
class Source:
    """One incoming file: where it is and the name it is known by (its path as given).
    ``explicit``: named by the user (on the command line, uploaded, or by an ``--include``
    glob), so a name without a document type is read for what its bytes are."""

    path: Path
    name: str
    explicit: bool = True

    @property
    def doc_id(self) -> str:
        return as_token(self.name)


@dataclass(frozen=True)
class Selection:
    """Which files of a folder to take: globs matched against the path below the folder
    and against the file's own name."""

    recursive: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def matches(self, globs: tuple[str, ...], relative: str) -> bool:
        base = relative.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(base, g) for g in globs)


def sources_from_paths(paths: list[Path], selection: Selection = Selection()) -> list[Source]:
    """Files named on a command line; folders give their files (all levels with
    ``recursive``), named by their path below the folder."""
    sources: list[Source] = []
    for path in paths:
        if not path.is_dir():
            sources.append(Source(path, path.name))
            continue
        pattern = "**/*" if selection.recursive else "*"
        for child in sorted(path.glob(pattern)):
            relative = child.relative_to(path).as_posix()
            if not child.is_file() or any(p.startswith(".") for p in relative.split("/")):
                continue
            if selection.exclude and selection.matches(selection.exclude, relative):
                continue
            included = bool(selection.include) and selection.matches(selection.include, relative)
            if selection.include and not included:
                continue
            sources.append(Source(child, relative, explicit=included))
    return sources


@dataclass(frozen=True)
class Candidate:
    """A file to import: the file as given (what is hashed and kept as the original) and
    the document type its name says (None: named by the user, no type in the name)."""

    source: Source
    declared: str | None
    packed: bool = False  # a .gz: what it unpacks to is read

    def readable(self, scratch: Path, max_bytes: int) -> tuple[Path, str]:
        """The file to read and its reader, decided from the bytes (``FileRejected`` when
        they are no document, or not the one the name says)."""
        name, path = self.source.name, self.source.path
        if path.stat().st_size == 0:
            return path, self.declared or "text"  # the reader says it is empty
        if self.packed:
            actual = content_type(path)
            if actual != "gzip":
                mismatch = MISMATCH(name=name, actual=WHAT[actual](), declared=WHAT["gzip"]())
                raise FileRejected([mismatch])
            inner = Path(name[:-3]).suffix[:10]
            path = gunzip(path, scratch / f"{uuid.uuid4().hex}{inner}", max_bytes, name)
        return path, reader_for(self.declared, content_type(path), name)


@dataclass
class Gathered:
    """The files to read; the problems of files that cannot be read (by name), and the
    files passed over as not documents."""

    files: list[Candidate] = field(default_factory=list)
    problems: dict[str, list[str]] = field(default_factory=dict)
    passed_over: list[str] = field(default_factory=list)
    order: dict[str, int] = field(default_factory=dict)  # the files' names as given

    def refuse(self, name: str, messages: list[str]) -> None:
        self.problems.setdefault(name, []).extend(messages)

    def messages(self) -> list[str]:
        """Every problem, file by file in the order the files were given."""
        named = sorted(self.problems.items(), key=lambda item: self.order.get(item[0], -1))
        return [message for _, messages in named for message in messages]


def gather(sources: list[Source], scratch: Path, limits: ArchiveLimits) -> Gathered:
    """Archives opened (within ``limits``, counted over all of them); each file a
    candidate, or passed over when its name is no document type and nobody named it."""
    found = Gathered()
    budget = limits.max_unpacked_bytes
    flat: list[Source] = []
    for number, source in enumerate(sources):
        if not source.path.is_file():
            found.refuse(source.name, [of_file(source.name, NO_SUCH_FILE())])
            continue
        if Path(source.name).suffix.lower() != ".zip":
            flat.append(source)
            continue
        folder = scratch / f"zip{number}"
        folder.mkdir()
        try:
            members = unpack(source.path, source.name, folder, _within(limits, budget))
        except FileRejected as failure:
            found.refuse(source.name, failure.problems)
            continue
        budget -= sum(path.stat().st_size for _, path in members)
        for member, path in members:
            if Path(member).suffix.lower() == ".zip":
                found.refuse(member, [of_file(f"{source.name}/{member}", ZIP_IN_ZIP())])
            else:
                flat.append(Source(path, member, explicit=False))  # like a folder's files
    found.order = {source.name: number for number, source in enumerate(flat)}
    for source in flat:
        packed = source.name.lower().endswith(".gz")
        declared = document_type(source.name[:-3] if packed else source.name)
        if declared is None and not source.explicit:
            found.passed_over.append(source.name)
        else:
            found.files.append(Candidate(source, declared, packed))
    return found


def _within(limits: ArchiveLimits, budget: int) -> ArchiveLimits:
    return replace(limits, max_unpacked_bytes=max(budget, 0))
