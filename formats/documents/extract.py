"""One entry point per file: its type from the name, then the reader of that type."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import FileRejected, Problem, define, gettext_noop, of_file
from ..files import TOO_BIG

TOOK_LONG = define(
    "document.took_long", gettext_noop("extraction took longer than %(seconds)s seconds")
)
TOOK_LONG_AT = define(
    "document.took_long_at",
    gettext_noop("extraction took longer than %(seconds)s seconds (stopped at page %(page)s)"),
)
UNSUPPORTED = define(
    "document.unsupported",
    gettext_noop(
        "unsupported file type %(suffix)s; use PDF, DOCX, HTML, Markdown, text, or a .zip of them"
    ),
)
NO_SUCH_FILE = define("document.no_such_file", gettext_noop("no such file"))
EMPTY = define("document.empty", gettext_noop("the file is empty (0 bytes)"))
NO_TEXT = define("document.no_text", gettext_noop("the file holds no text"))
TOO_MANY_CHARS = define(
    "document.too_many_chars", gettext_noop("%(n)s characters of text, over the limit of %(limit)s")
)
TOO_MANY_PAGES = define(
    "document.too_many_pages",
    gettext_noop("%(n)s pages, over the limit of %(limit)s pages per file"),
)
NOT_UTF8 = define(
    "document.not_utf8",
    gettext_noop("not UTF-8 text (bad byte at offset %(offset)s); save it as UTF-8"),
)

PAGE_SEPARATOR = "\n\n"
DOCUMENT_TYPES = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
}
MEDIA_TYPES = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "html": "text/html",
    "markdown": "text/markdown",
    "text": "text/plain",
}
# Characters a reader may hand back that are not text: C0 controls except tab and newline,
# DEL, and the two non-characters.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")


@dataclass(frozen=True)
class Limits:
    """What one file may cost: bytes on disk, pages, characters of text, seconds."""

    max_bytes: int = 200 * 1024 * 1024
    max_pages: int = 5000
    max_chars: int = 20_000_000
    seconds: float = 120.0


@dataclass(frozen=True)
class ReadOptions:
    """Choices about what text a file gives: the whole HTML page or its main content,
    Word headers and footers or not. Recorded with each document (``as_metadata``), so
    that a file imported again with other choices is read again."""

    html_whole_page: bool = False
    docx_headers: bool = False

    def as_metadata(self) -> dict:
        return {
            "html": "whole page" if self.html_whole_page else "main content",
            "docx_headers": self.docx_headers,
        }


@dataclass
class Extracted:
    text: str
    page_starts: list[int]
    title: str
    metadata: dict
    warnings: list[Problem] = field(default_factory=list)


class Deadline:
    """Stops a reader that runs past the time limit for one file."""

    def __init__(self, name: str, seconds: float):
        self.name, self.seconds = name, seconds
        self.until = time.monotonic() + seconds
        self.on_progress: Callable[[float], None] | None = None
        self.options = ReadOptions()

    def progress(self, fraction: float) -> None:
        if self.on_progress is not None:
            self.on_progress(fraction)

    def check(self, page: int | None = None) -> None:
        if time.monotonic() > self.until:
            seconds = f"{self.seconds:g}"
            problem = (
                TOOK_LONG(seconds=seconds)
                if page is None
                else TOOK_LONG_AT(seconds=seconds, page=page)
            )
            raise FileRejected([of_file(self.name, problem)])


def document_type(name: str) -> str | None:
    return DOCUMENT_TYPES.get(Path(name).suffix.lower())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def clean(text: str) -> str:
    """Line ends as ``\\n`` and no control characters."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def join_pages(pages: list[str]) -> tuple[str, list[int]]:
    """Pages joined by a blank line, and the offset where each starts."""
    starts, offset = [], 0
    for page in pages:
        starts.append(offset)
        offset += len(page) + len(PAGE_SEPARATOR)
    return PAGE_SEPARATOR.join(pages), starts


def extract(
    path: Path,
    name: str,
    limits: Limits = Limits(),
    on_progress: Callable[[float], None] | None = None,
    *,
    kind: str | None = None,
    options: ReadOptions = ReadOptions(),
    sha256: str | None = None,
) -> Extracted:
    """The text, pages, title and metadata of one document file, or ``FileRejected``.
    ``kind`` is the reader (``sniff.reader_for``); without it the name and the content
    decide. ``on_progress`` hears the share of the file read so far (page by page for
    PDFs). ``sha256`` is the checksum recorded, when the caller knows it already."""
    from . import docx, html, pdf, plain  # the readers import this module
    from .sniff import content_type, reader_for

    if kind is None and document_type(name) is None:
        suffix = Path(name).suffix or "(no extension)"
        raise FileRejected([of_file(name, UNSUPPORTED(suffix=suffix))])
    if not path.is_file():
        raise FileRejected([of_file(name, NO_SUCH_FILE())])
    size = path.stat().st_size
    if size == 0:
        raise FileRejected([of_file(name, EMPTY())])
    if size > limits.max_bytes:
        raise FileRejected(
            [of_file(name, TOO_BIG(size=f"{size:,}", limit=f"{limits.max_bytes:,}"))]
        )
    if kind is None:
        kind = reader_for(document_type(name), content_type(path), name)
    deadline = Deadline(name, limits.seconds)
    deadline.options = options
    reader = {
        "pdf": pdf.read,
        "docx": docx.read,
        "html": html.read,
        "markdown": plain.read_markdown,
        "text": plain.read_text,
    }[kind]
    deadline.on_progress = on_progress
    result = reader(path, name, limits, deadline)
    if not result.text.strip():
        raise FileRejected([of_file(name, NO_TEXT())])
    if len(result.text) > limits.max_chars:
        too_many = TOO_MANY_CHARS(n=f"{len(result.text):,}", limit=f"{limits.max_chars:,}")
        raise FileRejected([of_file(name, too_many)])
    result.title = " ".join(result.title.split())[:1000] or Path(name).stem[:1000]
    result.metadata = {
        "file_name": Path(name).name,
        "file_size": size,
        "sha256": sha256 or sha256_of(path),
        "media_type": MEDIA_TYPES[kind],
        "page_count": len(result.page_starts),
        "extraction": options.as_metadata(),
        **result.metadata,
    }
    if result.warnings:
        result.metadata["extraction_warnings"] = [str(warning) for warning in result.warnings]
    return result


def check_pages(name: str, count: int, limits: Limits) -> None:
    if count > limits.max_pages:
        raise FileRejected(
            [of_file(name, TOO_MANY_PAGES(n=f"{count:,}", limit=f"{limits.max_pages:,}"))]
        )


def decode(data: bytes, name: str, fallback: str | None = None) -> str:
    """UTF-8 text (a byte-order mark skipped), else ``fallback`` when the file declares it."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if fallback:
            try:
                return data.decode(fallback)
            except (LookupError, UnicodeDecodeError):
                pass
        raise FileRejected([of_file(name, NOT_UTF8(offset=error.start))]) from None
