"""The columnar reader (polars) and the checked reader give the same judged rows; files
that are not regular go to the checked reader."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import encode, read_qrels, read_run
from formats.columnar import read_regular_run
from metrics.trec_files import _judge_regular
from numerics.measures.ranking import judged_rows

QID = st.sampled_from(["q1", "q2", "q10", "q9", "x"])  # x is in no qrels
DOC = st.text(alphabet=st.sampled_from(list("ab9Z-文")), min_size=1, max_size=4)
SCORE = st.integers(0, 6).map(lambda s: s / 2)  # ties on purpose


def _checked(qrels_path, run_path):
    judged, ranked = read_qrels(qrels_path), read_run(run_path)
    e = encode(judged, ranked)
    rows = judged_rows(
        run_query=e.run_query,
        run_item=e.run_item,
        run_score=e.run_score,
        qrel_query=e.qrel_query,
        qrel_item=e.qrel_item,
        qrel_grade=e.qrel_grade,
        n_queries=len(e.qids),
    )
    return e.in_run, rows


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(QID, DOC, SCORE), min_size=1, max_size=60, unique_by=lambda r: r[:2]),
    st.lists(
        st.tuples(QID, DOC, st.integers(-1, 3)), min_size=1, max_size=40, unique_by=lambda r: r[:2]
    ),
    st.booleans(),
    st.sampled_from([" ", "\t"]),
)
def test_columnar_and_checked_readers_give_the_same_rows(
    tmp_path_factory, run, qrels, ranked, separator
):
    folder = tmp_path_factory.mktemp("c")
    qrels = [r for r in qrels if r[0] != "x"] or [("q1", "a", 1)]
    if ranked:  # as retrievers write runs: grouped by query, best first
        run = sorted(run, key=lambda r: (r[0], -r[2]))
    (folder / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    text = "".join(separator.join([q, "Q0", d, "1", str(s), "t"]) + "\n" for q, d, s in run)
    (folder / "run").write_text(text)
    assert read_regular_run(folder / "run") is not None
    in_run, expected = _checked(folder / "qrels", folder / "run")
    if not in_run.any():
        return
    got = _judge_regular(read_qrels(folder / "qrels"), folder / "run")
    assert np.array_equal(got.in_run, in_run)
    for field in ("query", "rank", "grade", "n_ret", "qrel_query", "qrel_grade"):
        assert np.array_equal(getattr(got.rows, field), getattr(expected, field)), field
    assert got.runid == "t"


def test_irregular_files_take_the_checked_reader(tmp_path):
    path = tmp_path / "run"
    for text in (
        "q1 Q0 d1 1 2.0 t\n# comment\nq1 Q0 d2 2 1.0 t\n",
        "q1 Q0 d1 1 2.0 t\n\nq1 Q0 d2 2 1.0 t\n",
        "q1 Q0  d1 1 2.0 t\n",  # a run of spaces
        "q1\tQ0 d1 1 2.0 t\n",  # tabs and spaces
        "q1 Q0 d1 1 2.0\n",  # no tag
        "q1 Q0 d1 1 nan t\n",
        "q1 Q0 d1 1 high t\n",
        "\ufeffq1 Q0 d1 1 2.0 t\n",
        " q1 Q0 d1 1 2.0 t\n",
    ):
        path.write_text(text)
        assert read_regular_run(path) is None, text
    path.write_text("q1 Q0 d1 1 2.0 t extra fields\nq1 Q0 d2 2 1.0 u\n")
    assert read_regular_run(path).tag == "u"  # extra fields are allowed, as in trec_eval
    path.write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 2.0 t\nq1 Q0 d1 3 1.0 t\n")
    assert read_regular_run(path).repeated()  # the checked reader names the line
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n")
    assert _judge_regular(read_qrels(qrels), path) is None
