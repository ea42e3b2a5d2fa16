"""The readers: every format of a run reads to the same arrays, files are checked the same
way, and values mean the same whatever file they come from."""

from __future__ import annotations

import json

import numpy as np
import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import (
    BadLine,
    FileRejected,
    RowSource,
    detect_format,
    read_agreement_labels,
    read_qrels,
    read_run,
    whole_number,
)
from formats.files import first_bad_byte
from formats.rows import HEADER_LACKS

ID = st.text(alphabet=st.sampled_from(list("abz09-_#文àх")), min_size=1, max_size=12).filter(
    lambda i: not i.startswith("#")  # a TREC line starting with # is a comment (trec_eval 10)
)
SCORE = st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3))
RUN = st.lists(st.tuples(ID, ID, SCORE), min_size=1, max_size=30, unique_by=lambda r: r[:2])


def triples(ranked) -> list[tuple[str, str, float]]:
    return sorted(
        (ranked.qids[q].decode(), ranked.items[i].decode(), s)
        for q, i, s in zip(ranked.query, ranked.item, ranked.score.tolist(), strict=True)
    )


@settings(max_examples=40, deadline=None)
@given(RUN)
def test_a_run_reads_the_same_from_every_format(tmp_path_factory, rows):
    folder = tmp_path_factory.mktemp("run")
    trec = folder / "r.trec"
    trec.write_text("".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, d, s in rows), encoding="utf-8")
    blank = folder / "blank.trec"  # a blank line: the checked path
    blank.write_text("\n" + trec.read_text(encoding="utf-8"), encoding="utf-8")
    jsonl = folder / "r.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"qid": q, "retrieved": [d], "scores": [s]}, ensure_ascii=False) + "\n"
            for q, d, s in rows
        ),
        encoding="utf-8",
    )
    csv = folder / "r.csv"
    csv.write_text("qid,docid,score\n" + "".join(f"{q},{d},{s!r}\n" for q, d, s in rows))
    xlsx = folder / "r.xlsx"
    book = openpyxl.Workbook()
    book.active.append(["qid", "docid", "score"])
    for row in rows:
        book.active.append(list(row))
    book.save(xlsx)
    expected = sorted(rows)
    for path in (trec, blank, jsonl, csv, xlsx):
        assert triples(read_run(path)) == expected, path.name


def test_ids_with_bytes_numpy_takes_for_spaces_are_read_whole(tmp_path):
    """à is C3 A0 and Cyrillic х is D1 85 in UTF-8; numpy's reader, reading Latin-1,
    splits at A0 and 85, so these files must not take its path."""
    path = tmp_path / "r.trec"
    path.write_text("q1 Q0 dà 1 2.5 t\nq1 Q0 dх 2 1.5 t\nqх Q0 à 1 1 t\n", encoding="utf-8")
    ranked = read_run(path)
    assert triples(ranked) == [("q1", "dà", 2.5), ("q1", "dх", 1.5), ("qх", "à", 1.0)]
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 dà 2\n", encoding="utf-8")
    assert read_qrels(qrels).items.tolist() == ["dà".encode()]


def test_not_utf8_names_the_offset_in_the_file(tmp_path):
    """The offset is the file's, not the position in the last block a reader decoded."""
    path = tmp_path / "docs.csv"
    prefix = b"doc_id,text\n" + b"1,abcdefgh\n" * 20_000
    path.write_bytes(prefix + b"2,caf\xe9\n")
    with pytest.raises(FileRejected) as raised:
        list(RowSource(path, "csv"))
    offset = len(prefix) + 5
    assert raised.value.errors == [
        f"the file is not UTF-8 text (bad byte at offset {offset}); save it as UTF-8"
    ]
    assert first_bad_byte(path, block=7) == offset
    run = tmp_path / "r.trec"
    run.write_bytes(b"q1 Q0 d1 1 1 t\nq1 Q0 caf\xe9 2 1 t\n")
    with pytest.raises(FileRejected, match="bad byte at offset 24"):
        read_run(run)


