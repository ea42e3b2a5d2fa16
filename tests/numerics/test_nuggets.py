"""Nugget recall and the ndeval diversity measures: worked examples, ir_measures' pyndeval
provider on random subtopic qrels, properties that hold for every input."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.diversity import alpha_ndcg, err_ia, ideal_gains, subtopic_recall
from numerics.id_order import byte_order_codes
from numerics.mapping import MappingPolicy
from numerics.measures import rank_order
from numerics.nuggets import (
    NuggetSpans,
    Subtopics,
    covered_hits,
    covering_pairs,
    evaluate_nuggets,
    first_covered_rank,
    is_nugget_measure,
    matched_nuggets,
    nugget_recall,
    parse_nugget_measure,
    ranks_within,
)
from numerics.spans import SpanArrays


def build(nuggets, pairs, items, qids, vital=()):
    item_code = dict(zip(items, byte_order_codes(items).tolist(), strict=True))
    nugget_index = {key: i for i, key in enumerate(nuggets)}
    return Subtopics(
        n_queries=len(qids),
        nugget_query=[qids.index(q) for q, _n in nuggets],
        vital=[key in vital for key in nuggets],
        pair_nugget=[nugget_index[(q, n)] for q, n, _i in pairs],
        pair_item=[item_code[i] for _q, _n, i in pairs],
    ), item_code


def ranked(run: list[tuple[str, str, float]], qids, item_code):
    query = np.array([qids.index(q) for q, _i, _s in run], dtype=np.int64)
    item = np.array([item_code[i] for _q, i, _s in run], dtype=np.int64)
    score = np.array([s for _q, _i, s in run])
    order = rank_order(query, item, score)
    return query[order], item[order], ranks_within(query[order])


def test_worked_example_recall_and_diversity():
    # q1 has nuggets a, b, c (a vital); d1 covers a and b, d3 covers c; d4 covers nothing.
    nuggets = [("q1", "a"), ("q1", "b"), ("q1", "c")]
    pairs = [("q1", "a", "d1"), ("q1", "b", "d1"), ("q1", "b", "d2"), ("q1", "c", "d3")]
    items = ["d1", "d2", "d3", "d4"]
    sub, code = build(nuggets, pairs, items, ["q1"], vital={("q1", "a")})
    run = [("q1", "d1", 3.0), ("q1", "d4", 2.0), ("q1", "d3", 1.0)]
    q, i, r = ranked(run, ["q1"], code)
    values = evaluate_nuggets(
        sub,
        q,
        i,
        r,
        [
            *("NuggetRecall@1", "NuggetRecall(vital)@1", "nugget_recall.3", "StRecall@1"),
            *("ERR_IA@1", "ERR_IA@2", "alpha_nDCG@1", "alpha_nDCG@3"),
        ],
    )
    assert values["NuggetRecall@1"][0] == pytest.approx(2 / 3)
    assert values["NuggetRecall(vital)@1"][0] == 1.0
    assert values["nugget_recall.3"][0] == 1.0
    assert values["StRecall@1"][0] == pytest.approx(2 / 3)
    # ndeval: rank 1 holds two subtopics of gain 1 each; rank 1 is not normalised.
    assert values["ERR_IA@1"][0] == 2.0
    # (2/1 + 0/2) / (3/1 + 3·0.5/2) = 2 / 3.75
    assert values["ERR_IA@2"][0] == pytest.approx(2 / 3.75)
    # ideal: d1 (gain 2), then d3 (gain 1; d2's b already seen: 0.5), then d2 (0.5)
    assert values["alpha_nDCG@1"][0] == 1.0
    dcg = 2 + 0 + 1 / math.log2(4)
    ideal = 2 + 1 / math.log2(3) + 0.5 / math.log2(4)
    assert values["alpha_nDCG@3"][0] == pytest.approx(dcg / ideal)


def test_nugget_recall_counts_nuggets_no_unit_covers_but_strecall_does_not():
    nuggets = [("q1", "a"), ("q1", "b")]
    sub, code = build(nuggets, [("q1", "a", "d1")], ["d1"], ["q1"])
    q, i, r = ranked([("q1", "d1", 1.0)], ["q1"], code)
    values = evaluate_nuggets(sub, q, i, r, ["NuggetRecall@5", "StRecall@5"])
    assert values["NuggetRecall@5"][0] == 0.5
    assert values["StRecall@5"][0] == 1.0


def test_queries_without_nuggets_or_vital_nuggets_are_nan_and_missing_runs_score_zero():
    nuggets = [("q1", "a"), ("q2", "b")]
    sub, code = build(nuggets, [("q1", "a", "d1"), ("q2", "b", "d2")], ["d1", "d2"], ["q1", "q2"])
    q, i, r = ranked([("q1", "d1", 1.0)], ["q1", "q2"], code)
    values = evaluate_nuggets(sub, q, i, r, ["NuggetRecall@5", "NuggetRecall(vital)@5"])
    assert values["NuggetRecall@5"].tolist() == [1.0, 0.0]
    assert np.isnan(values["NuggetRecall(vital)@5"]).all()


@pytest.mark.parametrize(
    "name",
    ["NuggetRecall@0", "NuggetRecall(vital=1)@5", "alpha_nDCG(alpha=2)@5", "ERR_IA(x)@3", "Nope@3"],
)
def test_bad_names_are_refused(name):
    with pytest.raises(ValueError):
        parse_nugget_measure(name)


def test_names():
    assert parse_nugget_measure("vital_nugget_recall.10").vital
    assert parse_nugget_measure("alpha_nDCG(alpha=0.7)@20").alpha == 0.7
    assert is_nugget_measure("StRecall@5") and not is_nugget_measure("nDCG@10")


def test_covering_pairs_follow_the_mapping_policy():
    # nugget 0's span [5, 15) lies across two chunks [0, 10) and [10, 20) of document 1.
    evidence = SpanArrays([1, 1], [5, 40], [15, 45])
    units = SpanArrays([1, 1, 1], [0, 10, 38], [10, 20, 50])
    nugget = [0, 1]
    any_n, any_u = covering_pairs(nugget, evidence, units, policy=MappingPolicy("any_overlap"))
    assert list(zip(any_n.tolist(), any_u.tolist(), strict=True)) == [(0, 0), (0, 1), (1, 2)]
    has_n, has_u = covering_pairs(nugget, evidence, units, policy=MappingPolicy("contains"))
    assert list(zip(has_n.tolist(), has_u.tolist(), strict=True)) == [(1, 2)]


def test_matched_nuggets_need_shared_characters_on_the_same_query():
    spans = SpanArrays([1, 1, 1], [0, 50, 0], [10, 60, 10])
    a = NuggetSpans(np.array([7, 7, 8]), np.array([0, 1, 2]), spans)
    b = NuggetSpans(np.array([7, 9]), np.array([0, 1]), SpanArrays([1, 1], [9, 0], [20, 10]))
    a_hit, b_hit = matched_nuggets(a, b)
    assert a_hit.tolist() == [True, False, False]  # nugget 2 overlaps b's on another query
    assert b_hit.tolist() == [True, False]


# ------------------------------------------------------------------ against pyndeval


def random_case(rng: random.Random):
    qids = [f"q{j}" for j in range(rng.randint(1, 4))]
    items = [f"d{j}" for j in range(rng.randint(2, 14))]
    nuggets, pairs = [], []
    for q in qids:
        for n in range(rng.randint(1, 5)):
            nuggets.append((q, f"{q}n{n}"))
            for item in rng.sample(items, rng.randint(1, min(4, len(items)))):
                pairs.append((q, f"{q}n{n}", item))
    run = []
    for q in qids:
        chosen = rng.sample(items, rng.randint(1, len(items)))
        scores = rng.sample(range(1, 1000), len(chosen))  # distinct: no tie order to differ
        run += [(q, item, float(s)) for item, s in zip(chosen, scores, strict=True)]
    return qids, items, nuggets, pairs, run


@pytest.mark.parametrize("seed", range(40))
def test_equal_to_ir_measures_pyndeval_on_random_subtopic_qrels(seed):
    import ir_measures
    from ir_measures import ERR_IA, StRecall, alpha_nDCG

    rng = random.Random(seed)
    qids, items, nuggets, pairs, run = random_case(rng)
    alpha = rng.choice([0.5, 0.5, 0.25, 0.9])
    k = rng.choice([1, 2, 3, 5, 10, 20])
    sub, code = build(nuggets, pairs, items, qids)
    q, i, r = ranked(run, qids, code)
    names = [f"StRecall@{k}", f"ERR_IA@{k}", f"alpha_nDCG(alpha={alpha})@{k}"]
    ours = evaluate_nuggets(sub, q, i, r, names)
    qrels = [ir_measures.Qrel(qq, item, 1, n) for qq, n, item in pairs]
    scored = [ir_measures.ScoredDoc(qq, item, s) for qq, item, s in run]
    # One measure per call: ir_measures 0.4.3 hands the run, an iterator, to the first of
    # several pyndeval invocations only (alpha ≠ 0.5 needs an invocation of its own).
    theirs = {
        (m.query_id, str(m.measure)): m.value
        for measure in (StRecall @ k, ERR_IA @ k, alpha_nDCG(alpha=alpha) @ k)
        for m in ir_measures.iter_calc([measure], qrels, scored)
    }
    for index, qid in enumerate(qids):
        assert ours[f"StRecall@{k}"][index] == pytest.approx(theirs[(qid, f"StRecall@{k}")])
        assert ours[f"ERR_IA@{k}"][index] == pytest.approx(theirs[(qid, f"ERR_IA@{k}")])
        key = (qid, str(alpha_nDCG(alpha=alpha) @ k))
        assert ours[names[2]][index] == pytest.approx(theirs[key], abs=1e-12)


# ------------------------------------------------------------------ properties


@st.composite
def cases(draw):
    rng = random.Random(draw(st.integers(0, 10**6)))
    return random_case(rng)


@settings(max_examples=60, deadline=None)
@given(cases(), st.integers(1, 25))
def test_recall_is_a_share_that_grows_with_k_and_matches_a_slow_count(case, k):
    qids, items, nuggets, pairs, run = case
    sub, code = build(nuggets, pairs, items, qids)
    q, i, r = ranked(run, qids, code)
    first = first_covered_rank(sub, covered_hits(sub, q, i, r))
    now = nugget_recall(sub, first, k)
    later = nugget_recall(sub, first, k + 1)
    assert ((now >= 0) & (now <= 1)).all() and (later >= now).all()
    ranking = {}
    for qid in qids:
        mine = sorted((row for row in run if row[0] == qid), key=lambda row: -row[2])
        ranking.update({(qid, item): rank for rank, (_q, item, _s) in enumerate(mine, start=1)})
    for index, qid in enumerate(qids):
        own = [n for qq, n in nuggets if qq == qid]
        covered = {n for qq, n, item in pairs if qq == qid and ranking.get((qid, item), 10**9) <= k}
        assert now[index] == pytest.approx(len(covered) / len(own))


@settings(max_examples=60, deadline=None)
@given(cases(), st.integers(1, 25), st.sampled_from([0.0, 0.3, 0.5, 1.0]))
def test_diversity_values_are_bounded_and_ideal_gains_never_increase(case, k, alpha):
    qids, items, nuggets, pairs, run = case
    sub, code = build(nuggets, pairs, items, qids)
    q, i, r = ranked(run, qids, code)
    value = alpha_ndcg(sub, covered_hits(sub, q, i, r), k, alpha)
    assert (value >= 0).all()
    if alpha == 0:  # static gains: the greedy ideal is optimal, nothing beats it
        assert (value <= 1 + 1e-12).all()
    # Greedy ideal gains never increase with the rank.
    gains = ideal_gains(sub, k, alpha)
    assert (np.diff(gains, axis=1) <= 1e-12).all()
    assert (subtopic_recall(sub, first_covered_rank(sub, covered_hits(sub, q, i, r)), k) <= 1).all()
    assert (err_ia(sub, covered_hits(sub, q, i, r), k) >= 0).all()
