"""A quality plan's units follow one rule for every input: the units of the scope,
people's first (each group in document order), without those the version graded, at
most ``max_units``; ``already`` counts the scope's graded units. Checked against that
rule written out plainly, over random projects (the plan is worked out lazily from the
graded units and places, not by a pass over every unit)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from judges.quality_jobs import DocumentUnits, KeptUnits, Unit, planned_units


def _by_the_rule(units, people, done, scope, max_units):
    chosen = [u for u in units if scope == "all" or u in people]
    chosen.sort(key=lambda u: u not in people)  # stable: people's first
    todo = [u for u in chosen if u not in done]
    already = len(chosen) - len(todo)
    return (todo if max_units is None else todo[:max_units]), already


units_of = st.lists(
    st.one_of(
        st.integers(1, 60).map(lambda pk: Unit(document=pk)),
        st.sampled_from("abcdef").map(lambda site: Unit(site=site)),
    ),
    unique=True,
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    units=units_of,
    people=units_of,
    done=units_of,
    scope=st.sampled_from(["all", "people"]),
    max_units=st.one_of(st.none(), st.integers(1, 50)),
    reads=st.lists(st.integers(0, 45), max_size=4),
)
def test_the_plan_follows_the_rule_however_it_is_read(units, people, done, scope, max_units, reads):
    kept = KeptUnits(tuple(units))
    # Graded units may name documents no longer in the project: they count for nothing.
    planned, already = planned_units(kept, set(people), set(done), scope=scope, max_units=max_units)
    expected, expected_already = _by_the_rule(units, set(people), set(done), scope, max_units)
    assert already == expected_already
    assert len(planned) == len(expected)
    for n in reads:  # partial reads first, as an estimate makes them
        assert planned[:n] == expected[:n]
        if n < len(expected):
            assert planned[n] == expected[n] and planned[-1 - n] == expected[-1 - n]
    assert list(planned) == expected
    assert planned[::-1] == expected[::-1] and bool(planned) == bool(expected)


documents_of = st.lists(st.integers(1, 60).map(lambda pk: Unit(document=pk)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    pks=st.lists(st.integers(1, 60), unique=True, max_size=40).map(sorted),
    people=documents_of,
    done=st.lists(
        st.one_of(
            st.integers(1, 60).map(lambda pk: Unit(document=pk)),
            st.sampled_from("ab").map(lambda site: Unit(site=site)),
        ),
        max_size=40,
    ),
    scope=st.sampled_from(["all", "people"]),
    max_units=st.one_of(st.none(), st.integers(1, 50)),
    reads=st.lists(st.integers(0, 45), max_size=4),
)
def test_document_units_plan_as_a_tuple_of_their_units_does(
    pks, people, done, scope, max_units, reads
):
    """A per-document dimension's units as ascending pks (made into units as read) give
    the plan a tuple of the same units gives, however it is read."""
    units = tuple(Unit(document=pk) for pk in pks)
    kept = DocumentUnits(np.array(pks, dtype=np.int64))
    assert list(kept.units) == list(units) and len(kept.units) == len(units)
    assert kept.units[1:4] == list(units[1:4])
    planned, already = planned_units(kept, set(people), set(done), scope=scope, max_units=max_units)
    expected, expected_already = planned_units(
        KeptUnits(units), set(people), set(done), scope=scope, max_units=max_units
    )
    assert already == expected_already and len(planned) == len(expected)
    for n in reads:
        assert planned[:n] == expected[:n]
    assert list(planned) == list(expected)