def test_file_checks(tmp_path):
    with pytest.raises(FileRejected, match=r"no such file: absent\.trec"):
        read_run(tmp_path / "absent.trec")
    empty = tmp_path / "e.trec"
    empty.write_bytes(b"")
    with pytest.raises(FileRejected) as raised:
        read_run(empty)
    assert raised.value.errors == ["the file is empty"] and raised.value.source == "e.trec"
    big = tmp_path / "b.trec"
    big.write_text("q1 Q0 d1 1 1 t\n")
    with pytest.raises(FileRejected, match="the file is 15 bytes, over the limit of 10 bytes"):
        read_run(big, max_bytes=10)
    with pytest.raises(FileRejected, match="a run cannot be read from qrels"):
        read_run(big, "qrels")


def test_formats_come_from_the_name_else_the_callers_default():
    assert detect_format("a.JSONL", default="csv") == "jsonl"
    assert detect_format("a.run", default="jsonl") == "trec"
    assert detect_format("a.txt", default="qrels") == "qrels"
    assert detect_format("a.txt", default="csv") == "csv"
    assert detect_format("a.csv", "xlsx", default="csv") == "xlsx"
    with pytest.raises(FileRejected, match="unknown format 'parquet'"):
        detect_format("a.csv", "parquet", default="csv")


@given(st.integers(-(10**12), 10**12))
def test_whole_numbers_are_integers_written_as_such(value):
    assert whole_number(value) == whole_number(str(value)) == whole_number(f" {value} ") == value
    assert whole_number(float(value)) is None  # 2.0 is not written as a whole number
    assert whole_number(f"{value}.5") is None


def test_spreadsheet_cells_and_headers(tmp_path):
    path = tmp_path / "labels.xlsx"
    book = openpyxl.Workbook()
    book.active.append(["annotator", "item", "grade"])
    book.active.append(["ann", 7.0, 2.0])  # a spreadsheet has no integer type
    book.active.append(["bob", 7, 3])
    book.save(path)
    assert next(row for _, row in RowSource(path, "xlsx")) == {
        "annotator": "ann",
        "item": 7,
        "grade": 2,
    }
    rows = read_agreement_labels(path, [0, 1, 2, 3])
    assert [(r["line"], r["item"], r["grade"]) for r in rows] == [(2, "7", 2), (3, "7", 3)]
    lacking = tmp_path / "l.csv"
    lacking.write_text("who,item,grade\nann,x,1\n")
    assert list(RowSource(lacking, "csv", required=("annotator", "item"))) == [
        (1, BadLine(HEADER_LACKS(columns="annotator")))
    ]


def test_qrels_of_every_format_and_their_bad_lines(tmp_path):
    gold = tmp_path / "g.jsonl"
    gold.write_text(
        '{"qid": "1", "gold_evidence": ["a", "b"], "rel_map": {"b": 3}}\n'
        '{"qid": "2", "rel_map": {"c": 2.0}}\n'
        '{"qid": "1", "rel_map": {"a": 0}}\n'
    )
    with pytest.raises(FileRejected) as raised:
        read_qrels(gold)
    assert raised.value.errors == [
        "line 2: grade of 'c' must be a whole number, not 2.0",
        "line 3: item 'a' appears again for query '1' (first on line 1)",
    ]
    table = tmp_path / "q.csv"
    table.write_text("qid,docid,grade\n1,a,1\n1,b,x\n")
    with pytest.raises(FileRejected, match="line 3: grade must be a whole number, not 'x'"):
        read_qrels(table)
    table.write_text("qid,docid,grade\n1,a,1\n2,b,3\n")
    judged = read_qrels(table)
    assert judged.grade.tolist() == [1, 3] and np.array_equal(judged.line, [2, 3])
