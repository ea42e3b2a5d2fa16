"""Numbered rows of JSONL, CSV, XLSX and TREC files, streamed, bad lines named.

Every reader yields ``(line_number, row)`` where ``row`` is a dict of column → value, or
a ``BadLine`` saying what is wrong with that line. Files are streamed, never read whole.
"""

from __future__ import annotations

import csv
import json
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import TEXT, BadLine, FileRejected, Problem, define, gettext_noop
from .files import FORMATS, UNKNOWN_FORMAT, open_text
from .values import row_problem
from .workbooks import check_workbook

Row = dict | BadLine
Rows = Iterable[tuple[int, Row]]

# The whitespace-separated TREC formats: their columns, and the ones a row keeps.
TREC_COLUMNS = {
    "trec": ("qid", "Q0", "docid", "rank", "score", "tag"),
    "qrels": ("qid", "iteration", "docid", "grade"),
    "tsv_run": ("qid", "docid", "score"),
    "tsv_qrels": ("qid", "docid", "grade"),
    "qrels_jg": ("qid", "group", "docid", "grade"),
    "prefs": ("qid", "group", "subgroup", "docid", "preference"),
}
TREC_KEPT = {
    "trec": ("qid", "docid", "rank", "score"),
    "qrels": ("qid", "docid", "grade"),
    "tsv_qrels": ("qid", "docid", "grade"),
}


WRONG_COLUMNS = define(
    "rows.wrong_columns", gettext_noop("expected %(n)s columns '%(columns)s', found %(found)s")
)
HEADER_LACKS = define("rows.header_lacks", gettext_noop("the header lacks %(columns)s"))
BAD_CSV_HEADER = define("rows.bad_csv_header", gettext_noop("malformed CSV header (%(error)s)"))
BAD_CSV = define("rows.bad_csv", gettext_noop("malformed CSV (%(error)s)"))
NAMED_TWICE = define(
    "rows.named_twice", gettext_noop("the header names %(columns)s more than once")
)
QUOTE_OPEN = define("rows.quote_open", gettext_noop("a quote opened on this line is never closed"))
BAD_CSV_FROM_HERE = define(
    "rows.bad_csv_from_here",
    gettext_noop("malformed CSV (%(error)s) on line %(at)s; is a quote left open on this line?"),
)
VALUES_VS_HEADER = define(
    "rows.values_vs_header", gettext_noop("%(n)s values but the header has %(columns)s columns")
)
NOT_XLSX = define("rows.not_xlsx", gettext_noop("the file is not an Excel workbook (.xlsx)"))
WORKBOOK_XML = define(
    "rows.workbook_xml", gettext_noop("the workbook's XML cannot be read (%(error)s)")
)
SHEET_XML = define("rows.sheet_xml", gettext_noop("the sheet's XML cannot be read (%(error)s)"))
NO_HEADER = define("rows.no_header", gettext_noop("values in columns without a header"))
BAD_JSON = define("rows.bad_json", gettext_noop("malformed JSON (%(error)s, column %(column)s)"))
NOT_OBJECT = define("rows.not_object", gettext_noop("expected a JSON object {...}"))
JSON_REFUSED = define("rows.json_refused", gettext_noop("malformed JSON (%(reason)s)"))
NESTED_TOO_DEEPLY = define("rows.nested_too_deeply", gettext_noop("nested too deeply"))
NAN_OR_INFINITY = define("rows.nan_or_infinity", gettext_noop("NaN and Infinity are not allowed"))
TOO_MANY_DIGITS = define("rows.too_many_digits", gettext_noop("an integer has too many digits"))


def wrong_columns(fmt: str, found: int) -> Problem:
    """The one wording of a TREC line with the wrong number of columns."""
    columns = TREC_COLUMNS[fmt]
    return WRONG_COLUMNS(n=len(columns), columns=" ".join(columns), found=found)


