"""Reading import files into numbered rows: JSONL, CSV, XLSX and TREC qrels.

Every reader yields ``(line_number, row)`` where ``row`` is a dict of column → value, or a
``BadLine`` naming what is wrong with that line. Files are streamed, never read whole.
"""

from __future__ import annotations

import csv
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

from .errors import BadLine, ImportFailed

Row = dict | BadLine
FORMATS = ("jsonl", "csv", "xlsx", "qrels")


def detect_format(path: Path | str, explicit: str | None = None, default: str = "jsonl") -> str:
    if explicit:
        if explicit not in FORMATS:
            raise ImportFailed([f"unknown format {explicit!r}; use one of {', '.join(FORMATS)}"])
        return explicit
    suffix = Path(path).suffix.lower()
    return {
        ".jsonl": "jsonl",
        ".ndjson": "jsonl",
        ".json": "jsonl",
        ".csv": "csv",
        ".xlsx": "xlsx",
        ".qrels": "qrels",
        ".txt": "qrels",
    }.get(suffix, default)


def check_file(path: Path) -> int:
    """Refuse missing, empty or oversized files before reading a byte of them."""
    if not path.is_file():
        raise ImportFailed([f"no such file: {path.name}"])
    size = path.stat().st_size
    limit = settings.ASSAY_MAX_UPLOAD_BYTES
    if size > limit:
        raise ImportFailed([f"the file is {size:,} bytes, over the limit of {limit:,} bytes"])
    if size == 0:
        raise ImportFailed(["the file is empty"])
    return size


class RowSource:
    """The numbered rows of one file, with how far through the file the reading is."""

    def __init__(self, path: Path | str, fmt: str):
        if fmt not in FORMATS:
            raise ImportFailed([f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}"])
        self.path = Path(path)
        self.fmt = fmt
        self._handle = None
        self._xlsx_position = (0, 1)

    def __iter__(self) -> Iterator[tuple[int, Row]]:
        if self.fmt == "xlsx":
            yield from _xlsx_rows(self.path, self)
            return
        parse = {"jsonl": _jsonl_rows, "csv": _csv_rows, "qrels": _qrels_rows}[self.fmt]
        try:
            with self.path.open(encoding="utf-8-sig", errors="strict", newline="") as handle:
                self._handle = handle
                yield from parse(handle)
        except UnicodeDecodeError as error:
            raise ImportFailed(
                [f"the file is not UTF-8 text (bad byte at offset {error.start}); save it as UTF-8"]
            ) from None
        finally:
            self._handle = None

    def fraction(self) -> float:
        """Share of the file read so far (0..1), for progress bars."""
        if self.fmt == "xlsx":
            done, total = self._xlsx_position
            return min(1.0, done / max(total, 1))
        if self._handle is None:
            return 0.0
        size = self.path.stat().st_size or 1
        return min(1.0, self._handle.buffer.tell() / size)


def read_rows(path: Path | str, fmt: str) -> Iterator[tuple[int, Row]]:
    return iter(RowSource(path, fmt))


def _jsonl_rows(handle) -> Iterator[tuple[int, Row]]:
    for number, raw in enumerate(handle, start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as error:
            yield number, BadLine(f"malformed JSON ({error.msg}, column {error.colno})")
            continue
        if not isinstance(row, dict):
            yield number, BadLine("expected a JSON object {...}")
            continue
        yield number, row


def _csv_rows(handle) -> Iterator[tuple[int, Row]]:
    reader = csv.reader(handle)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as error:
        yield 1, BadLine(f"malformed CSV header ({error})")
        return
    header = [h.strip() for h in header]
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            yield reader.line_num, BadLine(f"malformed CSV ({error})")
            return
        if not any(v.strip() for v in values):
            continue
        if len(values) > len(header):
            yield (
                reader.line_num,
                BadLine(f"{len(values)} values but the header has {len(header)} columns"),
            )
            continue
        yield (
            reader.line_num,
            {column: value for column, value in zip(header, values, strict=False) if value != ""},
        )


def _qrels_rows(handle) -> Iterator[tuple[int, Row]]:
    for number, raw in enumerate(handle, start=1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 4:
            yield (
                number,
                BadLine(f"expected 4 columns 'qid iteration docid grade', found {len(parts)}"),
            )
            continue
        yield number, {"qid": parts[0], "docid": parts[2], "grade": parts[3]}


def _xlsx_rows(path: Path, source: RowSource) -> Iterator[tuple[int, Row]]:
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError):
        raise ImportFailed(["the file is not an Excel workbook (.xlsx)"]) from None
    try:
        sheet = workbook.worksheets[0]
        rows = sheet.iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            return
        header = [str(h).strip() if h is not None else "" for h in header]
        total = sheet.max_row or 1
        for number, values in enumerate(rows, start=2):
            source._xlsx_position = (number, total)
            if all(v is None or str(v).strip() == "" for v in values):
                continue
            extra = [v for v in values[len(header) :] if v not in (None, "")]
            if extra:
                yield number, BadLine("values in columns without a header")
                continue
            yield (
                number,
                {
                    column: value
                    for column, value in zip(header, values, strict=False)
                    if column and value is not None and value != ""
                },
            )
    finally:
        workbook.close()


def cell_text(value) -> str:
    """A spreadsheet cell as an id or text: 12.0 → "12", strings stripped of outer space."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()
