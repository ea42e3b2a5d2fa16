import io

from openpyxl import Workbook, load_workbook

from web.spreadsheets import append


def test_text_that_looks_like_a_formula_stays_text():
    book = Workbook(write_only=True)
    sheet = book.create_sheet("s")
    append(sheet, ['=HYPERLINK("http://x","y")', 3, "plain", None, "end"])
    out = io.BytesIO()
    book.save(out)
    cells = next(load_workbook(io.BytesIO(out.getvalue())).active.iter_rows())
    assert cells[0].data_type == "s"
    assert cells[0].value == '=HYPERLINK("http://x","y")'
    assert [c.value for c in cells[1:]] == [3, "plain", None, "end"]
