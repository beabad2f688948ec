"""Exact packing: states to uint64 words and back, order-preserving, one word when it fits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmc.engines.vector.packing import Packing
from kmc.errors import BadInput
from tests.conftest import build


@st.composite
def ranges_and_states(draw: st.DrawFn, max_positions: int = 40) -> tuple[list[int], list[int], list[tuple[int, ...]]]:
    n = draw(st.integers(1, max_positions))
    lo = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    span = draw(st.lists(st.sampled_from([0, 1, 2, 4, 15, 255, 2**20, 2**40]), min_size=n, max_size=n))
    hi = [a + s for a, s in zip(lo, span)]
    states = draw(st.lists(st.tuples(*[st.integers(a, b) for a, b in zip(lo, hi)]), min_size=1, max_size=8))
    return lo, hi, states


@settings(max_examples=200, deadline=None)
@given(ranges_and_states())
def test_pack_unpack_round_trip_scalar_and_vector(case) -> None:
    lo, hi, states = case
    p = Packing(lo, hi)
    block = np.array(states, dtype=np.int64)
    words = p.pack(block)
    assert words.shape == (p.words, len(states)) and words.dtype == np.uint64
    for j, state in enumerate(states):
        assert p.pack_state(state) == tuple(int(w) for w in words[:, j])
        assert p.unpack_state(p.pack_state(state)) == state
    assert (p.unpack(words) == block).all()


@settings(max_examples=200, deadline=None)
@given(ranges_and_states())
def test_word_order_is_tuple_order(case) -> None:
    lo, hi, states = case
    p = Packing(lo, hi)
    assert sorted(states) == sorted(states, key=p.pack_state)
    assert len({p.pack_state(s) for s in states}) == len(set(states))  # exact: no collisions


def test_one_word_exactly_when_the_ranges_fit_in_64_bits() -> None:
    assert Packing([0] * 64, [1] * 64).words == 1
    assert Packing([0] * 65, [1] * 65).word_bits == [64, 1]
    assert Packing([-(2**63)], [2**63 - 1]).word_bits == [64]
    three = Packing([0] * 41, [2] * 41)  # 3**40 < 2**64 < 3**41
    assert three.spans == [(0, 40), (40, 41)]


def test_a_position_beyond_64_bit_integers_is_refused() -> None:
    with pytest.raises(BadInput, match=r"ranges over \[0, 9223372036854775808\]: packing needs values that fit"):
        Packing([0, 0], [1, 2**63])


def test_replication_packs_in_one_word_with_two_replicas_and_two_with_three() -> None:
    two, _ = build("replication")
    three, _ = build("replication", replicas=3, max_leader_epoch=3)
    assert Packing.for_schema(two.schema).word_bits == [50]
    p = Packing.for_schema(three.schema)
    assert p.words == 2 and p.word_bits == [64, 20] and 83 < p.bits < 84
    assert p.describe() == "55 positions, 83.8 bits of ranges, 2 word(s) of 64 + 20 bits"


def test_largest_values_do_not_overflow() -> None:
    p = Packing([-1] * 70, [2] * 70)
    top = tuple([2] * 70)
    words = p.pack(np.array([top, [-1] * 70]))
    assert p.pack_state(top) == tuple(int(w) for w in words[:, 0])
    assert [int(w) for w in words[:, 1]] == [0] * p.words
    assert p.unpack_state(p.pack_state(top)) == top
