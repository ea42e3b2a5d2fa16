"""Agreement coefficients: span F1, edge cases (undefined values, singles, empty input),
invalid input and the shape of the package's API."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.agreement import (
    DISTANCES,
    LEVELS,
    cohen_kappa,
    counts,
    fleiss_kappa,
    krippendorff_alpha,
    labels,
    pairwise,
    percent_agreement,
    span_f1,
    summary,
)
from tests.numerics.agreement_cases import K2011, K2011_DOMAIN, WEIGHTINGS, from_matrix

TOL = 1e-9


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
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

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
    import krippendorff

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
