"""Files that lie or break the readers: each is a line-numbered error and writes nothing.

CSV with an open quote or a repeated column, documents without text, reversed spans, ids
with whitespace, long CSV fields, deep or huge JSON, NaN, lone surrogates, NUL and other
control characters, XLSX zip bombs and XML entities — and exports that survive control
characters in older data.
"""

from __future__ import annotations

import io
import zipfile

import openpyxl
import pytest
from django.utils import translation

from annotator.importing import run_import
from annotator.problems import shown
from formats import FileRejected
from metrics.models import Run
from metrics.run_import import import_run
from tests.test_importing import failure, jsonl, write, xlsx
from web.spreadsheets import xlsx_bytes

pytestmark = pytest.mark.django_db

CLOSE_MESSAGE = "line 2: a quote opened on this line is never closed"


@pytest.fixture
def project(personas):
    return personas["project"]


@pytest.fixture
def document(project, tmp_path):
    run_import(
        "documents", project, write(tmp_path / "d.jsonl", jsonl({"doc_id": "d1", "text": "x" * 40}))
    )
    return project.documents.get()


# --- 1. CSV that lies --------------------------------------------------------------------


def test_csv_quote_left_open_is_an_error_naming_its_line(project, tmp_path):
    path = write(tmp_path / "d.csv", 'doc_id,text\nd1,"hello\nd2,world\nd3,more\n')
    assert failure("documents", project, path) == [CLOSE_MESSAGE]


def test_csv_quote_closed_rows_later_is_an_error_naming_where_it_opened(project, tmp_path):
    path = write(tmp_path / "d.csv", 'doc_id,text\nd1,"hello\nd2,world\nd3,"more"\n')
    (message,) = failure("documents", project, path)
    assert message.startswith("line 2: malformed CSV (")
    assert "on line 4; is a quote left open on this line?" in message


def test_csv_quoted_field_over_several_lines_stays_allowed(project, tmp_path):
    path = write(tmp_path / "d.csv", 'doc_id,text\nd1,"two\nlines"\nd2,plain\n')
    assert run_import("documents", project, path).created == 2
    assert project.documents.get(doc_id="d1").text == "two\nlines"


def test_csv_header_naming_a_column_twice_is_an_error(project, tmp_path):
    path = write(tmp_path / "d.csv", "doc_id,text,text\nd1,first,second\n")
    assert failure("documents", project, path) == ["line 1: the header names 'text' more than once"]


def test_xlsx_header_naming_a_column_twice_is_an_error(project, tmp_path):
    path = xlsx(tmp_path / "q.xlsx", ["qid", "text", "qid"], ["q1", "wings", "q2"])
    assert failure("queries", project, path) == ["line 1: the header names 'qid' more than once"]


def test_document_without_text_or_pages_is_an_error(project, tmp_path):
    path = write(
        tmp_path / "d.jsonl",
        jsonl({"doc_id": "d1", "text": "fine"}, {"doc_id": "d2", "title": "No body"}),
    )
    assert failure("documents", project, path) == [
        "line 2: a document needs a text or a pages field (text may be empty)"
    ]
    csv_path = write(tmp_path / "d.csv", "doc_id,title\nd1,No body\n")
    assert failure("documents", project, csv_path) == [
        "line 2: a document needs a text or a pages field (text may be empty)"
    ]


def test_explicitly_empty_text_is_an_empty_document(project, tmp_path):
    path = write(tmp_path / "d.jsonl", jsonl({"doc_id": "995", "text": ""}))
    assert run_import("documents", project, path).created == 1
    csv_path = write(tmp_path / "d.csv", "doc_id,title,text\n996,Empty,\n")
    assert run_import("documents", project, csv_path).created == 1
    assert set(project.documents.values_list("text", flat=True)) == {""}


def test_reversed_chunk_span_says_end_before_start(project, tmp_path, document):
    path = write(
        tmp_path / "c.jsonl", jsonl({"chunk_id": "c1", "doc_id": "d1", "start": 10, "end": 5})
    )
    assert failure("chunks", project, path, options={"chunking": "w"}) == [
        "line 1: span [10, 5): end before start"
    ]


