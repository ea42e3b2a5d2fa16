"""TREC files: numpy's C reader (regular files) and the checked path give the same arrays."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import LineErrors, factorize, read_qrels, read_run
from formats.trec import KINDS, checked_columns, parsed_columns

ID = st.text(
    alphabet=st.sampled_from(list("abcXYZ019-_.#文档éàх\x1c")), min_size=1, max_size=50
).filter(
    lambda i: not i.startswith("#")  # a TREC line starting with # is a comment (trec_eval 10)
)
SCORE = st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr)
LINE = st.tuples(ID, ID, st.integers(1, 999), SCORE)


def _write(tmp_path, name, lines, blank):
    text = "\n".join(lines) + "\n"
    if blank:  # a blank line sends the file down the checked path
        text = "\n" + text
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


@settings(max_examples=60, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=40, unique_by=lambda r: (r[0], r[1])))
def test_both_readers_agree_on_runs(tmp_path_factory, rows):
    folder = tmp_path_factory.mktemp("run")
    lines = [f"{q} Q0 {d} {rank} {score} tag" for q, d, rank, score in rows]
    fast = read_run(_write(folder, "fast.trec", lines, blank=False))
    checked = read_run(_write(folder, "checked.trec", lines, blank=True))
    assert fast.qids.tolist() == checked.qids.tolist()
    assert fast.items.tolist() == checked.items.tolist()
    assert np.array_equal(fast.query, checked.query)
    assert np.array_equal(fast.item, checked.item)
    assert fast.score.tolist() == checked.score.tolist() == [float(r[3]) for r in rows]
    assert np.array_equal(fast.line + 1, checked.line)  # one blank line shifts the numbers
    assert [i.decode() for i in fast.items[fast.item]] == [r[1] for r in rows]


def test_the_c_reader_takes_regular_files_and_widens_long_ids(tmp_path):
    long_id = "d" * 300
    path = tmp_path / "run.trec"
    data = f"q1 Q0 {long_id} 1 2.5 t\nq1 Q0 文档 2 1.5 t\n".encode()
    path.write_bytes(data)
    columns, line = parsed_columns(path, data, KINDS["trec"])
    assert [c.decode() for c in columns[2]] == [long_id, "文档"]
    assert columns[4].tolist() == [2.5, 1.5] and line.tolist() == [1, 2]
    checked, _ = checked_columns(data, "trec", LineErrors())
    assert checked[2].tolist() == columns[2].tolist()


def test_irregular_files_go_down_the_checked_path(tmp_path):
    for text in (
        "q1 Q0 d1 1 2.5 t\n\nq1 Q0 d2 2 1 t\n",
        "q1 Q0 d1 1 2.5 t extra\n",
        "\ufeffq 0 d 1\n",
        "q1 Q0 dà 1 2.5 t\n",  # C3 A0: numpy's reader would split at the A0 byte
        "q1 Q0 х 1 2.5 t\n",  # D1 85: likewise at 85
    ):
        path = tmp_path / "f.trec"
        path.write_bytes(text.encode())
        assert parsed_columns(path, path.read_bytes(), ("id",) * 6) is None


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


def test_qrels_read_by_either_path_agree(tmp_path):
    lines = ["q2 0 d9 3", "q1 0 文档 1", "q1 0 d1 0"]
    fast = read_qrels(_write(tmp_path, "a.txt", lines, blank=False))
    checked = read_qrels(_write(tmp_path, "b.txt", lines, blank=True))
    assert fast.qids.tolist() == checked.qids.tolist()
    assert fast.grade.tolist() == checked.grade.tolist() == [3, 1, 0]
