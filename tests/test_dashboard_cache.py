"""Dashboards kept per process and refreshed per changed query equal a full recomputation.

After any mix of label changes, removals and adjudications, the dashboard computed
incrementally from the kept labels, grades, values and resample sums must give exactly
(bit for bit) the per-query values, means and intervals of a computation from scratch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Document, Query
from gold.services import adjudicate
from gold.units import live_labels
from metrics import coverage
from metrics.evaluation import document_label_share, evaluation_setting
from metrics.label_state import label_state
from metrics.rankings import cache
from metrics.reports import run_rows

from .test_own_units import two_chunkings  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_blocks(monkeypatch):
    """Resample sums in blocks of two queries, so that a change leaves blocks untouched."""
    monkeypatch.setattr("numerics.significance.QUERY_BLOCK", 2)
    cache.clear()
    yield
    cache.clear()


def _dashboard(project, level: str = "own") -> dict:
    setting = evaluation_setting(project, level=level, k=5)
    table = {}
    for row in run_rows(project, setting):
        scores = row["scores"]
        gold = scores.gold
        table[row["run"].name] = {
            "level": row["unit_level"],
            "values": {n: v.copy() for n, v in scores.values.items()},
            "means": {n: scores.mean(n) for n in scores.values},
            "intervals": dict(scores.intervals),
            "grades": [a.copy() for a in (gold.grades.query, gold.grades.unit, gold.grades.grade)],
            "queries": gold.query_pks.copy(),
            "coverage": {
                n: v.copy() for n, v in coverage.run_coverage(row["run"], gold, 5).per_query.items()
            },
        }
    return table


def _assert_identical(incremental: dict, full: dict) -> None:
    assert incremental.keys() == full.keys() and full
    for name, expected in full.items():
        got = incremental[name]
        assert got["level"] == expected["level"]
        assert np.array_equal(got["queries"], expected["queries"])
        for a, b in zip(got["grades"], expected["grades"], strict=True):
            assert np.array_equal(a, b), name
        assert got["values"].keys() == expected["values"].keys()
        for measure, values in expected["values"].items():
            # Bit for bit: the same floats, not merely close ones.
            assert got["values"][measure].tobytes() == values.tobytes(), (name, measure)
        assert got["means"] == expected["means"]
        assert list(got["coverage"]) == list(expected["coverage"]) and expected["coverage"]
        for source, shares in expected["coverage"].items():
            assert got["coverage"][source].tobytes() == shares.tobytes(), (name, source)
        assert got["intervals"] == expected["intervals"] and expected["intervals"]


change = st.tuples(
    st.sampled_from(["passage", "document", "chunk", "remove", "adjudicate"]),
    st.integers(0, 4),  # query
    st.integers(0, 7),  # document
    st.integers(0, 1),  # annotator
    st.integers(0, 3),  # grade
    st.integers(0, 250),  # passage start
)


def _apply(project, personas, kind, q, d, who, grade, start) -> None:
    query = Query.objects.filter(project=project).order_by("pk")[q]
    document = Document.objects.filter(project=project).order_by("pk")[d]
    annotator = personas["annotator" if who == 0 else "annotator2"]
    if kind == "adjudicate":
        chunk = Chunk.objects.filter(document=document).order_by("pk").first()
        adjudicate(
            query=query,
            evidence=Evidence.for_chunk(chunk),
            grade=grade,
            reason="",
            adjudicator=personas["adjudicator"],
        )
        return
    if kind == "chunk":
        evidence = Evidence.for_chunk(Chunk.objects.filter(document=document).order_by("pk")[1])
    elif kind == "document" or kind == "remove":
        evidence = Evidence.for_document(document)
    else:
        evidence = Evidence.for_passage(document, start, start + 20)
    change_label(
        query=query,
        annotator=annotator,
        evidence=evidence,
        grade=None if kind == "remove" else grade,
    )


@pytest.mark.usefixtures("two_chunkings", "small_blocks")
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(changes=st.lists(change, min_size=1, max_size=6))
def test_refresh_after_label_changes_equals_full_recomputation(personas, changes):
    project = personas["project"]
    _dashboard(project)  # everything kept
    before = label_state(project)
    for args in changes:
        _apply(project, personas, *args)
    incremental = _dashboard(project)
    state = label_state(project)
    # The refresh was incremental: the same labels read once, brought forward (by one
    # step unless every change was a no-op and wrote no history).
    assert state.epoch == before.epoch
    assert state.step == before.step + (state.version != before.version)
    cache.clear()
    full = _dashboard(project)
    _assert_identical(incremental, full)
    assert label_state(project).epoch != before.epoch  # the full one read anew
    # The kept labels are the live labels (as a multiset of rows).
    fresh = live_labels(project, sources=None)

    def rows(labels):
        names = np.array([*labels.annotators, "(adjudicated)"], dtype=object)
        return sorted(
            zip(
                labels.query.tolist(),
                names[labels.source].tolist(),
                labels.document.tolist(),
                labels.start.tolist(),
                labels.end.tolist(),
                labels.grade.tolist(),
                strict=True,
            )
        )

    assert rows(state.labels) == rows(fresh)


@pytest.mark.usefixtures("two_chunkings", "small_blocks")
def test_deleted_query_and_other_levels_start_again(personas):
    """A query deleted with its labels writes no history: the next request reads anew."""
    project = personas["project"]
    _dashboard(project)
    _dashboard(project, "tokens-256-32")
    before = label_state(project)
    Query.objects.filter(project=project).order_by("pk").first().delete()
    incremental = _dashboard(project)
    assert label_state(project).epoch != before.epoch
    cache.clear()
    _assert_identical(incremental, _dashboard(project))
    # A single level, warm and then after one change, equals it from scratch too.
    _dashboard(project, "tokens-256-32")
    _apply(project, personas, "passage", 1, 2, 0, 3, 10)
    warm = _dashboard(project, "tokens-256-32")
    cache.clear()
    _assert_identical(warm, _dashboard(project, "tokens-256-32"))


@pytest.mark.usefixtures("two_chunkings")
def test_document_label_share_from_kept_labels(personas):
    """The share of whole-document labels counts the annotators' labels of grade > 0."""
    project = personas["project"]
    labels = live_labels(project, sources=None)
    documents = dict(Document.objects.filter(project=project).values_list("pk", "text"))
    relevant = (labels.grade > 0) & (labels.source >= 0)
    whole = [
        s == 0 and e == len(documents[d])
        for d, s, e in zip(
            labels.document[relevant], labels.start[relevant], labels.end[relevant], strict=True
        )
    ]
    assert 0 < sum(whole) < len(whole)
    assert document_label_share(project, None) == sum(whole) / len(whole)
    # Adjudications are not counted in the live share.
    query = Query.objects.filter(project=project).first()
    document = Document.objects.filter(project=project).first()
    adjudicate(
        query=query,
        evidence=Evidence.for_document(document),
        grade=3,
        reason="",
        adjudicator=personas["adjudicator"],
    )
    assert document_label_share(project, None) == sum(whole) / len(whole)


@pytest.mark.usefixtures("two_chunkings", "small_blocks")
def test_coverage_by_source_after_a_label_maps_only_that_querys_labels(personas, monkeypatch):
    """After one label, the coverage by source maps the changed query's labels onto the
    units again, not every label of the project; and it equals coverage from scratch."""
    project = personas["project"]
    _dashboard(project)
    mapped = []
    original = coverage.annotator_unit_grades

    def counting(labels, units, mapping):
        mapped.append(np.unique(labels.query).tolist())
        return original(labels, units, mapping)

    monkeypatch.setattr(coverage, "annotator_unit_grades", counting)
    _apply(project, personas, "passage", 2, 3, 0, 2, 40)
    changed = Query.objects.filter(project=project).order_by("pk")[2].pk
    incremental = _dashboard(project)
    assert mapped and all(queries in ([changed], []) for queries in mapped), mapped
    cache.clear()
    _assert_identical(incremental, _dashboard(project))