def test_reversed_passage_label_says_end_before_start(project, tmp_path, document):
    run_import("queries", project, write(tmp_path / "q.jsonl", jsonl({"qid": "q1", "text": "t"})))
    path = write(
        tmp_path / "l.jsonl",
        jsonl({"qid": "q1", "doc_id": "d1", "start": 9, "end": 3, "grade": 2}),
    )
    options = {"annotator": "assessors", "level": "passage"}
    assert failure("labels", project, path, options=options) == [
        "line 1: passage [9, 3): end before start"
    ]


# --- 6. ids with whitespace ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name", "content", "message"),
    [
        (
            "documents",
            "d.jsonl",
            jsonl({"doc_id": "a b", "text": "x"}),
            "line 1: doc_id 'a b' contains whitespace, which ids cannot hold",
        ),
        (
            "queries",
            "q.csv",
            "qid,text\nq1,fine\nq\t2,tab inside\n",
            "line 3: qid 'q\\t2' contains whitespace, which ids cannot hold",
        ),
    ],
)
def test_ids_with_whitespace_are_refused(project, tmp_path, kind, name, content, message):
    assert failure(kind, project, write(tmp_path / name, content)) == [message]


def test_xlsx_document_id_with_whitespace_is_refused(project, tmp_path):
    path = xlsx(tmp_path / "d.xlsx", ["doc_id", "text"], ["ok", "x"], ["not ok", "y"])
    assert failure("documents", project, path) == [
        "line 3: doc_id 'not ok' contains whitespace, which ids cannot hold"
    ]


def test_chunk_id_with_whitespace_is_refused(project, tmp_path, document):
    path = write(
        tmp_path / "c.jsonl", jsonl({"chunk_id": "c 1", "doc_id": "d1", "start": 0, "end": 5})
    )
    assert failure("chunks", project, path, options={"chunking": "w"}) == [
        "line 1: chunk_id 'c 1' contains whitespace, which ids cannot hold"
    ]


def test_label_ids_with_whitespace_are_refused(project, tmp_path, document):
    path = write(tmp_path / "l.csv", "qid,docid,grade\nq 1,d1,2\n")
    options = {"annotator": "assessors", "level": "document"}
    assert failure("labels", project, path, options=options) == [
        "line 2: qid 'q 1' contains whitespace, which ids cannot hold"
    ]


def test_run_ids_with_whitespace_are_refused(project, tmp_path, document):
    run_import("queries", project, write(tmp_path / "q.jsonl", jsonl({"qid": "q1", "text": "t"})))
    path = write(tmp_path / "r.jsonl", jsonl({"qid": "q1", "retrieved": ["d1", "d 2"]}))
    with pytest.raises(FileRejected) as raised:
        import_run(project, path, name="r", keep_known=True)
    assert raised.value.errors == ["line 1: id 'd 2' contains whitespace, which ids cannot hold"]
    assert not Run.objects.exists()


# --- 7. long CSV fields -------------------------------------------------------------------


def test_csv_field_longer_than_the_csv_modules_default_cap(project, tmp_path):
    text = "word " * 40_000  # 200,000 characters, over csv's default 131,072
    path = write(tmp_path / "d.csv", f"doc_id,text\nlong,{text}\n")
    assert run_import("documents", project, path).created == 1
    assert len(project.documents.get().text) == len(text)


def test_field_over_the_document_limit_is_refused_saying_the_limit(project, tmp_path, settings):
    settings.ASSAY_MAX_DOCUMENT_CHARS = 100
    path = write(tmp_path / "d.csv", f"doc_id,text\nd1,{'x' * 101}\n")
    assert failure("documents", project, path) == [
        "line 2: text is 101 characters long, over the limit of 100"
    ]


# --- 4. malformed input ---------------------------------------------------------------------


