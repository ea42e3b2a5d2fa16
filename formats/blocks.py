"""An incoming text file as blocks of whole lines: a path or standard input (``-``), plain
or gzip-compressed (known by its first bytes, whatever its name), never held whole.

gzip is inflated in a thread of its own (zlib lets go of the interpreter while it works),
so that inflating the next block overlaps with parsing this one, as ``zcat | trec_eval``
overlaps two processes. A block ends at a line break (the last one need not); the
first loses a UTF-8 byte-order mark. Each block comes with the offset of its first byte
in the (inflated) file and the number of line breaks before it, so that a problem can be
named by byte offset or line.
"""

from __future__ import annotations

import queue
import sys
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import FileRejected
from .files import BOM, EMPTY, INFLATES, NO_SUCH_FILE, NOT_GZIP, TOO_BIG

STDIN = "-"
BLOCK_BYTES = 1 << 23  # text parsed at a time (8 MiB: fewer page faults than larger)
READ_BYTES = 1 << 20  # compressed bytes read at a time
GZIP_MAGIC = b"\x1f\x8b"


def is_stdin(source: Path | str) -> bool:
    return str(source) == STDIN


@dataclass(frozen=True)
class Block:
    """Whole lines of a file: ``text``, its first byte's ``offset`` in the file and the
    number of line breaks before it (``lines_before``: its first line is that + 1)."""

    text: bytes
    offset: int
    lines_before: int


def _raw_handle(source: Path | str):
    if is_stdin(source):
        return sys.stdin.buffer
    path = Path(source)
    if not path.is_file():
        raise FileRejected([NO_SUCH_FILE(name=path.name)])
    return path.open("rb")


def head(source: Path | str, size: int = 1 << 16) -> bytes:
    """The first ``size`` bytes of a file's text (inflated if it is gzip), for telling its
    format; b"" for standard input, which can be read only once."""
    if is_stdin(source):
        return b""
    with _raw_handle(source) as handle:
        start = handle.read(size)
        if not start.startswith(GZIP_MAGIC):
            return start
        inflater = zlib.decompressobj(wbits=31)
        try:
            text = inflater.decompress(start, size)
        except zlib.error:
            return b""
        return text


def blocks(
    source: Path | str, *, max_bytes: int | None = None, size: int = BLOCK_BYTES
) -> Iterator[Block]:
    """The file's text in blocks of about ``size`` bytes of whole lines (see the module).
    A file over ``max_bytes`` (inflated: over it once inflated) is refused, as is an empty
    one or a gzip file that cannot be inflated."""
    handle = _raw_handle(source)
    try:
        first = handle.read(READ_BYTES)
        if not first:
            raise FileRejected([EMPTY()])
        if first.startswith(GZIP_MAGIC):
            pieces = _inflated(first, handle, size, max_bytes)
        else:
            pieces = _plain(first, handle, size, max_bytes)
        yield from _whole_lines(pieces, size)
    finally:
        if not is_stdin(source):
            handle.close()


def _plain(first: bytes, handle, size: int, max_bytes: int | None) -> Iterator[bytes]:
    total = len(first)
    yield first
    while piece := handle.read(size):
        total += len(piece)
        if max_bytes is not None and total > max_bytes:
            raise FileRejected([TOO_BIG(size=f"{total:,}", limit=f"{max_bytes:,}")])
        yield piece


def _whole_lines(pieces: Iterator[bytes], size: int) -> Iterator[Block]:
    """Pieces regrouped into blocks of about ``size`` bytes ending at line breaks."""
    rest = b""
    offset = lines = 0
    first = True
    for piece in pieces:
        if first:
            first = False
            if piece.startswith(BOM):
                piece, offset = piece[len(BOM) :], len(BOM)
        rest += piece
        if len(rest) < size:
            continue
        cut = rest.rfind(b"\n") + 1
        if cut == 0:
            continue
        text, rest = rest[:cut], rest[cut:]
        yield Block(text, offset, lines)
        offset += len(text)
        lines += text.count(b"\n")
    if rest:
        yield Block(rest, offset, lines)


_DONE = object()


def _inflated(first: bytes, handle, size: int, max_bytes: int | None) -> Iterator[bytes]:
    """A gzip file's text (every member), inflated in a thread a piece at a time; at most
    ``size`` bytes come out of one piece of input, so a small bomb never fills memory."""
    out: queue.Queue = queue.Queue(maxsize=3)
    stop = threading.Event()

    def put(item) -> None:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def work() -> None:
        try:
            inflater, data, total, in_member = zlib.decompressobj(wbits=31), first, 0, True
            while data and not stop.is_set():
                while data and not stop.is_set():
                    if not in_member:
                        inflater, in_member = zlib.decompressobj(wbits=31), True
                    piece = inflater.decompress(data, size)
                    total += len(piece)
                    if max_bytes is not None and total > max_bytes:
                        raise FileRejected([INFLATES(limit=f"{max_bytes:,}")])
                    if piece:
                        put(piece)
                    if inflater.eof:
                        data, in_member = inflater.unused_data, False
                    else:
                        data = inflater.unconsumed_tail
                data = handle.read(READ_BYTES)
            if in_member and not inflater.eof:
                raise FileRejected([NOT_GZIP()])  # cut short
            put(_DONE)
        except zlib.error:
            put(FileRejected([NOT_GZIP()]))
        except (FileRejected, OSError) as error:
            put(error)

    worker = threading.Thread(target=work, name="gzip-inflate", daemon=True)
    worker.start()
    try:
        while (item := out.get()) is not _DONE:
            if isinstance(item, Exception):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()
