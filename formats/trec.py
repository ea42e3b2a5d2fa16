"""The one reader of TREC-style files, runs and qrels: polars a block at a time, with every
bad line explained by number; and the one writer of qrels lines (``qrels_lines``).

Lines are read as trec_eval 10 reads them: fields separated by any run of ASCII
whitespace (spaces, tabs, CR before LF …); a line whose first non-blank character is
``#`` is a comment; blank lines are skipped; a run line may carry more fields after its
tag (ignored), a qrels line has exactly four. Each block of whole lines (``blocks``: a
path or standard input, plain or gzip) takes the first of three ways that fits:

1. **fast** — one space (or one tab) between fields: polars' CSV reader, each line one
   row; comment and blank rows are dropped by their first field;
2. **normalised** — tabs mixed with spaces, runs of blanks, leading blanks, vertical tabs
   or form feeds: the block's whitespace is made single spaces (C-speed byte
   operations, line breaks kept) and read as in 1;
3. **checked** — anything still irregular (a missing field, a number that is not one,
   bytes that are not UTF-8): the block is split into tokens with numpy, and every bad
   line is named (``line N: reason``) and left out.

All three give the same rows (tests/formats/test_trec.py). Ids stay text (polars
strings): nothing here puts them in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .blocks import BLOCK_BYTES, Block, blocks
from .errors import LineErrors, define, gettext_noop
from .files import not_utf8
from .records import not_number, not_whole
from .rows import TREC_COLUMNS, wrong_columns
from .values import as_token

NOT_FINITE = define(
    "arrays.not_finite", gettext_noop("score must be a finite number, not %(value)s")
)
# The bytes C's isspace (trec_eval's sscanf) and bytes.split() take for whitespace.
SEPARATORS = b" \t\n\r\x0b\x0c"
_IS_SEPARATOR = np.zeros(256, dtype=bool)
_IS_SEPARATOR[list(SEPARATORS)] = True
_BLANKS = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")
# Each layout's kept columns: (qid, id, value) positions, and the value's kind; a
# layout named in EXACT has exactly its columns (qrels), the others may have more; a
# TSV file may open with a header line (BEIR's ``query-id corpus-id score``).
_KEPT = {"trec": (0, 2, 4), "qrels": (0, 2, 3), "tsv_run": (0, 1, 2), "tsv_qrels": (0, 1, 2)}
_VALUE = {"trec": "float", "qrels": "int", "tsv_run": "float", "tsv_qrels": "int"}
EXACT = ("qrels", "tsv_qrels", "qrels_jg", "prefs")


@dataclass(frozen=True)
class Parsed:
    """The good lines of one block: query ids, item ids (polars strings), the value (a
    run's score or a judgment's grade) and each row's line number."""

    qid: object  # polars.Series of str
    item: object
    value: np.ndarray
    line: np.ndarray
    tag: str | None  # the run tag of the block's last good line (runs only)


