"""TREC run and qrels columns as numpy arrays: numpy's C reader, else a checked split.

The files are read as trec_eval 10 reads them: fields are separated by any run of
whitespace; a line whose first non-blank character is ``#`` is a comment; blank lines
are skipped; a run line may carry more fields after its tag (ignored). Regular files
take ``np.loadtxt`` with fixed-width byte columns. Anything irregular — a bad line, a
blank or comment line (line numbers would shift), extra fields, a byte-order mark —
takes the checked path: the file is split into tokens once (vectorised), lines with the
wrong number of columns are named and left out, and the rest are sliced into columns.
Both paths give the same arrays (tests/formats/test_trec.py). Ids stay UTF-8 bytes so
that sorting them gives trec_eval's ``strcmp`` order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import LineErrors, Problem
from .files import BOM
from .records import not_number, not_whole
from .rows import TREC_COLUMNS, wrong_columns

# The bytes that separate tokens: ASCII whitespace, as C's isspace (trec_eval's sscanf)
# and bytes.split() see it.
SEPARATORS = b" \t\n\r\x0b\x0c"
_IS_SEPARATOR = np.zeros(256, dtype=bool)
_IS_SEPARATOR[list(SEPARATORS)] = True
# Latin-1 characters that np.loadtxt also takes for whitespace; in UTF-8 text 0x85 and
# 0xA0 are continuation bytes (à is C3 A0, Cyrillic х is D1 85), so a file holding any
# of these takes the checked path rather than have an id cut short.
_LOADTXT_ALSO_SPLITS = b"\x1c\x1d\x1e\x1f\x85\xa0"

# Where a comment line may start (after a line break and optional blanks).
_COMMENT_STARTS = (b"\n#", b"\n #", b"\n\t#")

# What each column holds: "id" (bytes, kept whole), "float", "int", or "skip" (unused).
KINDS = {
    "trec": ("id", "skip", "id", "skip", "float", "skip"),
    "qrels": ("id", "skip", "id", "int"),
}


def trec_columns(
    path: Path, data: bytes, fmt: str, errors: LineErrors
) -> tuple[list[np.ndarray | None], np.ndarray]:
    """The columns of a TREC ``fmt`` file (None for unused ones) and each row's line
    number; numbers are parsed, and rows with a bad line are left out and reported."""
    kinds = KINDS[fmt]
    parsed = parsed_columns(path, data, kinds)
    if parsed is None:
        parsed = checked_columns(data, fmt, errors)
    columns, line = parsed
    ok = np.ones(line.size, dtype=bool)
    for position, kind in enumerate(kinds):
        if kind == "int" or (kind == "float" and columns[position].dtype.kind == "S"):
            name = TREC_COLUMNS[fmt][position]
            columns[position], good = numbers(columns[position], line, kind, name, errors)
            ok &= good
    if not ok.all():
        columns = [None if c is None else c[ok] for c in columns]
        line = line[ok]
    return columns, line


def tokens_per_line(data: bytes) -> np.ndarray:
    """Number of whitespace-separated tokens on each ``\\n``-terminated line (numpy).

    ``SEPARATORS`` separate tokens; a token starts where a separator is followed by
    anything else. The count per line is the difference
    of the number of token starts before each line end.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size == 0:
        return np.zeros(0, dtype=np.int64)
    separator = _IS_SEPARATOR[raw]
    starts = ~separator
    starts[1:] &= separator[:-1]
    token_starts = np.flatnonzero(starts)
    line_ends = np.flatnonzero(raw == 10)
    if line_ends.size == 0 or line_ends[-1] != raw.size - 1:
        line_ends = np.r_[line_ends, raw.size]
    return np.diff(np.r_[0, np.searchsorted(token_starts, line_ends)]).astype(np.int64)


def parsed_columns(
    path: Path, data: bytes, kinds: tuple[str, ...]
) -> tuple[list[np.ndarray | None], np.ndarray] | None:
    """Columns of a regular file through numpy's C reader (``np.loadtxt``), or None.

    Text is read as Latin-1, which maps every byte to one character and back, so UTF-8
    ids come out as their exact bytes. Fixed-width id columns that might have been cut
    are read again wider. Anything irregular returns None (the caller takes the checked
    path, which names every bad line); so does a file whose numbers do not parse.
    """
    if (
        not data.strip()
        or data.startswith(BOM)
        or data.lstrip(b" \t").startswith(b"#")
        or any(b in data for b in _LOADTXT_ALSO_SPLITS)
        or any(c in data for c in _COMMENT_STARTS)
    ):
        return None
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    width = 32
    while width <= 512:
        dtype = [
            (f"c{i}", {"id": f"S{width}", "float": "f8", "int": "i8", "skip": "S1"}[kind])
            for i, kind in enumerate(kinds)
        ]
        try:
            table = np.loadtxt(path, dtype=dtype, comments=None, encoding="latin-1", ndmin=1)
        except ValueError:
            return None
        if table.size != n_lines:
            return None
        columns = [
            None if kind == "skip" else np.ascontiguousarray(table[f"c{i}"])
            for i, kind in enumerate(kinds)
        ]
        del table
        if not any(_may_be_cut(c, width) for c, k in zip(columns, kinds, strict=True) if k == "id"):
            return columns, np.arange(1, n_lines + 1)
        width *= 4
    return None


