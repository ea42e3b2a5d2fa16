"""Agreement coefficients: published worked examples, reference libraries, edge cases.

References: the ``krippendorff`` package (alpha, three levels), scikit-learn's
``cohen_kappa_score`` (three weightings, ``labels`` = the full domain) and statsmodels'
``fleiss_kappa(method='fleiss')``. Every generated example is checked: where a coefficient
is undefined by its definition (decided here independently of the code under test) our
function must return None, and everywhere else it must equal the reference within 1e-9.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.agreement import (
    LEVELS,
    alpha_per_query,
    cohen_kappa,
    cohen_kappa_from_confusion,
    counts,
    fleiss_kappa,
    krippendorff_alpha,
    labels,
    pairwise,
    per_query,
    percent_agreement,
    percent_agreement_per_query,
    support,
)
from tests.numerics.agreement_cases import (
    K2011,
    K2011_DOMAIN,
    WEIGHTINGS,
    arrays,
    from_matrix,
    from_table,
)

TOL = 1e-9
# Fleiss (1971) via Wikipedia "Fleiss' kappa": 10 subjects × 14 raters, 5 categories.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


# -- published worked examples -------------------------------------------------------------


def test_krippendorff_2011_worked_example():
    import krippendorff

    item, annotator, grade = from_matrix(K2011, K2011_DOMAIN)
    expected = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}
    reliability = np.array([[np.nan if v is None else v for v in row] for row in K2011])
    for level, published in expected.items():
        ours = krippendorff_alpha(
            labels(item, annotator, grade, 5), level=level, domain_values=K2011_DOMAIN
        )
        assert round(ours, 3) == published, level
        theirs = krippendorff.alpha(
            reliability_data=reliability, level_of_measurement=level, value_domain=K2011_DOMAIN
        )
        assert ours == pytest.approx(theirs, abs=TOL), level


def test_krippendorff_2011_nominal_by_hand():
    # By hand: 11 units hold 40 pairable values with coincidence marginals n_c = 9, 13, 10,
    # 5, 3; disagreeing pairs: unit 2 (2,2,3,2) 6/3, unit 6 (1,2,3,4) 12/3, unit 8 (1,1,2,1)
    # 6/3, so Σ_{c≠k} o_ck = 8 and α = 1 − (n − 1)·8 / (n² − Σ n_c²) = 1 − 312/1216.
    item, annotator, grade = from_matrix(K2011, K2011_DOMAIN)
    assert support(labels(item, annotator, grade, 5)) == {
        "items_with_two_labels": 11,
        "pairable_values": 40,
    }
    n_c = np.array([9, 13, 10, 5, 3])
    assert 1 - 39 * 8 / (40**2 - (n_c**2).sum()) == pytest.approx(
        krippendorff_alpha(labels(item, annotator, grade, 5)), abs=TOL
    )


def test_fleiss_1971_example_from_wikipedia():
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    item, annotator, grade = from_table(FLEISS_TABLE)
    result = fleiss_kappa(labels(item, annotator, grade, 5))
    assert result["m"] == 14 and result["n_items"] == 10
    assert round(result["value"], 3) == 0.210
    assert result["value"] == pytest.approx(
        sm_fleiss(np.array(FLEISS_TABLE), method="fleiss"), abs=TOL
    )
    assert fleiss_kappa(counts=FLEISS_TABLE) == result  # the count table itself as input
    # Wikipedia's intermediate values: P̄ = 0.378, P_e = 0.213.
    assert percent_agreement(labels(item, annotator, grade, 5)) == pytest.approx(0.378, abs=5e-4)


def test_cohen_example_from_wikipedia():
    # 50 grant proposals: both yes 20, A yes B no 5, A no B yes 10, both no 15 → κ = 0.4.
    assert cohen_kappa_from_confusion([[20, 5], [10, 15]]) == pytest.approx(0.4, abs=TOL)
    a = np.array([0] * 20 + [0] * 5 + [1] * 10 + [1] * 15)
    b = np.array([0] * 20 + [1] * 5 + [0] * 10 + [1] * 15)
    assert cohen_kappa(a, b, 2) == pytest.approx(0.4, abs=TOL)
    for weights in (None, "linear", "quadratic"):  # two categories: all weightings agree
        assert cohen_kappa(a, b, 2, weights) == pytest.approx(0.4, abs=TOL)


# -- generated label sets against the reference libraries ----------------------------------


@st.composite
def label_sets(draw, max_items=12, max_annotators=5, max_categories=5):
    """(item, annotator, grade, n_items, n_annotators, n_categories, domain_values), with
    about a fifth of (item, annotator) cells missing and at least one label; grades are
    drawn from a random subset of the domain so that single-category cases come up."""
    n_items = draw(st.integers(1, max_items))
    n_annotators = draw(st.integers(2, max_annotators))
    n_categories = draw(st.integers(2, max_categories))
    used = draw(
        st.lists(st.integers(0, n_categories - 1), min_size=1, max_size=n_categories, unique=True)
    )
    cells = [(i, a) for i in range(n_items) for a in range(n_annotators)]
    present = draw(st.lists(st.integers(0, 4), min_size=len(cells), max_size=len(cells)))
    rows = [
        (i, a, draw(st.sampled_from(used)))
        for (i, a), p in zip(cells, present, strict=True)
        if p > 0
    ]
    if not rows:
        rows = [(0, 0, used[0])]
    steps = draw(st.lists(st.integers(1, 5), min_size=n_categories, max_size=n_categories))
    domain_values = np.cumsum(steps).tolist()
    return (*arrays(rows), n_items, n_annotators, n_categories, domain_values)


def grid_of(item, annotator, grade, n_items, n_annotators):
    grid = np.full((n_items, n_annotators), -1)
    grid[item, annotator] = grade
    return grid


@settings(max_examples=300, deadline=None, database=None)
@given(label_sets())
def test_alpha_matches_the_krippendorff_package(case):
    import krippendorff

    item, annotator, grade, n_items, n_annotators, n_categories, domain_values = case
    data = labels(item, annotator, grade, n_categories, n_items, n_annotators)
    per_item = np.bincount(item, minlength=n_items)
    pairable = grade[per_item[item] >= 2]
    undefined = np.unique(pairable).size < 2  # < 2 pairable values or all identical
    reliability = np.full((n_annotators, n_items), np.nan)
    reliability[annotator, item] = np.asarray(domain_values)[grade]
    for level in LEVELS:
        ours = krippendorff_alpha(data, level=level, domain_values=domain_values)
        table = counts(data)
        assert ours == krippendorff_alpha(counts=table, level=level, domain_values=domain_values)
        if undefined:
            assert ours is None, level
            continue
        theirs = krippendorff.alpha(
            reliability_data=reliability, level_of_measurement=level, value_domain=domain_values
        )
        assert ours == pytest.approx(theirs, abs=TOL), level


@settings(max_examples=300, deadline=None, database=None)
@given(label_sets())
def test_cohen_matches_sklearn(case):
    from sklearn.metrics import cohen_kappa_score

    item, annotator, grade, n_items, n_annotators, n_categories, _values = case
    grid = grid_of(item, annotator, grade, n_items, n_annotators)
    pairs = pairwise(labels(item, annotator, grade, n_categories, n_annotators=n_annotators))
    assert [(p["a"], p["b"]) for p in pairs] == list(itertools.combinations(range(n_annotators), 2))
    for pair in pairs:
        a, b = grid[:, pair["a"]], grid[:, pair["b"]]
        shared = (a >= 0) & (b >= 0)
        assert pair["n"] == int(shared.sum())
        confusion = np.zeros((n_categories, n_categories), dtype=int)
        np.add.at(confusion, (a[shared], b[shared]), 1)
        assert pair["confusion"] == confusion.tolist()
        used = np.union1d(a[shared], b[shared])
        undefined = used.size < 2  # nothing shared, or both used one same category only
        for key, weights in WEIGHTINGS:
            assert pair[key] == cohen_kappa(a, b, n_categories, weights)
            if undefined:
                assert pair[key] is None, key
                continue
            theirs = cohen_kappa_score(
                a[shared], b[shared], labels=list(range(n_categories)), weights=weights
            )
            assert pair[key] == pytest.approx(theirs, abs=TOL), key


def expected_m(item, n_items):
    per_item = np.bincount(item, minlength=n_items)
    multi = per_item[per_item >= 2]
    if multi.size == 0:
        return None
    frequency = np.bincount(multi)
    return int(np.flatnonzero(frequency == frequency.max()).max())


@settings(max_examples=300, deadline=None, database=None)
@given(label_sets())
def test_fleiss_matches_statsmodels(case):
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    item, annotator, grade, n_items, _n_annotators, n_categories, _values = case
    result = fleiss_kappa(labels(item, annotator, grade, n_categories))
    m = expected_m(item, n_items)
    if m is None:
        assert result == {"m": None, "n_items": 0, "value": None}
        return
    table = np.zeros((n_items, n_categories), dtype=int)
    np.add.at(table, (item, grade), 1)
    table = table[table.sum(axis=1) == m]
    assert (result["m"], result["n_items"]) == (m, table.shape[0])
    if np.count_nonzero(table.sum(axis=0)) < 2:  # P_e = 1: undefined
        assert result["value"] is None
        return
    assert result["value"] == pytest.approx(sm_fleiss(table, method="fleiss"), abs=TOL)


@settings(max_examples=150, deadline=None, database=None)
@given(label_sets())
def test_percent_agreement_by_enumerating_pairs(case):
    item, annotator, grade, n_items, _n_annotators, n_categories, _values = case
    shares = []
    for i in range(n_items):
        grades = grade[item == i].tolist()
        if len(grades) >= 2:
            pairs = list(itertools.permutations(grades, 2))
            shares.append(sum(x == y for x, y in pairs) / len(pairs))
    ours = percent_agreement(labels(item, annotator, grade, n_categories))
    if not shares:
        assert ours is None
    else:
        assert ours == pytest.approx(float(np.mean(shares)), abs=TOL)


@settings(max_examples=60, deadline=None, database=None)
@given(label_sets(), st.data())
def test_per_query_equals_the_coefficients_of_each_query_alone(case, draw):
    item, annotator, grade, n_items, n_annotators, n_categories, domain_values = case
    n_queries = draw.draw(st.integers(1, 3))
    query = np.array(draw.draw(st.lists(st.integers(0, n_queries - 1), min_size=n_items,
                                        max_size=n_items)))  # fmt: skip
    data = labels(item, annotator, grade, n_categories, n_items, n_annotators)
    rows = per_query(data, query=query, n_queries=n_queries, domain_values=domain_values)
    agreement = percent_agreement_per_query(data, query=query, n_queries=n_queries)
    for q in range(n_queries):
        keep = query[item] == q
        if keep.any():
            alone = labels(item[keep], annotator[keep], grade[keep], n_categories)
            pa = percent_agreement(alone)
        else:
            alone, pa = None, None
        assert rows[q]["percent_agreement"] == pytest.approx(pa, abs=TOL) == agreement[q]
        for level in LEVELS:
            by_query = alpha_per_query(
                data, query=query, n_queries=n_queries, level=level, domain_values=domain_values
            )
            expected = (
                None
                if alone is None
                else krippendorff_alpha(alone, level=level, domain_values=domain_values)
            )
            assert rows[q]["krippendorff_alpha"][level] == by_query[q]
            if expected is None:
                assert by_query[q] is None
            else:
                assert by_query[q] == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("seed", range(5))
def test_pairwise_confusions_of_many_annotators_in_any_order(seed):
    # Twenty annotators (an item holds up to twenty labels, so pairs up to nineteen places
    # apart in the sorted labels), labels in shuffled order: each pair's confusion is the
    # one counted from the items × annotators grid.
    rng = np.random.default_rng(seed)
    n_items, n_annotators, n_categories = 300, 20, 4
    present = rng.random((n_items, n_annotators)) < rng.random(n_items)[:, None]
    item, annotator = np.nonzero(present)
    grade = rng.integers(0, n_categories, item.size)
    shuffle = rng.permutation(item.size)
    item, annotator, grade = item[shuffle], annotator[shuffle], grade[shuffle]
    grid = grid_of(item, annotator, grade, n_items, n_annotators)
    pairs = pairwise(labels(item, annotator, grade, n_categories, n_annotators=n_annotators))
    assert len(pairs) == n_annotators * (n_annotators - 1) // 2
    for pair in pairs:
        a, b = grid[:, pair["a"]], grid[:, pair["b"]]
        shared = (a >= 0) & (b >= 0)
        confusion = np.zeros((n_categories, n_categories), dtype=int)
        np.add.at(confusion, (a[shared], b[shared]), 1)
        assert pair["confusion"] == confusion.tolist()
        assert pair["n"] == int(shared.sum())
