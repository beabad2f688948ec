"""The visited set with its coded words bit-packed (kmc/engines/vector/packed.py) against the
set it replaces: the same keys, in the same order, the same finds, through dictionaries that
outgrow their bits, both when the set is laid out afresh and when words grow by pieces."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from kmc.engines.vector import keyset, packed
from kmc.engines.vector import engine as vector
from kmc.engines.vector.keyset import KeyFormat, Visited, first_occurrences
from kmc.engines.vector.wordcodes import WordCodes
from kmc.engines.vector.packed import Layout, PackedVisited
from kmc.api import Limits
from kmc.registry import select
from tests.conftest import build


def test_layout_packs_and_unpacks_every_word() -> None:
    """Words of 0 to 64 bits, laid out afresh and then grown by pieces, unpack to what was packed."""
    rng = np.random.default_rng(1)
    bits = [0, 1, 7, 8, 9, 16, 33, 64, 3, 5]
    n = 500

    def codes(b: list[int]) -> list[np.ndarray]:
        return [rng.integers(0, 1 << x, n, dtype=np.uint64, endpoint=False) if x < 64
                else rng.integers(0, 2**64 - 1, n, dtype=np.uint64) for x in b]

    for layout, b in [(Layout.fresh(bits), bits), (Layout.fresh(bits).grown([x + 3 for x in bits]), [x + 3 for x in bits])]:
        b = [min(x, 64) for x in b]
        if any(layout.bits(w) > 64 for w in range(len(b))):
            continue
        want = codes(b)
        lanes = [np.zeros(n, dtype=dt) for dt in layout.dtypes()]
        for w, x in enumerate(want):
            layout.pack(w, x, lanes)
        assert all(u <= 64 for u in layout.used)
        for w, x in enumerate(want):
            assert np.array_equal(layout.unpack(w, lanes, n).astype(np.uint64), x), w


def test_a_grown_word_keeps_its_first_bits_where_they_were() -> None:
    layout = Layout.fresh([5, 60])
    grown = layout.grown([7, 60])
    assert grown.pieces[0][0] == layout.pieces[0][0] and grown.pieces[1] == layout.pieces[1]
    assert grown.bits(0) == 7 and len(grown.pieces[0]) == 2


def test_a_layout_is_kept_as_a_table_and_a_lane_is_built_alone() -> None:
    """What a checkpoint writes (kmc/engines/vector/checkpoint.py): the table reads back as the
    layout, and a lane built from the words with a piece in it is the lane all words pack."""
    rng = np.random.default_rng(2)
    n = 300
    bits = [3, 9, 17, 40, 0, 1, 30]
    for layout in [Layout.fresh(bits), Layout.fresh(bits).grown([5, 9, 20, 41, 2, 1, 30])]:
        again = Layout.from_table(layout.table(), len(bits))
        assert (again.pieces, again.used) == (layout.pieces, layout.used)
        words = [rng.integers(0, 1 << layout.bits(w), n, dtype=np.uint64) for w in range(len(bits))]
        lanes = [np.zeros(n, dtype=dt) for dt in layout.dtypes()]
        for w, x in enumerate(words):
            layout.pack(w, x, lanes)
        for lane, want in enumerate(lanes):
            made: list[int] = []
            given = [lambda w=w, x=x: made.append(w) or x for w, x in enumerate(words)]
            got = layout.lane(lane, given, n)
            assert got.dtype == want.dtype and np.array_equal(got, want)
            assert made == [w for w in range(len(bits)) if any(p[0] == lane for p in layout.pieces[w])]


@pytest.mark.parametrize("table, message", [
    ([0, 0, 0, 8, 1, 0, 4, 8], "two pieces overlap in lane 0"),
    ([0, 1, 0, 8], "a lane that holds no piece"),
    ([0, 0, 60, 8], r"a piece out of range \(word 0, lane 0, shift 60, bits 8"),
    ([2, 0, 0, 8], "a piece out of range"),
    ([0, 0, 0, 0], "a piece out of range"),
    ([0, 0, 0, 40, 0, 1, 0, 40], "a word of more than 64 bits"),
    ([0, 0, 0], r"int64\[3\] is not rows of \(word, lane, shift, bits\)"),
])
def test_a_table_that_is_no_layout_is_refused(table: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Layout.from_table(np.array(table, dtype=np.int64), 2)


@pytest.mark.parametrize("relayout", [True, False])
def test_packed_visited_is_the_visited_set(monkeypatch: pytest.MonkeyPatch, relayout: bool) -> None:
    """Level after level of coded keys merged into both sets: the same sort keys in the same
    order, the same words (unpacked), the same finds (codes or words given), while word 1's
    dictionary grows past 8 bits and word 2's from one value to many."""
    if not relayout:
        monkeypatch.setattr(packed, "_RELAYOUT_KEYS", 0)
    monkeypatch.setattr(packed, "_BLOCK", 7)  # laid out afresh a few keys at a time
    monkeypatch.setattr(keyset, "mix", lambda x: (x & np.uint64(255)) << np.uint64(3))  # shared sort keys
    rng = np.random.default_rng(5)
    fmt = KeyFormat([64, 64, 64, 20])
    codes = WordCodes(fmt)
    plain, bits = Visited(fmt, codes.dtypes), PackedVisited(fmt, codes)
    held: set[tuple[int, ...]] = set()
    for size, wide, many in [(5, 4, 1), (50, 300, 1), (400, 3000, 2), (3000, 70000, 40), (200, 70000, 300)]:
        words = np.stack([rng.integers(0, 8, size), rng.integers(0, wide, size), rng.integers(0, many, size),
                          rng.integers(0, 3, size)]).astype(np.uint64)
        s, e, _ = first_occurrences(*fmt.split(words), np.arange(size))
        coded = codes.code(e, [plain, bits])
        found, pos = plain.find(s, coded)
        assert bits.find(s, coded)[0].tolist() == found.tolist()
        assert bits.find(s, e, codes.decode)[0].tolist() == found.tolist()
        new = ~found
        plain.merge(s[new], [x[new] for x in coded], pos[new])
        bits.merge(s[new], [lambda x=x: x[new] for x in coded])  # given as functions, as a level's close gives them
        held |= {tuple(int(w) for w in col) for col in fmt.join(s, e).T}
        assert np.array_equal(bits.sort_key, plain.sort_key)
        assert all(np.array_equal(a, b) for a, b in zip(bits.extras, plain.extras))
        assert len(bits.extras) == 3 and [x.tolist() for x in bits.extras[1:]] == [x.tolist() for x in plain.extras[1:]]
    assert len(bits) == len(held)
    again = pickle.loads(pickle.dumps(bits))
    assert np.array_equal(again.sort_key, bits.sort_key) and all(np.array_equal(a, b) for a, b in zip(again.extras, bits.extras))
    need = [(len(v) - 1).bit_length() for v in codes.values]
    assert need[0] > 8 and need[1] > 1
    assert [bits.layout.bits(w) for w in range(3)] == need  # each word as many bits as its dictionary needs
    assert (len(bits.layout.pieces[0]) > 1) != relayout  # grown by pieces, or laid out afresh