def test_json_nested_100000_deep(project, tmp_path):
    line = '{"doc_id": "d1", "text": "x", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    path = write(tmp_path / "d.jsonl", line)
    assert failure("documents", project, path) == ["line 1: malformed JSON (nested too deeply)"]


def test_json_nested_deeper_than_the_limit_but_parseable(project, tmp_path):
    line = '{"doc_id": "d1", "text": "x", "metadata": {"a": ' + "[" * 150 + "]" * 150 + "}}\n"
    path = write(tmp_path / "d.jsonl", line)
    assert failure("documents", project, path) == [
        "line 1: metadata is nested deeper than 100 levels"
    ]


def test_csv_cell_json_nested_100000_deep(project, tmp_path):
    path = write(tmp_path / "d.csv", f"doc_id,text,pages\nd1,,{'[' * 100_000}{']' * 100_000}\n")
    assert failure("documents", project, path) == [
        "line 2: pages is not valid JSON (nested too deeply)"
    ]


def test_integer_over_4300_digits(project, tmp_path):
    path = write(tmp_path / "d.jsonl", '{"doc_id": "d1", "text": "x", "n": ' + "7" * 5000 + "}\n")
    assert failure("documents", project, path) == [
        "line 1: malformed JSON (an integer has too many digits)"
    ]


def test_offset_written_with_thousands_of_digits(project, tmp_path, document):
    path = write(tmp_path / "c.csv", f"chunk_id,doc_id,start,end\nc1,d1,0,{'9' * 5000}\n")
    (message,) = failure("chunks", project, path, options={"chunking": "w"})
    assert message.startswith("line 2: end must be a whole number, not '9999")
    assert "(5,002 characters)" in message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a\\ud800b", "line 1: text holds a lone surrogate U+D800, which is not Unicode text"),
        (
            "a\\u0000b",
            "line 1: text holds the control character U+0000, which cannot be stored or exported",
        ),
    ],
)
def test_lone_surrogates_and_nul_are_refused(project, tmp_path, text, message):
    path = write(tmp_path / "d.jsonl", '{"doc_id": "d1", "text": "' + text + '"}\n')
    assert failure("documents", project, path) == [message]


def test_nan_and_infinity_in_metadata_are_refused(project, tmp_path):
    path = write(
        tmp_path / "d.jsonl",
        '{"doc_id": "d1", "text": "x", "metadata": {"score": NaN}}\n'
        '{"doc_id": "d2", "text": "x", "weight": -Infinity}\n',
    )
    assert failure("documents", project, path) == [
        "line 1: malformed JSON (NaN and Infinity are not allowed)",
        "line 2: malformed JSON (NaN and Infinity are not allowed)",
    ]


def _rewritten(path, part: str, change) -> None:
    """Replace one part of a zip (an .xlsx) by ``change(old bytes)``."""
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    parts[part] = change(parts[part])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


def _inline_cell_sheet(text: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        '<dimension ref="A1:B2"/><sheetData>'
        '<row r="1"><c r="A1" t="inlineStr"><is><t>doc_id</t></is></c>'
        '<c r="B1" t="inlineStr"><is><t>text</t></is></c></row>'
        '<row r="2"><c r="A2" t="inlineStr"><is><t>d1</t></is></c>'
        f'<c r="B2" t="inlineStr"><is><t>{text}</t></is></c></row>'
        "</sheetData></worksheet>"
    ).encode()


def test_xlsx_undefined_entity_is_a_line_numbered_error(project, tmp_path):
    path = xlsx(tmp_path / "d.xlsx", ["doc_id", "text"], ["d1", "x"])
    _rewritten(path, "xl/worksheets/sheet1.xml", lambda _: _inline_cell_sheet("&undefined;"))
    (message,) = failure("documents", project, path)
    assert message.startswith("line 2: the sheet's XML cannot be read (undefined entity")


