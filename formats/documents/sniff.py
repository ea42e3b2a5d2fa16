"""What a file really is, from its first bytes (and a .zip's table of contents), not its name.

``content_type(path)`` names what the bytes are ("pdf", "docx", "html", "text", "zip",
"gzip", "png" …); ``reader_for(name, path, explicit)`` picks the reader of a document file
from its name and its content together: the content decides, and a name that says
otherwise is a problem worded as "report.pdf is a Word document (DOCX), not a PDF".
"""

from __future__ import annotations

import gzip
import re
import zipfile
from pathlib import Path

from ..errors import FileRejected, define, gettext_noop, of_file

HEAD_BYTES = 64 * 1024
CORRUPT_GZIP = define("document.corrupt_gzip", gettext_noop("a corrupt gzip file"))
GZIP_TOO_BIG = define(
    "document.gzip_too_big", gettext_noop("unpacks to more than %(limit)s bytes, over the limit")
)
MISMATCH = define("document.mismatch", gettext_noop("%(name)s is %(actual)s, not %(declared)s"))
NOT_A_DOCUMENT = define(
    "document.not_a_document",
    gettext_noop("%(name)s is %(actual)s, not a document; use PDF, DOCX, HTML, Markdown or text"),
)

# What each kind of content is called in a message, translated with it.
WHAT = {
    "pdf": define("what.pdf", gettext_noop("a PDF")),
    "docx": define("what.docx", gettext_noop("a Word document (DOCX)")),
    "html": define("what.html", gettext_noop("an HTML page")),
    "markdown": define("what.markdown", gettext_noop("a Markdown file")),
    "text": define("what.text", gettext_noop("a text file")),
    "zip": define("what.zip", gettext_noop("a .zip archive")),
    "gzip": define("what.gzip", gettext_noop("a gzip-compressed file")),
    "xlsx": define("what.xlsx", gettext_noop("an Excel workbook (XLSX)")),
    "pptx": define("what.pptx", gettext_noop("a PowerPoint presentation (PPTX)")),
    "opendocument": define("what.opendocument", gettext_noop("an OpenDocument file")),
    "ole": define("what.ole", gettext_noop("an old Microsoft Office file (.doc, .xls or .ppt)")),
    "rtf": define("what.rtf", gettext_noop("a Rich Text (RTF) file")),
    "png": define("what.png", gettext_noop("a PNG image")),
    "jpeg": define("what.jpeg", gettext_noop("a JPEG image")),
    "gif": define("what.gif", gettext_noop("a GIF image")),
    "webp": define("what.webp", gettext_noop("a WebP image")),
    "tiff": define("what.tiff", gettext_noop("a TIFF image")),
    "program": define("what.program", gettext_noop("a program")),
    "binary": define("what.binary", gettext_noop("a binary file (not text)")),
}
DOCUMENT_KINDS = ("pdf", "docx", "html", "markdown", "text")

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole"),
    (b"{\\rtf", "rtf"),
    (b"\x1f\x8b", "gzip"),
    (b"\x7fELF", "program"),
    (b"MZ", "program"),
)
_HTML_START = re.compile(
    rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html[\s>]|head[\s>])", re.I | re.S
)


def _zip_kind(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist()[:10_000])
            if "word/document.xml" in names:
                return "docx"
            if "xl/workbook.xml" in names:
                return "xlsx"
            if "ppt/presentation.xml" in names:
                return "pptx"
            if "mimetype" in names and "content.xml" in names:
                return "opendocument"
    except (zipfile.BadZipFile, OSError, ValueError):
        return "broken zip"  # its reader (DOCX or .zip) says what is wrong with it
    return "zip"


def kind_of_bytes(head: bytes) -> str:
    """What a file starting with ``head`` is, without its .zip table of contents."""
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head[8:12] == b"WEBP" and head.startswith(b"RIFF"):
        return "webp"
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    body = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    if body.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "text"  # UTF-16 text; the reader says it wants UTF-8
    if b"\x00" in body:
        return "binary"
    if _HTML_START.match(body):  # a page; a fragment (Markdown's raw HTML) is still text
        return "html"
    return "text"


def content_type(path: Path) -> str:
    """What the file's bytes are (see ``WHAT`` for the names)."""
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    kind = kind_of_bytes(head)
    return _zip_kind(path) if kind == "zip" else kind


def gunzip(path: Path, into: Path, limit: int, name: str) -> Path:
    """A .gz file unpacked into ``into``, at most ``limit`` bytes (more is refused)."""
    written = 0
    try:
        with gzip.open(path, "rb") as source, into.open("wb") as sink:
            while block := source.read(1 << 20):
                written += len(block)
                if written > limit:
                    raise FileRejected([of_file(name, GZIP_TOO_BIG(limit=f"{limit:,}"))])
                sink.write(block)
    except (OSError, EOFError, gzip.BadGzipFile):
        raise FileRejected([of_file(name, CORRUPT_GZIP())]) from None
    return into


def reader_for(declared: str | None, actual: str, name: str) -> str:
    """The reader for a file whose name says ``declared`` (None: no document type) and whose
    bytes are ``actual``; ``FileRejected`` when they disagree in a way no reader can take."""
    if declared is None:
        actual = "zip" if actual == "broken zip" else actual
        if actual in ("pdf", "docx", "html", "text"):
            return actual
        raise FileRejected([NOT_A_DOCUMENT(name=name, actual=WHAT[actual]())])
    if actual == declared or (actual == "broken zip" and declared == "docx"):
        return declared
    if actual == "broken zip":
        actual = "zip"
    if declared in ("html", "markdown", "text") and actual == "text":
        return declared  # HTML or Markdown without a tag at its start is still text
    if declared == "markdown" and actual == "html":
        return "html"  # a web page saved as .md: read as the page it is
    if declared == "text" and actual == "html":
        return "text"  # what a .txt says is kept as written
    raise FileRejected([MISMATCH(name=name, actual=WHAT[actual](), declared=WHAT[declared]())])
