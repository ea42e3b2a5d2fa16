"""Agreement coefficients: published worked examples, reference libraries, edge cases.

References: the ``krippendorff`` package (alpha, three levels), scikit-learn's
``cohen_kappa_score`` (three weightings, ``labels`` = the full domain) and statsmodels'
``fleiss_kappa(method='fleiss')``. Every generated example is checked: where a coefficient
is undefined by its definition (decided here independently of the code under test) our
function must return None, and everywhere else it must equal the reference within 1e-9.
"""

from __future__ import annotations

import itertools
import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from numerics.agreement import (
    DISTANCES,
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
    span_f1,
    summary,
    support,
)

TOL = 1e-9
WEIGHTINGS = [("cohen_kappa", None), ("cohen_kappa_linear", "linear"),
              ("cohen_kappa_quadratic", "quadratic")]  # fmt: skip

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", p. 3: 4 observers ×
# 12 units, values 1..5, None = missing.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
K2011_DOMAIN = [1, 2, 3, 4, 5]

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


def arrays(rows):
    return tuple(np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))


def from_matrix(matrix, domain):
    """Observers × units matrix of domain values (None missing) → item, annotator, grade."""
    return arrays(
        (u, o, domain.index(v))
        for o, row in enumerate(matrix)
        for u, v in enumerate(row)
        if v is not None
    )


def from_table(table):
    """Items × categories count table → labels, raters numbered per item."""
    rows = []
    for i, row in enumerate(table):
        rater = 0
        for category, count in enumerate(row):
            for _ in range(count):
                rows.append((i, rater, category))
                rater += 1
    return arrays(rows)


# -- published worked examples -------------------------------------------------------------


def test_krippendorff_2011_worked_example():
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


# -- spans ---------------------------------------------------------------------------------


def test_span_f1_examples():
    assert span_f1([(0, 0, 10)], [(0, 5, 15)]) == pytest.approx(2 * 5 / 20)
    assert span_f1([(0, 0, 10), (0, 5, 12)], [(0, 0, 12)]) == 1.0  # overlaps merged
    assert span_f1([(0, 0, 10)], [(1, 0, 10)]) == 0.0  # another document
    assert span_f1([(0, 0, 10)], []) == 0.0
    assert span_f1([], []) is None
    assert span_f1([("d1", 3, 3)], []) is None  # empty span marks nothing
    assert span_f1(np.array([[2, 0, 4]]), np.array([[2, 2, 6]])) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        span_f1([(0, 5, 2)], [])


spans = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 30), st.integers(0, 12)).map(
        lambda t: (t[0], t[1], t[1] + t[2])
    ),
    max_size=6,
)


@settings(max_examples=200, deadline=None, database=None)
@given(spans, spans)
def test_span_f1_equals_character_sets(spans_a, spans_b):
    def chars(spans):
        return {(d, c) for d, s, e in spans for c in range(s, e)}

    a, b = chars(spans_a), chars(spans_b)
    ours = span_f1(spans_a, spans_b)
    if not a and not b:
        assert ours is None
    else:
        assert ours == pytest.approx(2 * len(a & b) / (len(a) + len(b)), abs=TOL)


# -- edge cases ----------------------------------------------------------------------------


def test_all_labels_identical_is_undefined_not_zero():
    item, annotator, grade = [0, 0, 1, 1], [0, 1, 0, 1], [2, 2, 2, 2]
    assert percent_agreement(labels(item, annotator, grade, 4)) == 1.0
    for level in LEVELS:
        assert krippendorff_alpha(labels(item, annotator, grade, 4), level=level) is None
    assert fleiss_kappa(labels(item, annotator, grade, 4)) == {"m": 2, "n_items": 2, "value": None}
    pair = pairwise(labels(item, annotator, grade, 4))[0]
    assert pair["n"] == 2
    assert all(pair[key] is None for key, _ in WEIGHTINGS)
    assert pair["confusion"][2][2] == 2


