"""The one TREC reader: its three ways through a block (fast, normalised, checked) give
the rows and line numbers a plain split of each line gives, whatever the whitespace,
comments, blank lines, CRLF, gzip, standard input or block size."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import FileRejected, LineErrors, factorize, read_qrels, read_run
from formats import trec as trec_module
from formats.columnar import read_trec_run
from formats.files import detect_format

ROOT = Path(__file__).resolve().parents[2]
ID = st.text(alphabet=st.sampled_from(list("abcXYZ019-_.文档éàх\x1c")), min_size=1, max_size=12)
SCORE = st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr)
BLANK = st.sampled_from([" ", "\t", "  ", " \t", "\t\t", " \r", "\r"])  # a lone CR splits too
NOISE = st.sampled_from(["", "# a comment: made by x y z\n", "\n", "   \n", "#\n"])


def reference(text: str, width: int) -> list[tuple[int, list[str]]]:
    """(line, fields) of the result lines, by splitting each line as trec_eval does."""
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        fields = [f.decode() for f in line.encode().split()]  # ASCII whitespace, as C's
        if fields and not fields[0].startswith("#"):
            rows.append((number, fields[:width]))
    return rows


def lines_of(draw_rows, separators, noise, crlf) -> str:
    out = []
    for fields, separator, before in zip(draw_rows, separators, noise, strict=True):
        out.append(before + separator.join(fields) + ("\r\n" if crlf else "\n"))
    return "".join(out)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(ID, ID, st.integers(1, 99), SCORE, st.booleans()),
        min_size=1,
        max_size=30,
        unique_by=lambda r: r[:2],
    ),
    st.data(),
    st.booleans(),
    st.sampled_from(["fast", "normalised", "checked"]),
    st.integers(16, 200),
)
def test_every_way_reads_what_a_split_of_each_line_reads(
    tmp_path_factory, monkeypatch_module, rows, data, crlf, way, block_bytes
):
    fields = [
        [q, "Q0", d, str(r), s, "tag"] + (["extra"] if more else []) for q, d, r, s, more in rows
    ]
    separators = data.draw(st.lists(BLANK, min_size=len(rows), max_size=len(rows)))
    noise = data.draw(st.lists(NOISE, min_size=len(rows), max_size=len(rows)))
    text = lines_of(fields, separators, noise, crlf)
    path = tmp_path_factory.mktemp("t") / "run"
    path.write_bytes(text.encode())
    with monkeypatch_module.context() as patch:
        if way != "fast":
            patch.setattr(trec_module, "_fast", lambda block, fmt: None)
        if way == "checked":
            patch.setattr(trec_module, "_normalised", lambda block, fmt: None)
        frame = read_trec_run(path, block_bytes=block_bytes)
    expected = reference(text, 6)
    assert frame.lines(np.arange(frame.query.size)).tolist() == [n for n, _f in expected]
    assert [frame.qids[c].decode() for c in frame.query] == [f[0] for _n, f in expected]
    assert frame.ids.to_list() == [f[2] for _n, f in expected]
    assert frame.score.tolist() == [float(f[4]) for _n, f in expected]
    assert frame.tag == "tag"


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_gzip_is_known_by_its_bytes_and_stdin_reads_like_a_file(tmp_path):
    text = "# made by hand\r\nq1 Q0 d1 1 2.5 t\r\n\r\nq1\tQ0  d2 2 1.5   u\r\n"
    plain, packed = tmp_path / "run.trec", tmp_path / "run.any"  # no .gz in the name
    plain.write_bytes(text.encode())
    packed.write_bytes(gzip.compress(text.encode()) + gzip.compress(b"q2 Q0 d3 1 1 v\n"))
    a, b = read_trec_run(plain), read_trec_run(packed)
    assert a.ids.to_list() == ["d1", "d2"] and b.ids.to_list() == ["d1", "d2", "d3"]
    assert a.lines([0, 1]).tolist() == [2, 4] and b.lines([2]).tolist() == [5]
    assert (a.tag, b.tag) == ("u", "v")
    script = (
        "from formats.columnar import read_trec_run; f = read_trec_run('-');"
        " print(f.ids.to_list(), f.tag)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=packed.read_bytes(), capture_output=True, cwd=ROOT
    )
    assert done.stdout.decode().strip() == "['d1', 'd2', 'd3'] v", done.stderr


def test_bad_lines_are_named_by_their_line_in_the_file(tmp_path):
    path = tmp_path / "run"
    path.write_bytes(
        b"# header\nq1 Q0 d1 1 2.5 t\n\nq1 Q0 d2 2\nq1 Q0 d3 3 high t\nq1 Q0 d4 4 inf t\n"
        b"q1 Q0 d1 5 1 t\n"
    )
    with pytest.raises(FileRejected) as failure:
        read_trec_run(path)
    assert failure.value.errors == [
        "line 4: expected 6 columns 'qid Q0 docid rank score tag', found 4",
        "line 5: score 'high' is not a number",
        "line 6: score must be a finite number, not inf",
        "line 7: item 'd1' appears again for query 'q1' (first on line 2)",
    ]
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(b"q1 Q0 d1 1 2.5 t\n" * 1000)[:-30])
    with pytest.raises(FileRejected, match="gzip"):
        read_trec_run(broken)
    latin = tmp_path / "latin"
    latin.write_bytes(b"q1 Q0 d\xe9 1 2.5 t\n")
    with pytest.raises(FileRejected, match="offset 7"):
        read_trec_run(latin)


def test_a_gzip_bomb_stops_at_the_limit(tmp_path):
    path = tmp_path / "bomb"
    path.write_bytes(gzip.compress(b"q1 Q0 d1 1 2.5 t\n" * 200_000))
    with pytest.raises(FileRejected, match="inflates"):
        read_trec_run(path, max_bytes=100_000)


def test_the_format_comes_from_the_content_the_name_is_a_hint(tmp_path):
    cases = {
        "qrels.trec": ("q1 0 d1 1\n", "qrels"),
        "2019qrels-pass.txt": ("q1 0 d1 1\n", "qrels"),
        "test.qrels": ("q1 0 d1 1\n", "qrels"),
        "run.txt": ("# made by x\nq1 Q0 d1 1 2.5 t\n", "trec"),
        "test.tsv": ("query-id\tcorpus-id\tscore\nq1\td1\t1\n", "tsv"),
        "run.json": ('{"q1": {"d1": 2.5}}', "json"),
        "gold.json": ('{"qid": "q1", "rel_map": {"d1": 2}}\n', "jsonl"),
        "labels.txt": ("qid,docid,grade\nq1,d1,2\n", "csv"),
    }
    for name, (text, fmt) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        allowed = ("qrels", "trec", "tsv", "json", "jsonl", "csv")
        assert detect_format(path, default="trec", allowed=allowed) == fmt, name
    judged = read_qrels(tmp_path / "qrels.trec")
    assert judged.qids.tolist() == [b"q1"] and judged.grade.tolist() == [1]


def test_beir_qrels_and_runs_in_tsv_and_json(tmp_path):
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n")
    judged = read_qrels(qrels)
    assert [i.decode() for i in judged.items[judged.item]] == ["d1", "d2"]
    assert judged.line.tolist() == [2, 3]
    run = tmp_path / "run.tsv"
    run.write_text("q1\td1\t2.5\nq1\td2\t1.5\n")
    assert read_run(run).score.tolist() == [2.5, 1.5]
    beir = tmp_path / "results.json"
    beir.write_text('{"q1": {"d1": 2.5, "d2": 1.5}}')
    ranked = read_run(beir)
    assert [i.decode() for i in ranked.items[ranked.item]] == ["d1", "d2"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"q1": {"d1": "high"}}')
    with pytest.raises(FileRejected, match="high"):
        read_run(bad)


@given(
    st.lists(
        st.binary(min_size=0, max_size=40).filter(lambda b: not b.endswith(b"\0")),
        min_size=1,
        max_size=30,
    )
)
def test_factorize_equals_numpy_unique_with_runs_of_equal_ids(values):
    ids = np.array([v for v in values for _ in range(5)], dtype=np.bytes_)  # runs of 5
    distinct, codes = factorize(ids)
    expected, inverse = np.unique(ids, return_inverse=True)
    assert distinct.tolist() == expected.tolist()
    assert codes.tolist() == inverse.ravel().tolist()


def test_the_one_qrels_writer_sorts_by_qid_then_unit_and_reads_back(tmp_path):
    rows = [("q2", "d1", 0), ("q10", "a b", 2), ("q1", "d2", 3), ("q1", "d10", 1)]
    lines = trec_module.qrels_lines(rows)
    # Sorted as text (trec_eval sorts ids as strings); a whitespace id made one token.
    assert lines == ["q1 0 d10 1", "q1 0 d2 3", "q10 0 a_b 2", "q2 0 d1 0"]
    path = tmp_path / "qrels"
    path.write_text("\n".join(lines) + "\n")
    assert read_qrels(path).grade.tolist() == [1, 3, 2, 0]


def test_qrels_lines_are_exactly_four_fields(tmp_path):
    path = tmp_path / "qrels"
    path.write_text("q2 0 d9 3\n\n# note\nq1 0 文档 1 extra\nq1 0 d1 1.5\n")
    errors = LineErrors()
    judged = read_qrels(path, errors=errors)
    assert judged.grade.tolist() == [3]
    assert [str(p) for p in errors.problems()] == [
        "line 4: expected 4 columns 'qid iteration docid grade', found 5",
        "line 5: grade must be a whole number, not '1.5'",
    ]
