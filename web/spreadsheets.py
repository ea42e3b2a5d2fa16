"""Writing CSV and spreadsheets safely: text is always stored as text, never as a formula.

openpyxl stores any string that starts with "=" as a formula; a document or note that
begins with "=HYPERLINK(...)" would then run in the reader's Excel. Every string cell
goes through ``text_row`` so it is typed as a plain string.

Imports refuse control characters (``formats.values``), but labels' notes and data from
before that rule may hold some; openpyxl refuses them (IllegalCharacterError), so export
replaces each with U+FFFD rather than fail the download.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import TYPE_CHECKING

# openpyxl is imported where a workbook is written: importing it takes 0.2-0.3 s, which
# every process's first request paid through the URLconf.
if TYPE_CHECKING:
    from openpyxl.worksheet._write_only import WriteOnlyWorksheet


def text_row(sheet: WriteOnlyWorksheet, values: Iterable) -> list:
    """Cells for a write-only sheet; strings are forced to the string type."""
    from openpyxl.cell import WriteOnlyCell

    cells = []
    for value in values:
        if isinstance(value, str):
            value = clean_text(value)
        cell = WriteOnlyCell(sheet, value=value)
        if isinstance(value, str):
            cell.data_type = "s"
        cells.append(cell)
    return cells


def clean_text(value: str) -> str:
    """Text a spreadsheet can hold: control characters become U+FFFD."""
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    return ILLEGAL_CHARACTERS_RE.sub("\ufffd", value)


def append(sheet: WriteOnlyWorksheet, values: Iterable) -> None:
    sheet.append(text_row(sheet, values))


def header(sheet: WriteOnlyWorksheet, values: Iterable, widths: Iterable[float] = ()) -> None:
    """A write-only sheet's first row: bold and frozen (it stays in view when scrolling),
    with column widths in characters. Call it before any other row: a write-only sheet
    writes its layout with the first row."""
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    for index, width in enumerate(widths, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width
    sheet.freeze_panes = "A2"
    cells = text_row(sheet, values)
    for cell in cells:
        cell.font = Font(bold=True)
    sheet.append(cells)


def _csv_cell(value):
    # A text cell that starts like a formula is prefixed so spreadsheets show it as text.
    return f"'{value}" if isinstance(value, str) and value[:1] and value[:1] in "=+-@" else value


def csv_text(header: Iterable, rows: Iterable[Iterable]) -> str:
    """A CSV file (header first) whose text cells never run as formulas."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        writer.writerow([_csv_cell(value) for value in row])
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, tuple[Iterable, Iterable[Iterable]]]) -> bytes:
    """An .xlsx workbook with one sheet per entry {name: (header, rows)}; text stays text."""
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    for name, (header, rows) in sheets.items():
        sheet = book.create_sheet(name)
        append(sheet, header)
        for row in rows:
            append(sheet, row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