class RowSource:
    """The numbered rows of one file, with how far through the file the reading is.

    ``required``: columns a CSV or XLSX header must name (else line 1 is reported).
    ``max_chars``: the longest text a cell or JSON value may hold (``values``); every
    row is checked by ``values.row_problem``. ``max_bytes``: what a workbook may unpack
    to (``workbooks``). ``columns`` is the header of a CSV or XLSX
    file once read (a column it names but a row leaves empty was given as empty)."""

    def __init__(
        self,
        path: Path | str,
        fmt: str,
        *,
        required: tuple[str, ...] = (),
        max_chars: int | None = None,
        max_bytes: int | None = None,
    ):
        if fmt not in FORMATS:
            raise FileRejected([UNKNOWN_FORMAT(format=repr(fmt), formats=", ".join(FORMATS))])
        self.path = Path(path)
        self.fmt = fmt
        self.required = required
        self.max_chars = max_chars
        self.max_bytes = max_bytes
        self.columns: tuple[str, ...] = ()
        self._handle = None
        self._xlsx_position = (0, 1)

    def __iter__(self) -> Iterator[tuple[int, Row]]:
        for line, row in self._read():
            if not isinstance(row, BadLine) and (problem := row_problem(row, self.max_chars)):
                row = BadLine(problem)
            yield line, row

    def _read(self) -> Iterator[tuple[int, Row]]:
        if self.fmt == "xlsx":
            yield from self._xlsx_rows()
            return
        if self.fmt == "json":
            yield from _json_map_rows(self.path)
            return
        with open_text(self.path) as handle:
            self._handle = handle
            try:
                if self.fmt == "jsonl":
                    yield from jsonl_rows(handle)
                elif self.fmt == "csv":
                    yield from self._csv_rows(handle)
                elif self.fmt == "tsv":
                    yield from trec_rows(handle, "tsv_qrels")
                else:
                    yield from trec_rows(handle, self.fmt)
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

    def _header_problem(self, header: list[str]) -> BadLine | None:
        """A header naming a column twice (which value would count?) or lacking one."""
        named = [column for column in header if column]
        twice = sorted({column for column in named if named.count(column) > 1})
        if twice:
            return BadLine(NAMED_TWICE(columns=", ".join(map(repr, twice))))
        missing = [column for column in self.required if column not in header]
        self.columns = tuple(named)
        return BadLine(HEADER_LACKS(columns=", ".join(missing))) if missing else None

    def _csv_rows(self, handle) -> Iterator[tuple[int, Row]]:
        # strict: a quote left open is an error, not a field that swallows later rows.
        reader = csv.reader(handle, strict=True)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            yield 1, BadLine(BAD_CSV_HEADER(error=str(error)))
            return
        header = [h.strip() for h in header]
        if problem := self._header_problem(header):
            yield 1, problem
            return
        while True:
            start = reader.line_num + 1  # where the next record begins
            try:
                values = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                yield start, BadLine(_csv_problem(error, start, reader.line_num))
                return
            if not any(v.strip() for v in values):
                continue
            if len(values) > len(header):
                message = VALUES_VS_HEADER(n=len(values), columns=len(header))
                yield reader.line_num, BadLine(message)
                continue
            yield (
                reader.line_num,
                {column: value for column, value in zip(header, values, strict=False) if value},
            )

    def _xlsx_rows(self) -> Iterator[tuple[int, Row]]:
        import openpyxl

        check_workbook(self.path, self.max_bytes)
        # Opened as a file, not by name: the content decided it is a workbook, and
        # openpyxl refuses a name that does not end in .xlsx (an upload called file.zip).
        handle = open(self.path, "rb")  # noqa: SIM115 (closed after the last row)
        try:
            workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        except SyntaxError as error:  # xml.etree's ParseError: an undefined entity…
            handle.close()
            raise FileRejected([WORKBOOK_XML(error=str(error))]) from None
        except (zipfile.BadZipFile, KeyError, OSError, ValueError):
            handle.close()
            raise FileRejected([NOT_XLSX()]) from None
        try:
            sheet = workbook.worksheets[0]
            numbered = _numbered(sheet.iter_rows(values_only=True))
            _, header = next(numbered, (1, None))
            if header is None:
                return
            if isinstance(header, BadLine):
                yield 1, header
                return
            header = [str(h).strip() if h is not None else "" for h in header]
            if problem := self._header_problem(header):
                yield 1, problem
                return
            total = sheet.max_row or 1
            for number, values in numbered:
                self._xlsx_position = (number, total)
                if isinstance(values, BadLine):
                    yield number, values
                    return
                if all(v is None or str(v).strip() == "" for v in values):
                    continue
                if any(v not in (None, "") for v in values[len(header) :]):
                    yield number, BadLine(NO_HEADER())
                    continue
                yield (
                    number,
                    {
                        column: _spreadsheet_value(value)
                        for column, value in zip(header, values, strict=False)
                        if column and value is not None and value != ""
                    },
                )
        finally:
            workbook.close()
            handle.close()