def _may_be_cut(column: np.ndarray, width: int) -> bool:
    """Whether a fixed-width bytes column has a value filling its whole width."""
    if column.size == 0:
        return False
    last_bytes = column.view(np.uint8).reshape(column.size, width)[:, -1]
    return bool(last_bytes.any())


def without_comments(data: bytes) -> bytes:
    """``data`` with every comment line blanked (its bytes but the line break become
    spaces), so that line numbers stay those of the file."""
    if not (data.lstrip(b" \t").startswith(b"#") or any(c in data for c in _COMMENT_STARTS)):
        return data
    raw = np.frombuffer(data, dtype=np.uint8)
    line_start = np.r_[0, np.flatnonzero(raw == 10) + 1]
    line_start = line_start[line_start < raw.size]
    token_start = np.flatnonzero(~_IS_SEPARATOR[raw])
    first = np.searchsorted(token_start, line_start)
    usable = first < token_start.size
    first_char = token_start[first[usable]]
    line_end = np.r_[line_start[1:], raw.size][usable]
    comment = (raw[first_char] == ord("#")) & (first_char < line_end)
    starts, ends = first_char[comment], line_end[comment]
    marks = np.zeros(raw.size + 1, dtype=np.int64)
    np.add.at(marks, starts, 1)
    np.add.at(marks, ends, -1)
    blank = np.cumsum(marks[:-1]) > 0
    blank &= raw != 10
    cleaned = raw.copy()
    cleaned[blank] = ord(" ")
    return cleaned.tobytes()


def checked_columns(
    data: bytes, fmt: str, errors: LineErrors
) -> tuple[list[np.ndarray | None], np.ndarray]:
    """Split a whitespace-separated file into its columns (vectorised); comment lines are
    skipped, lines with the wrong number of columns are reported and left out (a run
    line may have more fields after its tag). Every column stays bytes."""
    width = len(TREC_COLUMNS[fmt])
    data = without_comments(data)
    counts = tokens_per_line(data)
    good = (counts >= width) if fmt == "trec" else (counts == width)
    bad = np.flatnonzero(~good & (counts != 0))
    errors.add_each(bad + 1, lambda i: wrong_columns(fmt, int(counts[bad[i]])))
    tokens = np.array(data.split(), dtype=np.bytes_)
    first = (np.cumsum(counts) - counts)[good]
    line = np.flatnonzero(good) + 1
    kinds = KINDS[fmt]
    return [None if kinds[c] == "skip" else tokens[first + c] for c in range(width)], line


def numbers(
    column: np.ndarray, line: np.ndarray, kind: str, name: str, errors: LineErrors
) -> tuple[np.ndarray, np.ndarray]:
    """A bytes column as floats or integers, and which rows parsed; the others are
    reported by line."""
    dtype = np.float64 if kind == "float" else np.int64
    try:
        return column.astype(dtype), np.ones(column.size, dtype=bool)
    except ValueError:
        pass
    values = np.zeros(column.size, dtype=dtype)
    ok = np.ones(column.size, dtype=bool)
    for position, value in enumerate(column.tolist()):
        try:
            values[position] = float(value) if kind == "float" else int(value)
        except ValueError:
            ok[position] = False
    bad = np.flatnonzero(~ok)

    def message(i: int) -> Problem:
        text = column[bad[i]].decode(errors="replace")
        return not_number(name, text) if kind == "float" else not_whole(name, text)

    errors.add_each(line[bad], message)
    return values, ok


def last_tag(data: bytes) -> str:
    """The run tag (sixth field) of the last result line, which trec_eval reports as the
    run's ``runid``; "" when that line has no tag."""
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        fields = data[start:end].split()
        if fields and not fields[0].startswith(b"#"):
            return fields[5].decode(errors="replace") if len(fields) >= 6 else ""
        end = start
    return ""
