"""A run read as a ``RunFrame`` (ids as text, joined by hash) gives the judged rows that
the run coded in byte order (``read_run`` + ``encode``) gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import LineErrors, encode, read_qrels, read_run
from formats.columnar import read_trec_run
from metrics.trec_files import join_frame
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
    in_run, expected = _checked(folder / "qrels", folder / "run")
    if not in_run.any():
        return
    got = join_frame(read_qrels(folder / "qrels"), read_trec_run(folder / "run"), "run")
    assert np.array_equal(got.in_run, in_run)
    for field in ("query", "rank", "grade", "n_ret", "qrel_query", "qrel_grade"):
        assert np.array_equal(getattr(got.rows, field), getattr(expected, field)), field
    assert got.runid == "t"


def test_extra_fields_are_allowed_and_repeats_are_named(tmp_path):
    path = tmp_path / "run"
    path.write_text("q1 Q0 d1 1 2.0 t extra fields\nq1 Q0 d2 2 1.0 u\n")
    assert read_trec_run(path).tag == "u"  # extra fields are allowed, as in trec_eval
    path.write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 2.0 t\nq1 Q0 d1 3 1.0 t\n")
    again, _first = read_trec_run(path, errors=LineErrors()).repeats()
    assert again.size == 0  # left out and reported
    errors = LineErrors()
    kept = read_trec_run(path, errors=errors)
    assert kept.ids.to_list() == ["d1", "d1"] and kept.lines([0, 1]).tolist() == [1, 2]
    assert [str(p) for p in errors.problems()] == [
        "line 3: item 'd1' appears again for query 'q1' (first on line 1)"
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(QID, DOC, SCORE), min_size=1, max_size=60, unique_by=lambda r: r[:2]),
    st.lists(st.tuples(QID, DOC), min_size=0, max_size=40, unique=True),
    st.integers(1, 7),
    st.integers(8, 64),
)
def test_joins_a_block_at_a_time_as_the_whole_run(tmp_path_factory, run, qrels, rows, block_bytes):
    """Block-wise parsing and joining give what the whole file in one block gives, and
    the join finds exactly the (query, id) pairs of the qrels."""
    import polars as pl

    path = tmp_path_factory.mktemp("b") / "run"
    path.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in run))
    small, whole = read_trec_run(path, block_bytes=block_bytes), read_trec_run(path)
    assert [small.qids[c] for c in small.query] == [whole.qids[c] for c in whole.query]
    assert small.ids.to_list() == whole.ids.to_list() == [d for _q, d, _s in run]
    assert small.score.tolist() == whole.score.tolist() == [s for _q, _d, s in run]
    qrel_qids = sorted({q for q, _d in qrels} | {"q1"})
    code = {q: i for i, q in enumerate(qrel_qids)}
    query = np.array([code.get(whole.qids[c].decode(), -1) for c in whole.query], np.int32)
    qrel_query = np.array([code[q] for q, _d in qrels], dtype=np.int64)
    qrel_ids = pl.Series([d for _q, d in qrels], dtype=pl.String)
    got = small.matches(query, qrel_query, qrel_ids, rows=rows)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(got, whole.matches(query, qrel_query, qrel_ids), strict=True)
    )
    position = {pair: j for j, pair in enumerate(qrels)}
    expected = [(i, position[q, d]) for i, (q, d, _s) in enumerate(run) if (q, d) in position]
    assert list(zip(got[0].tolist(), got[1].tolist(), strict=True)) == expected
    names = sorted({d for _q, d in qrels})
    assert small.lookup(names, np.arange(len(names)) + 10, rows=rows).tolist() == [
        names.index(d) + 10 if d in names else -1 for _q, d, _s in run
    ]
