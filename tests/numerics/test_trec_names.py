"""trec_eval's names over the registry: the same values as the ir_measures names, for all
inputs; counts summed on the ``all`` line; trec_eval's layout."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.measures.ranking import judged_rows
from numerics.measures.trec_eval import (
    columns_for,
    expand_measures,
    measure_column,
    measure_columns_of,
    report_lines,
    summarise,
    values,
)

# trec_eval name → the ir_measures name of the same measure.
PAIRS = {
    "map": "AP",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "infAP": "infAP",
    "ndcg": "nDCG",
    "set_P": "SetP",
    "set_recall": "SetR",
    "set_map": "SetAP",
    "set_F": "SetF",
    "set_F.0.5": "SetF(beta=0.5)",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "num_nonrel_judged_ret": "NumNonRelJudgedRet",
    "P_5": "P@5",
    "recall_10": "R@10",
    "ndcg_cut_3": "nDCG@3",
    "map_cut_2": "AP@2",
    "success_1": "Success@1",
    "iprec_at_recall_0.30": "IPrec@0.3",
    "iprec_at_recall_1.00": "IPrec@1",
}


@st.composite
def collections(draw):
    """Judged rows of a random collection: up to 6 queries × 12 items, grades −1..4,
    scores with ties, some queries unretrieved."""
    n_queries = draw(st.integers(1, 6))
    run, qrels = [], []
    for q in range(n_queries):
        items = draw(st.lists(st.integers(0, 11), unique=True, max_size=10))
        scores = draw(st.lists(st.integers(0, 4), min_size=len(items), max_size=len(items)))
        run += [(q, i, float(s)) for i, s in zip(items, scores, strict=True)]
        judged = draw(st.lists(st.integers(0, 11), unique=True, max_size=8))
        grades = draw(st.lists(st.integers(-1, 4), min_size=len(judged), max_size=len(judged)))
        qrels += [(q, i, g) for i, g in zip(judged, grades, strict=True)]
    columns = list(zip(*run, strict=True)) if run else [(), (), ()]
    judgments = list(zip(*qrels, strict=True)) if qrels else [(), (), ()]
    return judged_rows(
        run_query=np.array(columns[0], dtype=np.int64),
        run_item=np.array(columns[1], dtype=np.int64),
        run_score=np.array(columns[2], dtype=float),
        qrel_query=np.array(judgments[0], dtype=np.int64),
        qrel_item=np.array(judgments[1], dtype=np.int64),
        qrel_grade=np.array(judgments[2], dtype=np.int64),
        n_queries=n_queries,
    )


@settings(max_examples=150, deadline=None)
@given(collections(), st.integers(1, 3))
def test_trec_eval_names_and_ir_measures_names_give_identical_values(rows, rel):
    for trec_name, ir_name in PAIRS.items():
        (trec,) = columns_for(trec_name)
        (ir,) = columns_for(ir_name)
        ours = values(rows, [trec], rel)[trec.name]
        theirs = values(rows, [ir], rel)[ir.name]
        assert np.array_equal(ours, theirs), (trec_name, ir_name)
        kept = np.ones(rows.n_queries, dtype=bool)
        assert summarise(trec, ours, kept) == summarise(ir, theirs, kept)


@settings(max_examples=100, deadline=None)
@given(collections(), st.integers(1, 3), st.data())
def test_counts_are_summed_on_the_all_line(rows, rel, data):
    columns = measure_columns_of(["all_trec"])
    kept = np.array(
        data.draw(st.lists(st.booleans(), min_size=rows.n_queries, max_size=rows.n_queries)),
        dtype=bool,
    )
    qids = [f"q{i}" for i in range(rows.n_queries)]
    lines = [
        line.split("\t")
        for line in report_lines(
            columns, values(rows, columns, rel), qids, kept, runid="r", queries=True
        )
    ]
    per_query = [(n.strip(), q, v) for n, q, v in lines if q != "all"]
    summary = {n.strip(): v for n, q, v in lines if q == "all"}
    for count in ("num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"):
        assert int(summary[count]) == sum(int(v) for n, _, v in per_query if n == count)
    assert int(summary["num_q"]) == int(kept.sum())
    assert {q for _, q, _ in per_query} == {qids[i] for i in np.flatnonzero(kept)}
    assert summary["runid"] == "r"
    assert all(len(n) == max(22, len(n.rstrip())) for n, _, _ in lines)  # %-22s


def test_layout_order_and_names():
    names = [
        c.name
        for c in measure_columns_of(
            ["ndcg_cut.10", "map", "iprec_at_recall.0.5", "Rprec_mult.2", "P.20,5", "set_F.0.5"]
        )
    ]
    # trec_eval's order (measures.c), not the command line's; cutoffs sorted.
    assert names == [
        "map",
        "iprec_at_recall_0.50",
        "P_5",
        "P_20",
        "Rprec_mult_2.00",
        "ndcg_cut_10",
        "set_F_0.5",
    ]
    assert [c.name for c in measure_columns_of(["P.5", "P.10"])] == ["P_5"]  # the first wins
    with pytest.raises(ValueError, match="unsupported trec_eval measure 'yaap'; supported: runid"):
        measure_columns_of(["yaap"])


@settings(max_examples=100, deadline=None)
@given(collections(), st.integers(1, 3))
def test_ndcg_with_its_gains_given_as_the_grades_is_ndcg(rows, rel):
    plain, given_gains = measure_columns_of(["ndcg"])[0], measure_columns_of(["ndcg.1=1,2=2"])[0]
    assert given_gains.name == "ndcg_1=1,2=2"
    ours = values(rows, [plain, given_gains], rel)
    assert np.allclose(ours["ndcg"], ours["ndcg_1=1,2=2"], rtol=1e-12, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(collections(), st.integers(1, 3))
def test_ranked_list_measures_by_their_definitions(rows, rel):
    columns = measure_columns_of(["relative_P.1,3", "unj.2", "set_relative_P", "binG", "utility"])
    ours = values(rows, columns, rel)
    start = np.r_[0, np.cumsum(rows.n_ret)]
    for q in range(rows.n_queries):
        ranked = np.full(int(rows.n_ret[q]), -1)
        mine = rows.query == q
        ranked[rows.rank[mine] - 1] = np.where(rows.grade[mine] < 0, -2, rows.grade[mine])
        assert ranked.size == start[q + 1] - start[q]
        big_r = int(np.count_nonzero((rows.qrel_query == q) & (rows.qrel_grade >= rel)))
        relevant = ranked >= rel
        for k in (1, 3):
            expected = relevant[:k].sum() / min(k, big_r) if big_r else 0.0
            assert ours[f"relative_P_{k}"][q] == pytest.approx(expected)
        assert ours["unj_2"][q] == pytest.approx((ranked[:2] < 0).sum() / 2)
        expected = relevant.sum() / min(ranked.size, big_r) if big_r and ranked.size else 0.0
        assert ours["set_relative_P"][q] == pytest.approx(expected)
        above = np.cumsum(~relevant) - ~relevant  # not relevant, above each result
        expected = (1 / np.log2(2 + above[relevant])).sum() / big_r if big_r else 0.0
        assert ours["binG"][q] == pytest.approx(expected)
        hits = int(relevant.sum())
        expected = hits - (ranked.size - hits) if ranked.size else 0.0
        assert ours["utility"][q] == pytest.approx(expected)


def test_new_trec_eval_names_are_one_vocabulary():
    for name in ("binG", "G", "utility", "rbp", "rbp_resid", "ndcg_rel", "Rndcg"):
        assert expand_measures(name) == [name]
    assert expand_measures("relative_P.5,10") == ["relative_P_5", "relative_P_10"]
    assert measure_column("unj_10").levels == (10,)
    assert measure_column("ndcg.1=3,2=9").pairs == (("1", 3.0), ("2", 9.0))
    assert expand_measures("P_avgjg_5") == ["P_avgjg_5"]
    with pytest.raises(ValueError, match=r"only manage\.py trec_eval prints it"):
        expand_measures("relstring")
    with pytest.raises(ValueError, match="summary only"):
        expand_measures("gm_bpref")
    with pytest.raises(ValueError, match=r"only manage\.py trec_eval -R prefs computes it"):
        expand_measures("prefs_simp")


def test_new_trec_eval_measures_evaluate_through_the_shared_evaluator():
    from numerics.measures import evaluate

    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"b": 3.0, "a": 2.0, "x": 1.0}}
    names = ["binG", "rbp", "relative_P_2", "G", "ndcg_rel", "utility", "unj_5", "P_avgjg_2"]
    got = evaluate(qrels, run, names)["per_query"]["q"]
    # ranked: b (0), a (1), x (not judged); R = 2
    assert got["binG"] == pytest.approx((1 / np.log2(3)) / 2)  # one non-relevant above a
    assert got["rbp"] == pytest.approx(0.1 * 0.9)  # a at rank 2: (1 − p) · p
    assert got["relative_P_2"] == pytest.approx(1 / 2)
    assert got["utility"] == pytest.approx(1 - 2)  # one relevant, two others retrieved
    assert got["unj_5"] == pytest.approx(1 / 5)
    assert got["P_avgjg_2"] == pytest.approx(1 / 2)
    assert 0 < got["G"] < 1 and 0 < got["ndcg_rel"] < 1
