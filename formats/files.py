"""Opening an incoming file: its format from its content (the name is a hint), then size
and encoding checks. A file is gzip when its first bytes say so, whatever its name."""

from __future__ import annotations

import codecs
import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .errors import FileRejected, define, gettext_noop

FORMATS = ("jsonl", "json", "csv", "tsv", "xlsx", "qrels", "trec")
SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".xlsx": "xlsx",
    ".qrels": "qrels",
    ".run": "trec",
    ".trec": "trec",
}
BOM = b"\xef\xbb\xbf"
GZIP = ".gz"  # any text format may come gzip-compressed: ``run.trec.gz``, ``qrels.txt.gz``

UNKNOWN_FORMAT = define(
    "file.unknown_format", gettext_noop("unknown format %(format)s; use one of %(formats)s")
)
NO_SUCH_FILE = define("file.no_such_file", gettext_noop("no such file: %(name)s"))
TOO_BIG = define(
    "file.too_big", gettext_noop("the file is %(size)s bytes, over the limit of %(limit)s bytes")
)
EMPTY = define("file.empty", gettext_noop("the file is empty"))
NOT_UTF8 = define(
    "file.not_utf8",
    gettext_noop("the file is not UTF-8 text (bad byte at offset %(offset)s); save it as UTF-8"),
)
NOT_GZIP = define("file.not_gzip", gettext_noop("the file is not a readable gzip file"))
INFLATES = define("file.inflates", gettext_noop("the file inflates to over %(limit)s bytes"))


def is_gzip(path: Path | str) -> bool:
    """Whether the file is gzip-compressed: by its first bytes (its name only if it
    cannot be read)."""
    try:
        with Path(path).open("rb") as handle:
            return handle.read(2) == b"\x1f\x8b"
    except OSError:
        return Path(path).suffix.lower() == GZIP


def _open_binary(path: Path):
    return gzip.open(path, "rb") if is_gzip(path) else path.open("rb")


def detect_format(
    path: Path | str,
    explicit: str | None = None,
    *,
    default: str,
    allowed: tuple[str, ...] | None = None,
) -> str:
    """``explicit`` when given (checked); else what the file's first lines show when
    that is one of ``allowed`` (a qrels file named ``qrels.trec`` is qrels), else the
    format the name says, else ``default`` (the caller's usual format: qrels for labels,
    trec for runs…). Standard input (``-``) is ``default``."""
    if explicit:
        if explicit not in FORMATS:
            raise FileRejected([UNKNOWN_FORMAT(format=repr(explicit), formats=", ".join(FORMATS))])
        return explicit
    if str(path) == "-":
        return default
    path = Path(path)
    named = path.with_suffix("") if path.suffix.lower() == GZIP else path
    hint = SUFFIXES.get(named.suffix.lower())
    from .sniffing import sniff

    shown = sniff(path)
    if shown is not None and (allowed is None or shown in allowed):
        return shown
    return hint or default


def check_file(path: Path, max_bytes: int | None = None) -> int:
    """Refuse missing, empty or oversized files before reading a byte of them."""
    if not path.is_file():
        raise FileRejected([NO_SUCH_FILE(name=path.name)])
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise FileRejected([TOO_BIG(size=f"{size:,}", limit=f"{max_bytes:,}")])
    if size == 0:
        raise FileRejected([EMPTY()])
    return size


def not_utf8(offset: int) -> FileRejected:
    return FileRejected([NOT_UTF8(offset=offset)])


def first_bad_byte(path: Path, block: int = 1 << 20) -> int:
    """Offset in the file of the first byte that is not UTF-8 (-1 if there is none)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # of the first byte the decoder has not consumed (it may hold a few back)
    with _open_binary(path) as handle:
        while True:
            data = handle.read(block)
            held = len(decoder.getstate()[0])
            try:
                decoder.decode(data, final=not data)
            except UnicodeDecodeError as error:
                return offset - held + error.start
            if not data:
                return -1
            offset += len(data)


@contextmanager
def open_text(path: Path) -> Iterator[TextIO]:
    """The file as UTF-8 text (a byte-order mark is skipped); any other encoding is refused
    with the offset of its first bad byte."""
    opener = gzip.open if is_gzip(path) else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", errors="strict", newline="") as handle:
            yield handle
    except UnicodeDecodeError:
        raise not_utf8(first_bad_byte(path)) from None
    except (OSError, EOFError, zlib.error):
        if not is_gzip(path):
            raise
        raise FileRejected([NOT_GZIP()]) from None


def read_bytes(path: Path, max_bytes: int | None = None) -> bytes:
    """The whole file as bytes without a byte-order mark, checked to be UTF-8; a ``.gz``
    file is decompressed (and refused if it inflates beyond ``max_bytes``)."""
    data = _decompressed(path, max_bytes) if is_gzip(path) else path.read_bytes()
    skipped = len(BOM) if data.startswith(BOM) else 0
    data = data[skipped:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise not_utf8(skipped + error.start) from None
    return data


def _decompressed(path: Path, max_bytes: int | None) -> bytes:
    try:
        with gzip.open(path, "rb") as handle:
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error):
        raise FileRejected([NOT_GZIP()]) from None
    if max_bytes is not None and len(data) > max_bytes:
        raise FileRejected([INFLATES(limit=f"{max_bytes:,}")])
    if not data:
        raise FileRejected([EMPTY()])
    return data