def test_single_category_per_annotator_but_different_is_defined():
    # a always says 1, b always says 2: kappa 0 (no better than chance), alpha negative
    item, annotator, grade = [0, 0, 1, 1], [0, 1, 0, 1], [1, 2, 1, 2]
    assert cohen_kappa([1, 1], [2, 2], 4) == 0.0
    assert pairwise(labels(item, annotator, grade, 4))[0]["cohen_kappa"] == 0.0
    assert percent_agreement(labels(item, annotator, grade, 4)) == 0.0
    assert krippendorff_alpha(labels(item, annotator, grade, 4)) < 0


def test_items_with_one_label_only():
    item, annotator, grade = [0, 1], [0, 1], [1, 2]
    assert percent_agreement(labels(item, annotator, grade, 4)) is None
    for level in LEVELS:
        assert krippendorff_alpha(labels(item, annotator, grade, 4), level=level) is None
    assert fleiss_kappa(labels(item, annotator, grade, 4)) == {
        "m": None,
        "n_items": 0,
        "value": None,
    }
    pair = pairwise(labels(item, annotator, grade, 4))[0]
    assert pair["n"] == 0 and pair["cohen_kappa"] is None  # nothing in common
    assert pair["confusion"] == [[0] * 4 for _ in range(4)]
    assert cohen_kappa([1, -1], [-1, 2], 4) is None


def test_one_labelled_item_among_singles_is_used_and_singles_ignored():
    # items 1 and 2 have one label each: they change neither percent agreement nor alpha
    base = ([0, 0, 3, 3], [0, 1, 0, 1], [1, 1, 0, 2])
    more = ([0, 0, 3, 3, 1, 2], [0, 1, 0, 1, 2, 0], [1, 1, 0, 2, 3, 3])
    assert percent_agreement(labels(*base, 4)) == percent_agreement(labels(*more, 4)) == 0.5
    for level in LEVELS:
        assert krippendorff_alpha(labels(*base, 4), level=level) == pytest.approx(
            krippendorff_alpha(labels(*more, 4), level=level), abs=TOL
        )


def test_empty_input_and_one_annotator():
    empty = ([], [], [])
    assert percent_agreement(labels(*empty, 4)) is None
    assert krippendorff_alpha(labels(*empty, 4)) is None
    assert fleiss_kappa(labels(*empty, 4))["m"] is None
    assert pairwise(labels(*empty, 4)) == []
    assert pairwise(labels([0, 1], [0, 0], [1, 2], 4)) == []


def test_fleiss_uses_the_most_common_label_count_ties_to_the_larger():
    # items 0, 1 have 2 labels, items 2, 3 have 3: a tie, so m = 3
    item = [0, 0, 1, 1, 2, 2, 2, 3, 3, 3]
    annotator = [0, 1, 0, 1, 0, 1, 2, 0, 1, 2]
    grade = [0, 1, 0, 1, 0, 0, 1, 1, 1, 1]
    result = fleiss_kappa(labels(item, annotator, grade, 2))
    assert (result["m"], result["n_items"]) == (3, 2)
    assert result["value"] == pytest.approx(
        sm_fleiss(np.array([[2, 1], [0, 3]]), method="fleiss"), abs=TOL
    )


def test_unused_domain_grades_change_no_coefficient_but_the_confusion_size():
    item, annotator, grade = from_matrix(K2011, K2011_DOMAIN)
    wide_domain = [0, *K2011_DOMAIN, 6, 7]
    wide = labels(item, annotator, grade + 1, 8)
    narrow = labels(item, annotator, grade, 5)
    for level in LEVELS:
        assert krippendorff_alpha(wide, level=level, domain_values=wide_domain) == pytest.approx(
            krippendorff_alpha(narrow, level=level, domain_values=K2011_DOMAIN), abs=TOL
        )
    assert fleiss_kappa(wide)["value"] == pytest.approx(fleiss_kappa(narrow)["value"], abs=TOL)
    assert len(pairwise(wide)[0]["confusion"]) == 8


