"""``byte_order_codes`` against its definition: the order of the encoded ids as Python
compares bytes, equal ids in input order — on ids the fixed-width prefix sort cannot
tell apart alone (longer than the prefix, trailing NUL bytes, duplicates)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.id_order import PIECE_BYTES, SMALL, byte_order_codes


def _definition(ids: list[str]) -> list[int]:
    order = sorted(range(len(ids)), key=lambda i: ids[i].encode())  # stable
    code = [0] * len(ids)
    for rank, i in enumerate(order):
        code[i] = rank
    return code


PREFIX = "https://example.org/" + "x" * PIECE_BYTES  # longer than the sorted prefix
IDS = st.lists(
    st.one_of(
        st.text(alphabet="ab\x00é文", max_size=6),
        st.text(alphabet="ab\x00", max_size=4).map(lambda tail: PREFIX + tail),
        st.text(alphabet="a\x00文", max_size=3).map(lambda tail: PREFIX * 3 + tail),
        st.sampled_from(["d9", "d10", "d2", "a", "a\x00", "a\x00\x00", "", "\x00"]),
    ),
    max_size=40,
)
MANY_IDS = st.lists(
    st.sampled_from(
        ["a", "a\x00", "b", "d9", "d10", "文", PREFIX + "a", PREFIX, PREFIX * 3 + "a\x00文"]
    ),
    min_size=300,
    max_size=400,
)


@settings(max_examples=300, deadline=None)
@given(ids=IDS)
def test_codes_follow_byte_order_with_equal_ids_in_input_order(ids):
    assert byte_order_codes(ids).tolist() == _definition(ids)


@settings(max_examples=30, deadline=None)
@given(ids=MANY_IDS)
def test_more_ids_than_python_sorts_alone_follow_byte_order(ids):
    assert len(ids) > SMALL
    assert byte_order_codes(ids).tolist() == _definition(ids)


def test_a_published_example_and_the_tie_cases():
    assert byte_order_codes(["d9", "d10", "d2"]).tolist() == [2, 0, 1]
    # Equal in a 32-byte prefix, told apart after it; a NUL-padded equal; a duplicate.
    ids = [PREFIX + "b", PREFIX + "a", "a\x00", "a", PREFIX + "a", "b"]
    # "https://…" sorts after "b"; the two equal ids keep their input order.
    assert byte_order_codes(ids).tolist() == [5, 3, 1, 0, 4, 2]
    assert byte_order_codes([]).dtype == np.int64