def test_xlsx_entity_declarations_are_refused_before_parsing(project, tmp_path):
    path = xlsx(tmp_path / "d.xlsx", ["doc_id", "text"], ["d1", "x"])
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
    )
    _rewritten(
        path,
        "xl/worksheets/sheet1.xml",
        lambda _: laughs + _inline_cell_sheet("&lol2;").split(b"?>", 1)[1],
    )
    assert failure("documents", project, path) == [
        "the workbook part xl/worksheets/sheet1.xml declares a DOCTYPE or an XML entity, "
        "which spreadsheets do not use; save the file again from a spreadsheet program"
    ]


# --- 3. zip bombs ---------------------------------------------------------------------------


def test_xlsx_part_inflating_too_much_is_refused_before_parsing(project, tmp_path):
    # openpyxl writes at most Excel's 32,767 characters a cell; a hand-made file holds more.
    path = xlsx(tmp_path / "d.xlsx", ["doc_id", "text"], ["d1", "x"])
    _rewritten(path, "xl/worksheets/sheet1.xml", lambda _: _inline_cell_sheet("a" * 3_000_000))
    (message,) = failure("documents", project, path)
    assert message.startswith("the workbook part xl/worksheets/sheet1.xml inflates ")
    assert message.endswith(" times, over the limit of 200 times (a zip bomb?)")


def test_xlsx_unpacking_beyond_the_upload_limit_is_refused(project, tmp_path, settings):
    rows = [[f"d{i}", f"text {i} " + "lorem ipsum " * 20] for i in range(300)]
    path = xlsx(tmp_path / "d.xlsx", ["doc_id", "text"], *rows)
    settings.ASSAY_MAX_UPLOAD_BYTES = path.stat().st_size + 1
    (message,) = failure("documents", project, path)
    assert message.startswith("the workbook unpacks to ")
    assert message.endswith(f" bytes, over the limit of {path.stat().st_size + 1:,} bytes")


def test_xlsx_with_too_many_parts_is_refused(project, tmp_path, monkeypatch):
    monkeypatch.setattr("formats.workbooks.MAX_ENTRIES", 3)
    path = xlsx(tmp_path / "d.xlsx", ["doc_id", "text"], ["d1", "x"])
    (message,) = failure("documents", project, path)
    assert message.startswith("the workbook holds ") and message.endswith(
        " parts, over the limit of 3"
    )


def test_xlsx_cell_over_the_limit_is_refused_saying_the_limit(project, tmp_path, settings):
    settings.ASSAY_MAX_DOCUMENT_CHARS = 50
    path = xlsx(tmp_path / "d.xlsx", ["doc_id", "text"], ["d1", "y" * 60])
    assert failure("documents", project, path) == [
        "line 2: text is 60 characters long, over the limit of 50"
    ]


# --- 5. control characters: refused at import, cleaned at export -----------------------------


def test_control_character_is_refused_at_import(project, tmp_path):
    path = write(tmp_path / "q.csv", "qid,text\nq1,fine\nq2,bad \x01 char\n")
    assert failure("queries", project, path) == [
        "line 3: text holds the control character U+0001, which cannot be stored or exported"
    ]


def test_control_character_in_metadata_is_refused_at_import(project, tmp_path):
    path = write(
        tmp_path / "d.jsonl", jsonl({"doc_id": "d1", "text": "x", "metadata": {"k": ["\x1b"]}})
    )
    assert failure("documents", project, path) == [
        "line 1: metadata holds the control character U+001B, which cannot be stored or exported"
    ]


def test_xlsx_export_cleans_control_characters():
    data = xlsx_bytes({"s": (["note"], [["before\x01after"], ["tab\tand\nnewline"]])})
    cells = [row[0] for row in openpyxl.load_workbook(io.BytesIO(data)).active.values]
    assert cells == ["note", "before\ufffdafter", "tab\tand\nnewline"]


def test_json_in_cells_is_parsed_by_the_same_strict_rules(project, tmp_path):
    path = write(tmp_path / "d.csv", 'doc_id,text,metadata\nd1,x,"{""a"": NaN}"\n')
    assert "line 2: metadata is not valid JSON (NaN and Infinity are not allowed)" in failure(
        "documents", project, path
    )


