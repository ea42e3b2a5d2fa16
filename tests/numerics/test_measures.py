"""Measures: worked examples, and every trec measure against pytrec_eval on random data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formats import encode, read_qrels, read_run
from numerics.measures import (
    MEASURE_NAMES,
    DuplicateResult,
    evaluate,
    evaluate_arrays,
    evaluate_index,
    index_run,
    parse_measure,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "demo" / "cranfield"
CUTOFFS = (1, 3, 5, 10)

# Our name -> pytrec_eval's name, for every trec measure and cutoff.
PYTREC = {
    "AP": "map",
    "RR": "recip_rank",
    "Rprec": "Rprec",
    "Bpref": "bpref",
    "NumRel": "num_rel",
    "NumRet": "num_ret",
    "NumRelRet": "num_rel_ret",
    "NumNonRelJudgedRet": "num_nonrel_judged_ret",
    "infAP": "infAP",
    "SetP": "set_P",
    "SetR": "set_recall",
    "SetAP": "set_map",
    "SetF": "set_F",
}
for _k in CUTOFFS:
    PYTREC |= {
        f"P@{_k}": f"P_{_k}",
        f"R@{_k}": f"recall_{_k}",
        f"nDCG@{_k}": f"ndcg_cut_{_k}",
        f"AP@{_k}": f"map_cut_{_k}",
        f"Success@{_k}": f"success_{_k}",
    }


def pytrec(qrels, run, names, rel=1):
    cutoffs = ",".join(str(k) for k in CUTOFFS)
    wanted = set()
    for name in names:
        measure = PYTREC[name]
        base, _, k = measure.rpartition("_")
        wanted.add(f"{base}.{cutoffs}" if k.isdigit() and base != "" else measure)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, wanted, relevance_level=rel)
    return evaluator.evaluate(run)


# --- worked examples -------------------------------------------------------------------


def test_worked_example_by_hand():
    # Relevant: a (grade 3), c (grade 1), z (grade 2, never retrieved); b judged 0.
    qrels = {"q": {"a": 3, "b": 0, "c": 1, "z": 2}}
    run = {"q": {"a": 0.9, "b": 0.8, "x": 0.7, "c": 0.6}}
    names = [
        "P@2",
        "R@4",
        "AP",
        "RR",
        "Rprec",
        "Success@1",
        "F1@4",
        "Judged@4",
        "nDCG@2",
        "P(rel=2)@4",
        "NumRel",
        "NumRelRet",
        "Bpref",
    ]
    got = evaluate(qrels, run, names)["per_query"]["q"]
    assert got["P@2"] == 0.5
    assert got["R@4"] == pytest.approx(2 / 3)
    assert got["AP"] == pytest.approx((1 / 1 + 2 / 4) / 3)  # R counts the unretrieved z
    assert got["RR"] == 1.0 and got["Success@1"] == 1.0
    assert got["Rprec"] == pytest.approx(1 / 3)
    assert got["F1@4"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert got["Judged@4"] == 0.75  # x is not in the gold set
    ideal = 3 + 2 / np.log2(3)
    assert got["nDCG@2"] == pytest.approx(3 / ideal)
    assert got["P(rel=2)@4"] == 0.25 and got["NumRel"] == 3 and got["NumRelRet"] == 2
    # bpref: a has no judged non-relevant above it (1); c has b above: 1 - 1/min(3, 1) = 0.
    assert got["Bpref"] == pytest.approx(1 / 3)


def test_the_other_conventions_by_name():
    qrels = {"q": {"a": 1, "d": 1}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    got = evaluate(
        qrels,
        run,
        [
            "AP(convention='retrieved')",
            "RR(convention='granular')@4",
            "Hit(convention='granular')@1",
            "P(convention='retrieved')@10",
            "P@10",
            "nDCG(convention='min')@10",
        ],
    )["per_query"]["q"]
    assert got["AP(convention='retrieved')"] == 0.75  # (1/1 + 2/4) / 2
    assert got["RR(convention='granular')@4"] == pytest.approx((1 + 1 / 4) / 2)
    assert got["Hit(convention='granular')@1"] == 0.5
    assert got["P(convention='retrieved')@10"] == 0.5 and got["P@10"] == 0.2
    assert got["nDCG(convention='min')@10"] == pytest.approx(
        (1 + 1 / np.log2(5)) / (1 + 1 / np.log2(3))
    )


def test_ties_are_broken_by_id_descending_and_the_rank_column_is_ignored():
    qrels = {"q": {"b": 1}}
    # a and b tie; trec_eval puts b (larger id) first whatever order the file has.
    assert evaluate(qrels, {"q": {"a": 1.0, "b": 1.0}}, ["RR"])["mean"]["RR"] == 1.0
    assert evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["RR"])["mean"]["RR"] == 0.5


def test_means_count_missing_queries_as_zero_unless_asked():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q9": {"b": 1.0}}
    assert evaluate(qrels, run, ["RR"])["mean"]["RR"] == 0.5
    only = evaluate(qrels, run, ["RR"], run_queries_only=True)
    assert only["mean"]["RR"] == 1.0 and list(only["per_query"]) == ["q1"]


def test_negative_grades_are_pooled_but_not_judged():
    qrels = {"q": {"a": -1, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "c": 2.0, "b": 1.0}}
    got = evaluate(qrels, run, ["NumRel", "Bpref", "Judged@3", "P@3"])["per_query"]["q"]
    assert got["NumRel"] == 1 and got["P@3"] == pytest.approx(1 / 3)
    assert got["Judged@3"] == 1.0  # a is in the gold set
    assert got["Bpref"] == 0.0  # c (judged 0) is above b; a (-1) does not count


def test_parser_and_errors():
    assert parse_measure("MAP").family == "AP" and parse_measure("Hit@5").family == "Success"
    assert parse_measure("MRR@10").cutoff == 10 and parse_measure("P(rel=2)@5").rel == 2
    with pytest.raises(ValueError) as raised:
        parse_measure("Precision@5")
    assert all(name in str(raised.value) for name in MEASURE_NAMES)
    for bad in [
        "P",
        "Rprec@5",
        "P@0",
        "nDCG(rel=2)@5",
        "P(foo=1)@3",
        "nDCG(dcg='x')@5",
        "P(convention='granular')@5",
        "AP(rel=x)",
    ]:
        with pytest.raises(ValueError):
            parse_measure(bad)
    with pytest.raises(DuplicateResult):
        evaluate_arrays(
            run_query=[0, 0, 0],
            run_item=[1, 2, 1],
            run_score=[3.0, 2.0, 1.0],
            qrel_query=[0],
            qrel_item=[1],
            qrel_grade=[1],
            n_queries=1,
            measures=["P@1"],
        )


def test_one_registry_declares_every_family_once():
    from numerics.measures import ALIASES, FAMILIES, family

    assert set(MEASURE_NAMES) == set(FAMILIES) | set(ALIASES)
    for name, declared in FAMILIES.items():
        assert declared.name == name and declared.conventions[0] == "trec"
        k = {"none": "", "fraction": "@0.5"}.get(declared.cutoff, "@5")
        assert parse_measure(f"{name}{k}").family == name
        if declared.cutoff in ("required", "fraction"):
            with pytest.raises(ValueError, match="needs a cutoff"):
                parse_measure(name)
        if declared.cutoff == "none":
            with pytest.raises(ValueError, match="takes no cutoff"):
                parse_measure(f"{name}@5")
        if not declared.takes_rel:
            with pytest.raises(ValueError, match="does not take rel"):
                parse_measure(f"{name}(rel=2){k}")
    for taken in ("P", "MAP"):
        with pytest.raises(ValueError, match="declared twice"):
            family(taken, cutoff="none", rel=False)(lambda rows, measure, rel: None)


# --- cross-checks ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "run_name", ["stevinjs_english_bm25", "stevinjs_standard_classic", "stevinjs_standard_boolean"]
)
def test_cranfield_runs_equal_pytrec_eval_per_query(run_name):
    """Including the tie-heavy boolean run."""
    qrels_path, run_path = DATA / "qrels.txt", DATA / "runs" / f"{run_name}.run"
    encoded = encode(read_qrels(qrels_path), read_run(run_path))
    names = list(PYTREC)
    ours = evaluate_arrays(
        run_query=encoded.run_query,
        run_item=encoded.run_item,
        run_score=encoded.run_score,
        qrel_query=encoded.qrel_query,
        qrel_item=encoded.qrel_item,
        qrel_grade=encoded.qrel_grade,
        n_queries=len(encoded.qids),
        measures=names,
    )
    with open(qrels_path) as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path) as handle:
        run = pytrec_eval.parse_run(handle)
    theirs = pytrec(qrels, run, names)
    for index, qid in enumerate(encoded.qids):
        for name in names:
            assert ours[name][index] == pytest.approx(theirs[qid][PYTREC[name]], abs=1e-9), (
                qid,
                name,
            )


# Scores from a small set of float32-exact values: many ties, no near-ties that
# trec_eval 9's float storage would merge (the one documented difference).
SCORES = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, -1.0])
IDS = st.sampled_from([f"d{i}" for i in range(12)] + ["D1", "d10a", "文1"])


@st.composite
def collections(draw):
    n_queries = draw(st.integers(1, 4))
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        qrels[qid] = draw(st.dictionaries(IDS, st.integers(-1, 3), min_size=1, max_size=8))
        if draw(st.booleans()) or q == 0:
            run[qid] = draw(st.dictionaries(IDS, SCORES, min_size=1, max_size=10))
    return qrels, run


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), st.sampled_from([1, 2]))
def test_random_collections_equal_pytrec_eval(collection, rel):
    qrels, run = collection
    names = list(PYTREC)
    ours = evaluate(qrels, run, names, rel_default=rel)["per_query"]
    theirs = pytrec(qrels, run, names, rel=rel)
    for qid, values in theirs.items():  # pytrec_eval reports queries in the run only
        for name in names:
            if name.startswith("nDCG") and rel != 1:
                continue  # checked below: nDCG ignores rel
            assert ours[qid][name] == pytest.approx(values[PYTREC[name]], abs=1e-9), (qid, name)
    for qid in set(qrels) - set(run):
        assert all(ours[qid][n] == 0 for n in names if n != "NumRel")
    if rel != 1:
        base = evaluate(qrels, run, ["nDCG@5"])["per_query"]
        assert all(ours[q]["nDCG@5"] == base[q]["nDCG@5"] for q in ours)


@settings(max_examples=100, deadline=None)
@given(collections())
def test_judged_equals_ir_measures(collection):
    import ir_measures

    qrels, run = collection
    # ir_measures breaks score ties its own way: compare on distinct scores.
    run = {q: {d: float(i) for i, d in enumerate(sorted(r), start=1)} for q, r in run.items()}
    ours = evaluate(qrels, run, ["Judged@5"])["per_query"]
    for metric in ir_measures.iter_calc([ir_measures.parse_measure("Judged@5")], qrels, run):
        assert ours[metric.query_id]["Judged@5"] == pytest.approx(metric.value, abs=1e-12)


def test_exponential_gain_ndcg_matches_its_definition_and_cranfield():
    qrels = {"q": {"a": 3, "b": 1, "c": 2}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    got = evaluate(qrels, run, ["nDCG(dcg='exp-log2')@2"])["mean"]["nDCG(dcg='exp-log2')@2"]
    assert got == pytest.approx((1 + 7 / np.log2(3)) / (7 + 3 / np.log2(3)))
    encoded = encode(
        read_qrels(DATA / "qrels.txt"), read_run(DATA / "runs" / "stevinjs_english_bm25.run")
    )
    name = "nDCG(dcg='exp-log2')@10"
    values = evaluate_arrays(
        run_query=encoded.run_query,
        run_item=encoded.run_item,
        run_score=encoded.run_score,
        qrel_query=encoded.qrel_query,
        qrel_item=encoded.qrel_item,
        qrel_grade=encoded.qrel_grade,
        n_queries=len(encoded.qids),
        measures=[name],
    )
    assert round(values[name].mean(), 4) == 0.3596  # the dataset README's figure


@pytest.mark.slow
# numba compiles ranx's metrics on their first call: minutes on a fresh .venv (CI's) or a
# busy machine, far above the suite's 300 s for a test that hangs.
@pytest.mark.timeout(1800)
@settings(max_examples=60, deadline=None)
@given(collections())
def test_ranx_agrees_where_its_conventions_are_trec_eval(collection):
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    qrels, run = collection
    # ranx drops non-positive judgments and breaks ties differently: compare on runs
    # without ties and qrels without zero/negative grades.
    qrels = {q: {d: g for d, g in j.items() if g > 0} for q, j in qrels.items()}
    qrels = {q: j for q, j in qrels.items() if j and q in run}
    run = {
        q: {d: float(i) for i, d in enumerate(sorted(r), start=1)}
        for q, r in run.items()
        if q in qrels
    }
    if not qrels:
        return
    names = {"P@5": "precision@5", "R@5": "recall@5", "AP": "map", "RR": "mrr", "nDCG@5": "ndcg@5"}
    theirs = ranx_evaluate(
        Qrels(qrels), Run(run), list(names.values()), return_mean=False, make_comparable=True
    )
    ours = evaluate(qrels, run, list(names))["per_query"]
    for name, ranx_name in names.items():
        values = [ours[q][name] for q in sorted(qrels)]
        # ranx returns queries in its own order; compare as sorted multisets
        assert sorted(values) == pytest.approx(sorted(theirs[ranx_name]), abs=1e-9), name


def test_the_issue_worked_examples():
    # MRR over three queries: first relevant at rank 2, at rank 1, never: (1/2 + 1/1 + 0)/3.
    qrels = {"a": {"x": 1}, "b": {"y": 1}, "c": {"z": 1}}
    run = {"a": {"w": 2.0, "x": 1.0}, "b": {"y": 1.0}, "c": {"w": 1.0}}
    assert evaluate(qrels, run, ["RR"])["mean"]["RR"] == pytest.approx(0.5)
    # P@5 with 3 relevant among 5; R@5 with 3 of 4 relevant found.
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1, "r4": 1}}
    run = {"q": {"r1": 5.0, "n1": 4.0, "r2": 3.0, "n2": 2.0, "r3": 1.0}}
    got = evaluate(qrels, run, ["P@5", "R@5"])["mean"]
    assert got == {"P@5": pytest.approx(0.6), "R@5": pytest.approx(0.75)}
    # nDCG with rel_map {c2: 2, c3: 1} and the ranking c1, c2, c3.
    qrels = {"q": {"c2": 2, "c3": 1}}
    run = {"q": {"c1": 3.0, "c2": 2.0, "c3": 1.0}}
    dcg = 2 / np.log2(3) + 1 / np.log2(4)
    ideal = 2 / np.log2(2) + 1 / np.log2(3)
    assert evaluate(qrels, run, ["nDCG@3"])["mean"]["nDCG@3"] == pytest.approx(dcg / ideal)
    assert dcg / ideal == pytest.approx(0.6697, abs=1e-4)


@settings(max_examples=200, deadline=None)
@given(collections(), st.sampled_from([1, 2]), st.booleans())
def test_an_indexed_run_gives_exactly_the_general_result(collection, rel, shuffle):
    """The dashboards' path (run ranked and indexed once, keyed by database ids, queries
    outside the gold set ignored) gives evaluate_arrays' numbers bit for bit."""
    qrels, run = collection
    qids = sorted(qrels)
    ids = sorted({d for r in (*qrels.values(), *run.values()) for d in r}, key=str.encode)
    code = {d: i for i, d in enumerate(ids)}
    rows = [(qids.index(q), code[d], s) for q, r in run.items() for d, s in r.items()]
    run_query, run_item, run_score = (np.array(c) for c in zip(*rows, strict=True))
    judged = [(qids.index(q), code[d], g) for q, r in qrels.items() for d, g in r.items()]
    qrel_query, qrel_item, qrel_grade = (np.array(c) for c in zip(*judged, strict=True))
    names = [*PYTREC, "Judged@5", "NumRet", "NumRelRet", "F1@3", "RR@2"]
    general = evaluate_arrays(
        run_query=run_query,
        run_item=run_item,
        run_score=run_score,
        qrel_query=qrel_query,
        qrel_item=qrel_item,
        qrel_grade=qrel_grade,
        n_queries=len(qids),
        measures=names,
        rel_default=rel,
    )
    # Query keys as sparse ids; an extra run query (key 1) that the gold set lacks.
    key = 10 * np.arange(len(qids)) + 7
    extra = np.ones(3, dtype=np.int64)
    index_query = np.r_[key[run_query], extra]
    index_item, index_score = np.r_[run_item, 0, 1, 2], np.r_[run_score, 1.0, 2.0, 3.0]
    if shuffle:
        order = np.random.default_rng(0).permutation(index_query.size)
        index_query, index_item, index_score = (
            index_query[order],
            index_item[order],
            index_score[order],
        )
    index = index_run(index_query, index_item, index_score, n_items=len(ids) + 3)
    indexed = evaluate_index(
        index,
        qrel_query=key[qrel_query],
        qrel_item=qrel_item,
        qrel_grade=qrel_grade,
        query_keys=key,
        measures=names,
        rel_default=rel,
    )
    for name in names:
        np.testing.assert_array_equal(indexed[name], general[name], err_msg=name)


def test_indexing_a_run_refuses_a_duplicate_naming_its_row():
    with pytest.raises(DuplicateResult) as error:
        index_run([5, 5, 6, 5, 6], [1, 2, 1, 1, 1], [0.5, 0.4, 0.3, 0.2, 0.1])
    assert (error.value.query, error.value.item, error.value.position) == (5, 1, 3)