def test_kraft_runs_are_the_same_with_the_visited_set_packed(monkeypatch: pytest.MonkeyPatch) -> None:
    """3-broker kraft's wide keys: the same run when the packed set grows its words by pieces
    from the start as when it is laid out afresh, and as with the plain set; the packed set
    stores under 80 % of the plain one's bytes a state."""
    model, invariants = build("kraft", mode="v3.5-avoid-lrs", brokers=3, replication_factor=3, init_isr_size=2,
                              min_insync_replicas=2, fence_broker_limit=1, unclean_shutdown_limit=1)
    limits = Limits(max_states=20000)
    chosen = select(invariants, ["leader-completeness"])
    runs = []
    for new_visited in ("packed", "pieces", "plain"):
        with monkeypatch.context() as m:
            if new_visited == "pieces":
                m.setattr(packed, "_RELAYOUT_KEYS", 0)
            if new_visited == "plain":
                m.setattr(vector.Search, "new_visited", lambda self: Visited(self.fmt, self.codes.dtypes))
            r = vector.check(model, chosen, limits)
        runs.append((r.distinct_states, r.generated_states, r.depth, r.bytes_per_state))
    assert runs[0][:3] == runs[1][:3] == runs[2][:3]
    assert runs[0][3] < runs[2][3] * 0.8