# --- every new wording is shown in the user's language ------------------------------------


def _shown_in_chinese():
    from annotator.importing import common, corpus
    from formats import rows, values, workbooks
    from formats.errors import LINE

    return [
        (LINE(line=2, problem=rows.QUOTE_OPEN()), CLOSE_MESSAGE, "第 2 行：本行开始的引号没有闭合"),
        (
            LINE(line=1, problem=rows.NAMED_TWICE(columns="'text'")),
            "line 1: the header names 'text' more than once",
            "第 1 行：表头多次出现 'text'",
        ),
        (
            LINE(line=2, problem=corpus.NO_TEXT()),
            "line 2: a document needs a text or a pages field (text may be empty)",
            "第 2 行：文档需要 text 或 pages 字段（text 可以为空）",
        ),
        (
            LINE(line=1, problem=corpus.SPAN_REVERSED(start=10, end=5)),
            "line 1: span [10, 5): end before start",
            "第 1 行：区间 [10, 5)：结束位置在开始位置之前",
        ),
        (
            LINE(line=1, problem=values.ID_WHITESPACE(name="doc_id", value="'a b'")),
            "line 1: doc_id 'a b' contains whitespace, which ids cannot hold",
            "第 1 行：doc_id 'a b' 含有空白字符，id 不能含空白",
        ),
        (
            LINE(line=2, problem=values.TEXT_TOO_LONG(name="text", n="101", limit="100")),
            "line 2: text is 101 characters long, over the limit of 100",
            "第 2 行：text 长 101 个字符，超过上限 100",
        ),
        (
            LINE(line=1, problem=values.text_problem("a\x00", "text")),
            "line 1: text holds the control character U+0000, which cannot be stored or exported",
            "第 1 行：text 含有控制字符 U+0000，无法存储或导出",
        ),
        (
            LINE(line=1, problem=values.text_problem("\ud800", "text")),
            "line 1: text holds a lone surrogate U+D800, which is not Unicode text",
            "第 1 行：text 含有孤立的代理码位 U+D800，不是有效的 Unicode 文本",
        ),
        (
            LINE(line=1, problem=rows.JSON_REFUSED(reason=rows.NESTED_TOO_DEEPLY())),
            "line 1: malformed JSON (nested too deeply)",
            "第 1 行：JSON 无法接受（嵌套过深）",
        ),
        (
            LINE(
                line=2,
                problem=common.NOT_JSON_BECAUSE(name="metadata", reason=rows.NAN_OR_INFINITY()),
            ),
            "line 2: metadata is not valid JSON (NaN and Infinity are not allowed)",
            "第 2 行：metadata 不是有效的 JSON（不允许 NaN 和 Infinity）",
        ),
        (
            workbooks.INFLATES(part="xl/worksheets/sheet1.xml", ratio="1,000", limit=200),
            "the workbook part xl/worksheets/sheet1.xml inflates 1,000 times, over the limit of "
            "200 times (a zip bomb?)",
            "工作簿部件 xl/worksheets/sheet1.xml 解压后膨胀 1,000 倍，"
            "超过上限 200 倍（压缩炸弹？）",
        ),
        (
            LINE(line=2, problem=rows.SHEET_XML(error="undefined entity &x;: line 1, column 9")),
            "line 2: the sheet's XML cannot be read (undefined entity &x;: line 1, column 9)",
            "第 2 行：无法读取工作表的 XML（undefined entity &x;: line 1, column 9）",
        ),
    ]


@pytest.mark.parametrize("case", range(12))
def test_problems_are_shown_in_chinese(case):
    """Each problem is said in English by the command line and in Chinese on a page."""
    cases = _shown_in_chinese()
    assert len(cases) == 12
    problem, english, chinese = cases[case]
    assert str(problem) == english
    with translation.override("zh-hans"):
        assert shown(problem) == chinese