def read_blocks(
    source: Path | str,
    fmt: str,
    errors: LineErrors,
    *,
    max_bytes: int | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[Parsed]:
    """The good rows of a TREC-style file, a block at a time; bad lines go to ``errors``.
    ``fmt``: "trec" (runs), "qrels", "tsv_run" or "tsv_qrels" (``qid docid score``)."""
    for block in blocks(source, max_bytes=max_bytes, size=block_bytes):
        if block.lines_before == 0 and fmt.startswith("tsv"):
            block = _without_header(block, fmt)
        parsed = _fast(block, fmt) or _normalised(block, fmt) or _checked(block, fmt, errors)
        if parsed is not None and parsed.line.size:
            yield parsed


def _without_header(block: Block, fmt: str) -> Block:
    """A TSV file's first block without its header line (a value that is not a number,
    such as BEIR's ``query-id corpus-id score``), if it has one; the line still counts."""
    first, _, rest = block.text.partition(b"\n")
    fields = first.split()
    if len(fields) != 3:
        return block
    try:
        float(fields[2])
    except ValueError:
        return Block(b"\n" + rest, block.offset, block.lines_before)  # a blank line 1
    return block


def _schema(fmt: str):
    import polars as pl

    names = TREC_COLUMNS[fmt] + (("extra",) if fmt in EXACT else ())
    value = pl.Float64 if _VALUE[fmt] == "float" else pl.Int64
    return pl.Schema({n: (value if i == _KEPT[fmt][2] else pl.String) for i, n in enumerate(names)})


def _frame(text: bytes, separator: str, fmt: str, block: Block) -> Parsed | None:
    """Lines of single-separated fields through polars; None if a line is irregular.

    Every line is one row. A comment row starts with ``#``, a blank row has no field; any
    other row needs each field up to the last kept one (a doubled separator, which would
    shift the fields after it, is ruled out by the caller), a finite score, and no field
    past a qrels line's fourth."""
    import polars as pl

    schema = _schema(fmt)
    names = list(schema)
    width = len(TREC_COLUMNS[fmt])
    qid, item, value = (names[i] for i in _KEPT[fmt])
    needed = [qid, item, value, names[width - 1]]
    bad = pl.any_horizontal(pl.col(n).is_null() for n in needed)
    if _VALUE[fmt] == "float":
        bad = bad | ~pl.col(value).is_finite()
    if fmt in EXACT:
        bad = bad | pl.col("extra").is_not_null()
    # A CR that is not part of a line break splits a field. Counting in bytes first spares
    # a CRLF file (every CR ends a line, which polars reads as a line end) a search of
    # every text column, a quarter of its parse.
    if b"\r" in text and text.count(b"\r") != text.count(b"\r\n"):
        bad = bad | pl.any_horizontal(
            pl.col(n).str.contains("\r", literal=True) for n in names[:width] if n != value
        )
    # A blank line has no field; a line with a leading blank has no qid but an id (it is
    # irregular, not blank). Only columns already read are looked at: reading the unused
    # ones (Q0, rank) costs a tenth of the parse.
    blank = pl.col(qid).is_null() & pl.col(item).is_null()
    skipped = pl.col(qid).str.starts_with("#").fill_null(False) | blank
    try:
        frame = (
            pl.scan_csv(
                text,
                separator=separator,
                has_header=False,
                quote_char=None,
                schema=schema,
                truncate_ragged_lines=True,
                extra_columns="ignore",
                missing_columns="insert",
                ignore_errors=True,
            )
            .select(
                qid,
                item,
                value,
                skipped.alias("skipped"),
                (bad.fill_null(True) & ~skipped).alias("bad"),
            )
            .collect()
        )
    except (pl.exceptions.PolarsError, ValueError):
        return None  # not UTF-8, or a shape polars refuses
    if frame["bad"].any():
        return None
    skipped_rows = frame["skipped"].to_numpy()
    kept = np.flatnonzero(~skipped_rows)
    if kept.size < frame.height:
        frame = frame[kept]
    return Parsed(
        frame[qid],
        frame[item],
        frame[value].to_numpy(),
        kept + block.lines_before + 1,
        last_tag(text) if fmt == "trec" else None,
    )


def last_tag(text: bytes) -> str | None:
    """The run tag (sixth field) of the text's last result line (trec_eval reports the
    file's last as the run's ``runid``); None when no line is a result."""
    end = len(text)
    while end > 0:
        start = text.rfind(b"\n", 0, end - 1) + 1
        fields = text[start:end].split()
        if fields and not fields[0].startswith(b"#"):
            return fields[5].decode(errors="replace") if len(fields) >= 6 else None
        end = start
    return None


def _fast(block: Block, fmt: str) -> Parsed | None:
    text = block.text
    if b"\x0b" in text or b"\x0c" in text:
        return None
    tab, space = b"\t" in text, b" " in text
    if tab and space:
        return None
    separator = b"\t" if tab else b" "
    if separator * 2 in text:
        return None
    return _frame(text, separator.decode(), fmt, block)


def _normalised(block: Block, fmt: str) -> Parsed | None:
    """Every run of whitespace within a line becomes one space, leading ones none."""
    text = block.text.translate(_BLANKS)
    while b"  " in text:
        text = text.replace(b"    ", b" ").replace(b"  ", b" ")
    text = text.replace(b"\n ", b"\n").replace(b" \n", b"\n")
    if text.startswith(b" "):
        text = text[1:]
    return _frame(text, " ", fmt, block)


def _checked(block: Block, fmt: str, errors: LineErrors) -> Parsed | None:
    """The block split into tokens (numpy); every bad line is reported and left out."""
    import polars as pl

    data = block.text
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise not_utf8(block.offset + error.start) from None
    columns, line = checked_columns(data, fmt, errors)
    line = line + block.lines_before
    qid_at, item_at, value_at = _KEPT[fmt]
    kind = _VALUE[fmt]
    value, ok = numbers(columns[value_at], line, kind, TREC_COLUMNS[fmt][value_at], errors)
    if kind == "float":
        finite = np.isfinite(value)
        bad = np.flatnonzero(ok & ~finite)
        errors.add_each(line[bad], lambda i: NOT_FINITE(value=str(float(value[bad[i]]))))
        ok &= finite
    tag = last_tag(data) if fmt == "trec" else None
    return Parsed(
        pl.Series([q.decode() for q in columns[qid_at][ok].tolist()], dtype=pl.String),
        pl.Series([i.decode() for i in columns[item_at][ok].tolist()], dtype=pl.String),
        value[ok],
        line[ok],
        tag,
    )


def read_table(
    source: Path | str, fmt: str, *, max_bytes: int | None = None
) -> tuple[list[np.ndarray], np.ndarray]:
    """Every column of a small TREC-style file of a fixed layout — trec_eval's
    ``qrels_jg`` (``qid group docid grade``) or ``prefs`` (``qid group subgroup docid
    preference``) — as bytes arrays, and each row's line number; through the checked
    way above (``checked_columns``), comments and blank lines skipped. A line with the
    wrong number of fields, or not UTF-8, raises ``FileRejected`` naming it."""
    errors = LineErrors()
    parts, lines = [], []
    for block in blocks(source, max_bytes=max_bytes):
        try:
            block.text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise not_utf8(block.offset + error.start) from None
        columns, line = checked_columns(block.text, fmt, errors)
        parts.append(columns)
        lines.append(line + block.lines_before)
    errors.raise_if_any()
    width = len(TREC_COLUMNS[fmt])
    columns = [
        np.concatenate([p[c] for p in parts]) if parts else np.zeros(0, dtype="S1")
        for c in range(width)
    ]
    return columns, np.concatenate(lines) if lines else np.zeros(0, dtype=np.int64)


def tokens_per_line(data: bytes) -> np.ndarray:
    """Number of whitespace-separated tokens on each ``\\n``-terminated line (numpy).

    ``SEPARATORS`` separate tokens; a token starts where a separator is followed by
    anything else. The count per line is the difference of the number of token starts
    before each line end.
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


def without_comments(data: bytes) -> bytes:
    """``data`` with every comment line blanked (its bytes but the line break become
    spaces), so that line numbers stay those of the file."""
    if not (data.lstrip(b" \t").startswith(b"#") or b"#" in data):
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
) -> tuple[list[np.ndarray], np.ndarray]:
    """Split a whitespace-separated text into its columns (vectorised); comment and blank
    lines are skipped, lines with the wrong number of columns are reported and left out
    (a run line may have more fields after its tag). Every column stays bytes; line
    numbers count from 1 at the start of ``data``."""
    width = len(TREC_COLUMNS[fmt])
    data = without_comments(data)
    counts = tokens_per_line(data)
    good = (counts == width) if fmt in EXACT else (counts >= width)
    bad = np.flatnonzero(~good & (counts != 0))
    errors.add_each(bad + 1, lambda i: wrong_columns(fmt, int(counts[bad[i]])))
    tokens = np.array(data.split(), dtype=np.bytes_)
    first = (np.cumsum(counts) - counts)[good]
    line = np.flatnonzero(good) + 1
    return [tokens[first + c] for c in range(width)], line


def numbers(
    column: np.ndarray, line: np.ndarray, kind: str, name: str, errors: LineErrors
) -> tuple[np.ndarray, np.ndarray]:
    """A bytes column as floats or integers, and which rows parsed; the others are
    reported by line."""
    dtype = np.float64 if kind == "float" else np.int64
    try:
        return column.astype(dtype), np.ones(column.size, dtype=bool)
    except (ValueError, OverflowError):
        pass
    values = np.zeros(column.size, dtype=dtype)
    ok = np.ones(column.size, dtype=bool)
    for position, value in enumerate(column.tolist()):
        try:
            values[position] = float(value) if kind == "float" else int(value)
        except (ValueError, OverflowError):
            ok[position] = False
    bad = np.flatnonzero(~ok)

    def message(i: int) -> str:
        text = column[bad[i]].decode(errors="replace")
        return not_number(name, text) if kind == "float" else not_whole(name, text)

    errors.add_each(line[bad], message)
    return values, ok


def qrels_lines(rows: Iterable[tuple[str, str, int]]) -> list[str]:
    """TREC qrels lines ``qid 0 unit_id grade`` (no line ends) from (qid, unit id, grade)
    rows, one per judged unit (grade 0 included: judged non-relevant), sorted by qid then
    unit id as trec_eval reads them; a unit id holding whitespace is made one token."""
    return [f"{qid} 0 {as_token(unit)} {grade}" for qid, unit, grade in sorted(rows)]