def test_invalid_input_raises():
    with pytest.raises(ValueError, match="at most one grade"):
        labels([0, 0], [1, 1], [0, 1], 4)
    with pytest.raises(ValueError, match="grade"):
        labels([0], [0], [4], 4)
    with pytest.raises(ValueError, match="grade"):
        labels([0], [0], [-1], 4)
    with pytest.raises(ValueError, match="same length"):
        labels([0, 1], [0], [1], 4)
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(labels([0, 0], [0, 1], [1, 1], 4), level="ratio")
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([0], [0], 2, "cubic")
    with pytest.raises(ValueError, match="domain_values"):
        krippendorff_alpha(
            labels([0, 0], [0, 1], [1, 1], 4), level="interval", domain_values=[1, 2]
        )
    with pytest.raises(ValueError, match="increasing"):
        krippendorff_alpha(
            labels([0, 0], [0, 1], [1, 1], 2), level="interval", domain_values=[2, 1]
        )


def test_summary_shape():
    item, annotator, grade = from_matrix(K2011, K2011_DOMAIN)
    result = summary(labels(item, annotator, grade, 5), domain_values=K2011_DOMAIN)
    assert set(result) == {
        "n_items",
        "n_annotators",
        "percent_agreement",
        "fleiss_kappa",
        "krippendorff_alpha",
        "pairs",
    }
    assert result["n_items"] == 12 and result["n_annotators"] == 4
    assert len(result["pairs"]) == 6
    assert round(result["krippendorff_alpha"]["ordinal"], 3) == 0.815


def test_no_reference_warning_paths_are_hit_silently():
    # The reference libraries warn where the coefficient is undefined; our code does not.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert krippendorff_alpha(labels([0, 0], [0, 1], [1, 1], 4)) is None
        assert cohen_kappa([1, 1], [1, 1], 4) is None
        assert fleiss_kappa(labels([0, 0], [0, 1], [1, 1], 4))["value"] is None


def test_a_level_is_a_table_lookup_or_a_distance_function():
    item, annotator, grade = from_matrix(K2011, K2011_DOMAIN)
    data = labels(item, annotator, grade, 5)
    for level in LEVELS:  # the table's own functions, passed as callables
        assert krippendorff_alpha(
            data, level=DISTANCES[level], domain_values=K2011_DOMAIN
        ) == krippendorff_alpha(data, level=level, domain_values=K2011_DOMAIN)

    def ratio(values, marginals):  # Krippendorff (2011) ratio δ², not in the table
        return ((values[:, None] - values[None, :]) / (values[:, None] + values[None, :])) ** 2

    reliability = np.array([[np.nan if v is None else v for v in row] for row in K2011])
    theirs = krippendorff.alpha(
        reliability_data=reliability, level_of_measurement="ratio", value_domain=K2011_DOMAIN
    )
    ours = krippendorff_alpha(data, level=ratio, domain_values=K2011_DOMAIN)
    assert ours == pytest.approx(theirs, abs=TOL)


def test_inputs_are_a_labels_bundle_or_counts_by_keyword():
    item, annotator, grade = [0, 0, 1, 1], [0, 1, 0, 1], [1, 2, 1, 1]
    data = labels(item, annotator, grade, 4)
    for coefficient in (percent_agreement, fleiss_kappa, krippendorff_alpha):
        assert coefficient(counts=counts(data)) == coefficient(data)
        with pytest.raises(TypeError):
            coefficient(item)  # arrays go through labels() first
        with pytest.raises(TypeError):
            coefficient(data, counts=counts(data))
        with pytest.raises(TypeError):
            coefficient()
        with pytest.raises(ValueError, match="whole numbers"):
            coefficient(counts=[[1, -1]])
        with pytest.raises(ValueError, match="table"):
            coefficient(counts=[1, 2])


def test_docstring_examples():
    import doctest

    from numerics.agreement import alpha

    result = doctest.testmod(alpha)
    assert result.attempted and not result.failed
