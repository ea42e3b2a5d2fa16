"""Span → unit mapping against a slow, obvious reference, and worked examples."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics import mapping
from numerics.mapping import (
    FragmentationCounts,
    MappingPolicy,
    best_evidence,
    fragmentation,
    fragmentation_counts,
    fragmentation_figures,
    map_evidence,
    map_pairs,
)
from numerics.spans import SpanArrays

POLICIES = [
    MappingPolicy("contains"),
    MappingPolicy("any_overlap"),
    MappingPolicy("evidence_overlap", 0.5),
    MappingPolicy("chunk_overlap", 0.5),
    MappingPolicy("evidence_overlap", 1.0),
    MappingPolicy("chunk_overlap", 0.3),
    MappingPolicy("evidence_overlap", 0.1),
    MappingPolicy("chunk_overlap", 0.7),
]


def qualifies(ev, unit, policy):
    (ed, es, ee), (ud, us, ue) = ev, unit
    if ee == es:  # an empty span grades only the identical empty unit
        return (ed, es, ee) == (ud, us, ue)
    if ed != ud or ee <= es:
        return False
    overlap = min(ee, ue) - max(es, us)
    if overlap <= 0:
        return False
    if policy.rule == "contains":
        return us <= es and ue >= ee
    theta = Fraction(str(policy.theta)) if policy.theta is not None else None
    if policy.rule == "evidence_overlap":
        return overlap >= theta * (ee - es)
    if policy.rule == "chunk_overlap":
        return overlap >= theta * (ue - us)
    return True


def reference_pairs(evidence, units, policy):
    return sorted(
        (i, j)
        for i, ev in enumerate(evidence)
        for j, unit in enumerate(units)
        if qualifies(ev, unit, policy)
    )


def columns(rows, width):
    if not rows:
        return [np.zeros(0, dtype=np.int64)] * width
    return [np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)]


spans = st.tuples(st.integers(0, 3), st.integers(0, 40), st.integers(0, 15)).map(
    lambda t: (t[0], t[1], t[1] + t[2])
)
# Units reach further than evidence (a whole-document or page unit, long chunks).
unit_spans = st.one_of(
    spans,
    st.tuples(st.integers(0, 4), st.integers(0, 60), st.integers(0, 200)).map(
        lambda t: (t[0], t[1], t[1] + t[2])
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(spans, max_size=25),
    st.lists(unit_spans, max_size=25),
    st.lists(st.integers(0, 3), min_size=25, max_size=25),
    st.sampled_from(POLICIES),
)
def test_mapping_matches_the_obvious_double_loop(evidence, units, grades, policy):
    ev_arrays = SpanArrays(*columns(evidence, 3))
    unit_arrays = SpanArrays(*columns(units, 3))
    ev_index, unit_index = map_pairs(ev_arrays, unit_arrays, policy=policy)
    assert sorted(zip(ev_index.tolist(), unit_index.tolist(), strict=True)) == reference_pairs(
        evidence, units, policy
    )
    expected = [-1] * len(units)
    for i, j in reference_pairs(evidence, units, policy):
        expected[j] = max(expected[j], grades[i])
    grade = np.array(grades[: len(evidence)], dtype=np.int64)
    assert map_evidence(ev_arrays, unit_arrays, grade=grade, policy=policy).tolist() == expected


def test_best_evidence_worked_example():
    # Pairs of (query, unit): (1, 5) has grades 1, 3, 3 (the first 3 wins: pair 1);
    # (1, 2) only grade 0 (judged non-relevant, pair 3); (0, 5) grade 2 (pair 4).
    grade = [1, 3, 3, 0, 2]
    query = [1, 1, 1, 1, 0]
    unit = [5, 5, 5, 2, 5]
    assert best_evidence(grade, query, unit).tolist() == [4, 3, 1]
    assert best_evidence(grade).tolist() == [1]  # one group: the first highest
    assert best_evidence([], [], []).tolist() == []


@pytest.mark.parametrize("scale", [1, 10**6, 2**40])  # dense keys, one sparse key, columns
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 3)), max_size=30))
def test_best_evidence_is_the_first_highest_grade_of_each_group(scale, rows):
    grade = [g for g, _q, _u in rows]
    query = [q * scale for _g, q, _u in rows]
    unit = [u * scale - 1 for _g, _q, u in rows]
    expected = {}
    for position, (g, q, u) in enumerate(rows):
        if (q, u) not in expected or g > rows[expected[q, u]][0]:
            expected[q, u] = position
    found = best_evidence(grade, query, unit).tolist()
    assert found == [expected[key] for key in sorted(expected)]


def test_worked_example_of_each_policy():
    # Chunks of one document: [0,10) [8,20) [20,30); evidence [5,12) grade 2.
    units = SpanArrays(np.zeros(3), np.array([0, 8, 20]), np.array([10, 20, 30]))
    evidence = SpanArrays(np.array([0]), np.array([5]), np.array([12]))

    def grades(text):
        return map_evidence(
            evidence, units, grade=np.array([2]), policy=MappingPolicy.parse(text)
        ).tolist()

    assert grades("any_overlap") == [2, 2, -1]  # [20,30) only touches nothing
    assert grades("contains") == [-1, -1, -1]  # split across two chunks
    assert grades("evidence_overlap>=0.7") == [2, -1, -1]  # 5 of 7 characters ≥ 4.9
    assert grades("evidence_overlap>=0.5") == [2, 2, -1]  # 5 and 4 of 7 characters
    assert grades("chunk_overlap>=0.5") == [2, -1, -1]  # exactly half of [0,10): qualifies
    # Spans that only touch do not overlap; grade 0 evidence judges a chunk non-relevant.
    touching = map_evidence(
        SpanArrays([0, 0], [10, 20], [20, 25]),
        units,
        grade=[0, 3],
        policy=MappingPolicy("any_overlap"),
    )
    assert touching.tolist() == [-1, 0, 3]


def test_threshold_exactly_met_qualifies_despite_floating_point():
    # 0.3 * 10 == 3.0000000000000004 in floating point; 3 of 10 characters is still 30 %.
    units = SpanArrays([0], [0], [10])
    for text, evidence in [
        ("chunk_overlap>=0.3", ([0], [7], [20])),  # 3 of the chunk's 10 characters
        ("evidence_overlap>=0.3", ([0], [7], [17])),  # 3 of the evidence's 10
        ("chunk_overlap>=0.7", ([0], [3], [12])),  # 7 of 10
    ]:
        policy = MappingPolicy.parse(text)
        graded = map_evidence(SpanArrays(*evidence), units, grade=[1], policy=policy)
        assert graded.tolist() == [1]
    # One character short does not qualify.
    shorter = map_evidence(
        SpanArrays([0], [8], [20]),
        units,
        grade=[1],
        policy=MappingPolicy.parse("chunk_overlap>=0.3"),
    )
    assert shorter.tolist() == [-1]
    # contains: a unit equal to the evidence contains it; one character off does not.
    contains = MappingPolicy("contains")
    exact, longer = SpanArrays([0], [0], [10]), SpanArrays([0], [0], [11])
    assert map_evidence(exact, units, grade=[2], policy=contains).tolist() == [2]
    assert map_evidence(longer, units, grade=[2], policy=contains).tolist() == [-1]


def test_unsorted_overlapping_units_pages_and_documents():
    # A long chunk that starts first must still be found for evidence far to its right,
    # though shorter chunks between them end earlier (ends are not sorted).
    unit_doc = [1, 0, 1, 1, 0]
    unit_start = [5, 0, 0, 10, 0]
    unit_end = [8, 100, 1000, 20, 50]
    pairs = map_pairs(
        SpanArrays([1, 0, 2], [500, 60, 0], [510, 70, 5]),
        SpanArrays(unit_doc, unit_start, unit_end),
        policy=MappingPolicy("any_overlap"),
    )
    assert sorted(zip(*(a.tolist() for a in pairs), strict=True)) == [(0, 2), (1, 1)]
    # Pages and whole documents are just other spans: [0, len) per document.
    documents = SpanArrays([0, 1], [0, 0], [300, 200])
    grades = map_evidence(
        SpanArrays([0, 0, 1], [10, 250, 5], [20, 260, 6]),
        documents,
        grade=[0, 2, 0],
        policy=MappingPolicy("contains"),
    )
    assert grades.tolist() == [2, 0]


def test_map_pairs_serves_many_queries_at_once():
    # Two queries label the same document; the caller groups pairs by its query column.
    query = np.array([7, 7, 9])
    ev = SpanArrays([0, 0, 0], [0, 15, 2], [5, 18, 4])
    grade = np.array([1, 3, 0])
    units = SpanArrays([0, 0], [0, 10], [10, 20])
    ev_index, unit_index = map_pairs(ev, units, policy=MappingPolicy("any_overlap"))
    per_query = {}
    for e, u in zip(ev_index.tolist(), unit_index.tolist(), strict=True):
        key = (int(query[e]), u)
        per_query[key] = max(per_query.get(key, -1), int(grade[e]))
    assert per_query == {(7, 0): 1, (7, 1): 3, (9, 0): 0}


def test_empty_inputs_and_empty_spans():
    policy = MappingPolicy("any_overlap")
    nothing, unit = SpanArrays([], [], []), SpanArrays([0], [0], [10])
    assert map_evidence(nothing, unit, grade=[], policy=policy).tolist() == [-1]
    five = SpanArrays([0], [0], [5])
    assert map_evidence(five, nothing, grade=[2], policy=policy).tolist() == []
    # An empty evidence span reaches no unit with text, not even in any_overlap ...
    empty = SpanArrays([0], [3], [3])
    assert map_evidence(empty, unit, grade=[2], policy=policy).tolist() == [-1]
    # ... but it reaches the identical empty unit under every policy: a whole-document
    # label on a document without text grades that document.
    units = SpanArrays([0, 1, 1, 2], [0, 0, 0, 0], [10, 0, 5, 0])
    label = SpanArrays([1], [0], [0])
    for each in POLICIES:
        assert map_evidence(label, units, grade=[1], policy=each).tolist() == [-1, 1, -1, -1]
        pairs = map_pairs(label, units, policy=each)
        assert [p.tolist() for p in pairs] == [[0], [1]]
    result = fragmentation(nothing, unit, grade=[], policy=policy)
    assert result["n_evidence"] == 0 and result["split_share"] is None


def test_fragmentation_worked_example():
    # Chunks [0,10) [10,20) [20,30); evidence A = [5,15) grade 2 (split over two chunks),
    # B = [21,29) grade 1 (inside the third). any_overlap gold units: all three, and none
    # is fully covered: [0,10) has [0,5) unmarked, [10,20) [15,20), [20,30) [20,21) and [29,30).
    result = fragmentation(
        SpanArrays([0, 0], [5, 21], [15, 29]),
        SpanArrays([0, 0, 0], [0, 10, 20], [10, 20, 30]),
        grade=[2, 1],
        policy=MappingPolicy("any_overlap"),
    )
    assert result["n_evidence"] == 2
    assert result["split_share"] == 0.5
    assert result["chunks_per_evidence"] == 1.5
    assert result["n_gold_units"] == 3
    assert result["gold_units_partly_irrelevant_share"] == 1.0
    # Evidence covering a whole chunk exactly leaves it fully relevant.
    whole = fragmentation(
        SpanArrays([0], [10], [20]),
        SpanArrays([0, 0], [0, 10], [10, 20]),
        grade=[1],
        policy=MappingPolicy("contains"),
    )
    assert whole["gold_units_partly_irrelevant_share"] == 0.0
    assert whole["split_share"] == 0.0


def test_policy_parsing_and_errors():
    assert str(MappingPolicy.parse("evidence_overlap>=0.5")) == "evidence_overlap>=0.5"
    assert MappingPolicy.parse(" contains ") == MappingPolicy("contains")
    for bad in ["nearby", "chunk_overlap", "contains>=0.5", "chunk_overlap>=0", "x>=y"]:
        with pytest.raises(ValueError):
            MappingPolicy.parse(bad)


def slow_fragmentation(evidence, grades, queries, units, policy):
    valid = [i for i, (d, s, e) in enumerate(evidence) if e > s]
    touched = {
        i: [j for j, u in enumerate(units) if qualifies(evidence[i], u, MappingPolicy())]
        for i in valid
    }
    contained = {
        i: any(
            u[0] == evidence[i][0] and u[1] <= evidence[i][1] and u[2] >= evidence[i][2]
            for u in units
        )
        for i in valid
    }
    split = sum(1 for i in valid if not contained[i] and len(touched[i]) >= 2)
    gold = {
        (queries[i], j)
        for i, j in reference_pairs(evidence, units, policy)
        if grades[i] >= 1 and i in valid  # fragmentation is about evidence with text
    }
    partly = 0
    for q, j in gold:
        d, us, ue = units[j]
        chars = {
            c
            for i in valid
            if queries[i] == q and grades[i] >= 1 and evidence[i][0] == d
            for c in range(evidence[i][1], evidence[i][2])
        }
        partly += any(c not in chars for c in range(us, ue))
    n = len(valid)
    return {
        "n_evidence": n,
        "split_share": split / n if n else None,
        "chunks_per_evidence": sum(len(t) for t in touched.values()) / n if n else None,
        "n_gold_units": len(gold),
        "gold_units_partly_irrelevant_share": partly / len(gold) if gold else None,
    }


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(spans, st.integers(0, 3), st.integers(0, 2)), max_size=20),
    st.lists(unit_spans, max_size=20),
    st.sampled_from(POLICIES),
)
def test_fragmentation_matches_a_slow_reference(labelled, units, policy):
    evidence = [e for e, _, _ in labelled]
    grades = [g for _, g, _ in labelled]
    queries = [q for _, _, q in labelled]
    result = fragmentation(
        SpanArrays(*columns(evidence, 3)),
        SpanArrays(*columns(units, 3)),
        grade=np.array(grades, dtype=np.int64),
        policy=policy,
        query=np.array(queries, dtype=np.int64),
    )
    expected = slow_fragmentation(evidence, grades, queries, units, policy)
    for key, value in expected.items():
        if value is None:
            assert result[key] is None, key
        else:
            assert result[key] == pytest.approx(value, abs=1e-12), key


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(spans, st.integers(0, 3), st.integers(0, 4)), max_size=25),
    st.lists(unit_spans, max_size=20),
    st.sets(st.integers(0, 4)),
    st.sampled_from(POLICIES),
)
def test_fragmentation_counts_of_changed_queries_splice_into_the_rest(
    labelled, units, changed, policy
):
    """Counts of some queries computed apart (and changed queries left with no evidence)
    replace theirs: the same counts, and figures, as counting everything."""
    evidence = SpanArrays(*columns([e for e, _, _ in labelled], 3))
    grade = np.array([g for _, g, _ in labelled], dtype=np.int64)
    query = np.array([q for _, _, q in labelled], dtype=np.int64)
    unit_arrays = SpanArrays(*columns(units, 3))
    whole = fragmentation_counts(evidence, unit_arrays, grade=grade, policy=policy, query=query)
    changed = np.array(sorted(changed), dtype=np.int64)
    mine = np.isin(query, changed)
    part = fragmentation_counts(
        SpanArrays(evidence.document[mine], evidence.start[mine], evidence.end[mine]),
        unit_arrays,
        grade=grade[mine],
        policy=policy,
        query=query[mine],
    )
    # Stale counts for the changed queries (as if from before the change) are replaced.
    stale = FragmentationCounts(
        whole.query, *(getattr(whole, n) + np.isin(whole.query, changed) for n in whole.NAMES)
    )
    spliced = stale.splice(part, changed)
    assert spliced.query.tolist() == whole.query.tolist()
    for name in whole.NAMES:
        assert getattr(spliced, name).tolist() == getattr(whole, name).tolist(), name
    assert fragmentation_figures(spliced, policy) == fragmentation(
        evidence, unit_arrays, grade=grade, policy=policy, query=query
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(spans, min_size=1, max_size=4),
    st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 60), st.integers(0, 200)).map(
            lambda t: (t[0], t[1], t[1] + t[2])
        ),
        min_size=20,
        max_size=60,
    ),
    st.sampled_from(POLICIES),
)
def test_only_the_evidence_documents_units_are_searched_with_the_same_pairs(
    evidence, units, policy
):
    """A few spans among many documents' units search those documents' units alone, and
    find the very pairs, in the very order, that searching every unit finds."""
    ev_arrays = SpanArrays(*columns(evidence, 3))
    unit_arrays = SpanArrays(*columns(units, 3))
    subset = mapping._units_of_documents(unit_arrays.document, ev_arrays.document)
    if subset is not None:
        assert set(unit_arrays.document[subset].tolist()) <= set(ev_arrays.document.tolist())
    narrowed = [a.tolist() for a in map_pairs(ev_arrays, unit_arrays, policy=policy)]
    grade = np.arange(len(evidence), dtype=np.int64) % 4
    narrowed_grades = map_evidence(ev_arrays, unit_arrays, grade=grade, policy=policy).tolist()
    saved = mapping._units_of_documents
    mapping._units_of_documents = lambda unit_doc, ev_doc: None
    try:
        everything = [a.tolist() for a in map_pairs(ev_arrays, unit_arrays, policy=policy)]
        grades = map_evidence(ev_arrays, unit_arrays, grade=grade, policy=policy).tolist()
    finally:
        mapping._units_of_documents = saved
    assert narrowed == everything
    assert narrowed_grades == grades


def test_units_of_other_documents_are_left_out():
    document = np.repeat(np.arange(10), 3)
    assert mapping._units_of_documents(document, np.array([4, 7])).tolist() == [
        12,
        13,
        14,
        21,
        22,
        23,
    ]
    # Evidence over most documents searches every unit: narrowing would cost a pass more.
    assert mapping._units_of_documents(document, np.arange(8)) is None
