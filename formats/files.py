"""Opening an incoming file: its format from the name, then size and encoding checks."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .errors import FileRejected

FORMATS = ("jsonl", "csv", "xlsx", "qrels", "trec")
SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".xlsx": "xlsx",
    ".qrels": "qrels",
    ".run": "trec",
    ".trec": "trec",
}
BOM = b"\xef\xbb\xbf"


def detect_format(path: Path | str, explicit: str | None = None, *, default: str) -> str:
    """``explicit`` when given (checked), else the format the file name says, else
    ``default`` (the caller's usual format: qrels for labels, trec for runs…)."""
    if explicit:
        if explicit not in FORMATS:
            raise FileRejected([f"unknown format {explicit!r}; use one of {', '.join(FORMATS)}"])
        return explicit
    return SUFFIXES.get(Path(path).suffix.lower(), default)


def check_file(path: Path, max_bytes: int | None = None) -> int:
    """Refuse missing, empty or oversized files before reading a byte of them."""
    if not path.is_file():
        raise FileRejected([f"no such file: {path.name}"])
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise FileRejected([f"the file is {size:,} bytes, over the limit of {max_bytes:,} bytes"])
    if size == 0:
        raise FileRejected(["the file is empty"])
    return size


def not_utf8(offset: int) -> FileRejected:
    return FileRejected(
        [f"the file is not UTF-8 text (bad byte at offset {offset}); save it as UTF-8"]
    )


def first_bad_byte(path: Path, block: int = 1 << 20) -> int:
    """Offset in the file of the first byte that is not UTF-8 (-1 if there is none)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # of the first byte the decoder has not consumed (it may hold a few back)
    with path.open("rb") as handle:
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
    try:
        with path.open(encoding="utf-8-sig", errors="strict", newline="") as handle:
            yield handle
    except UnicodeDecodeError:
        raise not_utf8(first_bad_byte(path)) from None


def read_bytes(path: Path) -> bytes:
    """The whole file as bytes without a byte-order mark, checked to be UTF-8."""
    data = path.read_bytes()
    skipped = len(BOM) if data.startswith(BOM) else 0
    data = data[skipped:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise not_utf8(skipped + error.start) from None
    return data