def _csv_problem(error: csv.Error, start: int, at: int) -> Problem:
    """A CSV error, worded for the record it broke (which may span several lines)."""
    if "unexpected end of data" in str(error):
        return QUOTE_OPEN()
    if at > start:
        return BAD_CSV_FROM_HERE(error=str(error), at=at)
    return BAD_CSV(error=str(error))


def read_rows(path: Path | str, fmt: str, **options) -> Iterator[tuple[int, Row]]:
    return iter(RowSource(path, fmt, **options))


def jsonl_rows(lines: Iterable[str]) -> Iterator[tuple[int, Row]]:
    """The one JSON Lines reader: each non-blank line must hold one JSON object."""
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw, parse_constant=_not_a_number)
        except json.JSONDecodeError as error:
            yield number, BadLine(BAD_JSON(error=error.msg, column=error.colno))
            continue
        except (ValueError, RecursionError) as error:
            yield number, BadLine(JSON_REFUSED(reason=json_reason(error)))
            continue
        if not isinstance(row, dict):
            yield number, BadLine(NOT_OBJECT())
            continue
        yield number, row


class _NotANumber(ValueError):
    """NaN or Infinity in JSON text (Python's json takes them; Assay does not)."""


def _not_a_number(name: str):
    raise _NotANumber(name)


def json_reason(error: ValueError | RecursionError) -> Problem:
    """Why the decoder gave up on a JSON text: too deep, NaN, a huge integer."""
    if isinstance(error, RecursionError):
        return NESTED_TOO_DEEPLY()
    if isinstance(error, _NotANumber):
        return NAN_OR_INFINITY()
    if "digits" in str(error):  # int()'s limit of 4,300 digits
        return TOO_MANY_DIGITS()
    return TEXT(text=str(error))


class JsonRefused(ValueError):
    """JSON text that parses but cannot be kept; ``problem`` says why (``json_reason``)."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem


def load_json(text: str):
    """JSON text as Python values; NaN and Infinity refused, and deep nesting and huge
    integers raise ``JsonRefused`` (a ValueError, never a RecursionError)."""
    try:
        return json.loads(text, parse_constant=_not_a_number)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as error:
        raise JsonRefused(json_reason(error)) from None


def trec_rows(lines: Iterable[str], fmt: str) -> Iterator[tuple[int, Row]]:
    """Whitespace-separated TREC run or qrels lines as rows of their kept columns; ``#``
    comment lines are skipped and a run line may carry more fields after its tag."""
    columns, kept = TREC_COLUMNS[fmt], TREC_KEPT[fmt]
    positions = [columns.index(name) for name in kept]
    for number, raw in enumerate(lines, start=1):
        parts = raw.encode().split()  # ASCII whitespace, as C's isspace
        parts = [p.decode() for p in parts]
        if not parts or parts[0].startswith("#"):
            continue
        if number == 1 and fmt.startswith("tsv") and len(parts) == 3 and not _is_number(parts[2]):
            continue  # a header line, such as BEIR's query-id corpus-id score
        if len(parts) < len(columns) or (fmt != "trec" and len(parts) > len(columns)):
            yield number, BadLine(wrong_columns(fmt, len(parts)))
            continue
        yield number, {name: parts[p] for name, p in zip(kept, positions, strict=True)}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _json_map_rows(path: Path) -> Iterator[tuple[int, Row]]:
    """A BEIR-style JSON qrels file ``{qid: {docid: grade}}`` as rows."""
    from .errors import LineErrors
    from .json_maps import id_maps

    errors = LineErrors()
    for line, qid, item, grade in id_maps(path, "grade", errors):
        yield line, {"qid": qid, "docid": item, "grade": grade}
    for problem in errors.problems():
        yield 1, BadLine(problem.params["problem"] if problem.code == "line" else problem)


def _numbered(rows: Iterator[tuple]) -> Iterator[tuple[int, tuple | BadLine]]:
    """A sheet's rows by line number; XML the parser cannot read (an undefined entity, a
    broken tag) ends the sheet with a bad line where it stopped."""
    number = 0
    try:
        for number, values in enumerate(rows, start=1):
            yield number, values
    except (SyntaxError, ValueError, KeyError, OSError, zipfile.BadZipFile) as error:
        yield number + 1, BadLine(SHEET_XML(error=str(error)))


def _spreadsheet_value(value):
    """A spreadsheet has no integer type: a whole-valued number cell is an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
