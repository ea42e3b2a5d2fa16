"""Writing spreadsheets safely: text is always stored as text, never as a formula.

openpyxl stores any string that starts with "=" as a formula; a document or note that
begins with "=HYPERLINK(...)" would then run in the reader's Excel. Every string cell
goes through ``text_row`` so it is typed as a plain string.
"""

from __future__ import annotations

from collections.abc import Iterable

from openpyxl.cell import WriteOnlyCell
from openpyxl.worksheet._write_only import WriteOnlyWorksheet


def text_row(sheet: WriteOnlyWorksheet, values: Iterable) -> list:
    """Cells for a write-only sheet; strings are forced to the string type."""
    cells = []
    for value in values:
        cell = WriteOnlyCell(sheet, value=value)
        if isinstance(value, str):
            cell.data_type = "s"
        cells.append(cell)
    return cells


def append(sheet: WriteOnlyWorksheet, values: Iterable) -> None:
    sheet.append(text_row(sheet, values))
