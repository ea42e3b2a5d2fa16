"""Checking an .xlsx file's zip before openpyxl parses it: no bombs, no XML entities.

The upload limit applies to the compressed file, and a workbook inflates: a 0.4 MB file
can hold a 400 MB cell. Before parsing, the zip's directory is checked — at most
``MAX_ENTRIES`` entries, no entry inflating more than ``MAX_RATIO`` times (entries over
``RATIO_FLOOR`` bytes), all entries together at most ``max_bytes`` (the upload limit:
what a workbook unpacks to is held to what a CSV file may be) — and every XML part is
scanned for a DOCTYPE or ENTITY declaration, which no spreadsheet program writes and
which entity-expansion attacks need. Python's zipfile never returns more bytes than an
entry's declared size, so the directory's sizes bound what openpyxl can read.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from .errors import FileRejected, define, gettext_noop

MAX_ENTRIES = 10_000
MAX_RATIO = 200
RATIO_FLOOR = 1 << 20
_DECLARATIONS = (b"<!DOCTYPE", b"<!ENTITY")
_BLOCK = 1 << 20

NOT_A_WORKBOOK = define(
    "workbook.not_a_workbook", gettext_noop("the file is not an Excel workbook (.xlsx)")
)
TOO_MANY_PARTS = define(
    "workbook.too_many_parts",
    gettext_noop("the workbook holds %(n)s parts, over the limit of %(limit)s"),
)
INFLATES = define(
    "workbook.inflates",
    gettext_noop(
        "the workbook part %(part)s inflates %(ratio)s times, over the limit of %(limit)s times "
        "(a zip bomb?)"
    ),
)
UNPACKS_TO = define(
    "workbook.unpacks_to",
    gettext_noop("the workbook unpacks to %(n)s bytes, over the limit of %(limit)s bytes"),
)
DECLARES = define(
    "workbook.declares",
    gettext_noop(
        "the workbook part %(part)s declares a DOCTYPE or an XML entity, which spreadsheets do "
        "not use; save the file again from a spreadsheet program"
    ),
)


def check_workbook(path: Path, max_bytes: int | None = None) -> None:
    """Refuse a workbook whose zip could exhaust memory or whose XML declares entities."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
            _check_sizes(entries, max_bytes)
            for entry in entries:
                if entry.filename.lower().endswith((".xml", ".rels", ".vml")):
                    _check_declarations(archive, entry)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError):
        raise FileRejected([NOT_A_WORKBOOK()]) from None


def _check_sizes(entries: list[zipfile.ZipInfo], max_bytes: int | None) -> None:
    if len(entries) > MAX_ENTRIES:
        raise FileRejected([TOO_MANY_PARTS(n=f"{len(entries):,}", limit=f"{MAX_ENTRIES:,}")])
    for entry in entries:
        ratio = entry.file_size / max(entry.compress_size, 1)
        if entry.file_size > RATIO_FLOOR and ratio > MAX_RATIO:
            raise FileRejected(
                [INFLATES(part=entry.filename, ratio=f"{ratio:,.0f}", limit=MAX_RATIO)]
            )
    total = sum(entry.file_size for entry in entries)
    if max_bytes is not None and total > max_bytes:
        raise FileRejected([UNPACKS_TO(n=f"{total:,}", limit=f"{max_bytes:,}")])


def _check_declarations(archive: zipfile.ZipFile, entry: zipfile.ZipInfo) -> None:
    """Scan one XML part for declarations (NUL bytes dropped, so UTF-16 text is seen)."""
    tail = b""
    with archive.open(entry) as handle:
        while block := handle.read(_BLOCK):
            text = tail + block.replace(b"\x00", b"").upper()
            if any(declaration in text for declaration in _DECLARATIONS):
                raise FileRejected([DECLARES(part=entry.filename)])
            tail = text[-16:]
