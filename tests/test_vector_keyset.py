"""Keys with more than one word: exact even when different keys share a sort key.

The sort key of a multi-word key mixes its words; different keys sharing it are rare, so
these tests make them common by replacing the mix with a poor one, and compare with a
plain Python computation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kmc.engines.explicit import bfs
from kmc.engines.vector.wordcodes import WordCodes
from kmc.engines.vector import keyset
from kmc.engines.vector import engine as vector
from kmc.engines.vector.keyset import KeyFormat, Visited, first_occurrences
from kmc.engines.vector import levelkeys
from kmc.engines.vector.levelkeys import LevelKeys
from kmc.api import Limits, SearchOptions
from kmc.registry import select
from tests.conftest import build

keys_2w = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=60)


@pytest.fixture(params=["laid out afresh", "pieces"])
def relayout(request, monkeypatch):
    """A level's layout laid out afresh when a word needs more bits (a small level), or given
    one more piece (`_RELAYOUT_KEYS` 0: as a level of more than a million keys)."""
    if request.param == "pieces":
        monkeypatch.setattr(levelkeys, "_RELAYOUT_KEYS", 0)
    return request.param


@pytest.fixture(params=["good mix", "poor mix"])
def mix(request, monkeypatch):
    if request.param == "poor mix":  # every key with the same first word low bits collides
        monkeypatch.setattr(keyset, "mix", lambda x: (x * np.uint64(0)) + np.uint64(5))
    return request.param


def as_words(keys: list[tuple[int, int]]) -> np.ndarray:
    return np.array(keys, dtype=np.uint64).reshape(-1, 2).T.copy()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=keys_2w, earlier=keys_2w)
def test_first_occurrences_and_visited_are_exact(mix, batch, earlier) -> None:
    fmt = KeyFormat([64, 20])
    visited = Visited(fmt)
    for chunk in (earlier[: len(earlier) // 2], earlier[len(earlier) // 2:]):  # two merges
        s, e, _ = first_occurrences(*fmt.split(as_words(chunk)), np.arange(len(chunk)))
        found, pos = visited.find(s, e)
        visited.merge(s[~found], [x[~found] for x in e], pos[~found])
    assert len(visited) == len(set(earlier))

    rank = np.arange(len(batch))[::-1].copy()  # any order of ranks
    s, e, first = first_occurrences(*fmt.split(as_words(batch)), rank)
    got = {tuple(int(w) for w in fmt.join(s, e)[:, j]): int(first[j]) for j in range(len(s))}
    want: dict[tuple[int, int], int] = {}
    for key, r in zip(batch, rank.tolist()):
        want[key] = min(r, want.get(key, r))
    assert got == want
    found, _ = visited.find(s, e)
    assert {k for k, f in zip(got, found) if f} == set(batch) & set(earlier)


@settings(max_examples=50, deadline=None)
@given(batch=st.lists(st.integers(0, 7), min_size=1, max_size=60), high=st.sampled_from([0, 40, 63]))
def test_first_occurrences_of_one_word_keys(batch, high) -> None:
    """One-word keys narrow enough to share a 64-bit word with their ranks (one sort of
    key * 2**b + rank) and keys too wide for it (an argsort) give each key's smallest rank."""
    keys = np.array(batch, dtype=np.uint64) << np.uint64(high)  # 63: some keys above 2**63, some wrap to 0
    rank = np.random.default_rng(len(batch)).permutation(len(batch)).astype(np.int64)
    s, e, first = first_occurrences(keys, [], rank)
    want: dict[int, int] = {}
    for key, r in zip(keys.tolist(), rank.tolist()):
        want[key] = min(r, want.get(key, r))
    assert e == [] and s.tolist() == sorted(want) and first.tolist() == [want[k] for k in sorted(want)]
    by_position = first_occurrences(keys, [], np.arange(len(keys)))  # rank None: the positions
    assert all(np.array_equal(x, y) for x, y in zip(first_occurrences(keys, [], None), by_position))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(keys_2w, min_size=1, max_size=4), high=st.sampled_from([0, 63]))
def test_first_occurrences_of_sorted_runs(mix, chunks, high) -> None:
    """Several chunks' distinct keys, concatenated (each run sorted by sort key), merged with
    `runs=True`: the same keys and smallest ranks as sorting the whole batch afresh, with one
    and two words (two words: sort keys shared by different keys under the poor mix)."""
    fmt = KeyFormat([64, 20])
    runs = [first_occurrences(*fmt.split(as_words(c)), np.arange(len(c)) * 7 % 5) for c in chunks]
    s = np.concatenate([r[0] for r in runs]) | (np.uint64(1) << np.uint64(high))
    e = [np.concatenate([r[1][0] for r in runs])]
    rank = np.concatenate([r[2] for r in runs])
    for extras in (e, []):
        merged = first_occurrences(s, extras, rank, runs=True)
        fresh = first_occurrences(s, extras, rank)
        assert all(np.array_equal(a, b) for a, b in zip([merged[0], *merged[1], merged[2]],
                                                         [fresh[0], *fresh[1], fresh[2]]))
        positions = first_occurrences(s, extras, None, runs=True)  # rank None: each element's position
        by_position = first_occurrences(s, extras, np.arange(len(s)))
        assert all(np.array_equal(a, b) for a, b in zip([positions[0], *positions[1], positions[2]],
                                                         [by_position[0], *by_position[1], by_position[2]]))


def test_vector_engine_is_exact_with_a_poor_mix(mix) -> None:
    """Two-word keys (three replicas): same run as the scalar engine, collisions or not."""
    model, invariants = build("replication", mode="kip279", replicas=3, max_leader_epoch=3)
    limits = Limits(max_states=3000)
    a = bfs.check(model, select(invariants, ["strong-isr"]), limits)
    b = vector.check(model, select(invariants, ["strong-isr"]), limits)
    assert (a.distinct_states, a.generated_states, a.depth) == (b.distinct_states, b.generated_states, b.depth)


@pytest.mark.parametrize("block,native", [(1, False), (3, False), (1 << 20, False), (1 << 20, True)])
def test_merge_in_place_equals_a_sorted_insert(monkeypatch: pytest.MonkeyPatch, block: int, native: bool) -> None:
    """Merging level after level into the visited set, with its arrays grown in place and its
    keys shifted a block at a time (or natively, a memmove per run of stored keys: the
    compiled engine's), gives the same arrays as numpy's sorted insert."""
    monkeypatch.setattr(keyset, "_SHIFT_BLOCK", block)
    rng = np.random.default_rng(7)
    fmt = KeyFormat([64, 20])
    if native:
        pytest.importorskip("llvmlite")
        from kmc.semantics.compiled.keys import KeyKernels

        fmt.insert = KeyKernels(2).insert
    visited = Visited(fmt)
    want_s, want_e = np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint32)
    for size in [0, 1, 5, 40, 3, 200, 17]:
        s = rng.integers(0, 60, size).astype(np.uint64)  # small sort keys: many collisions
        e = rng.integers(0, 4, size).astype(np.uint32)
        s, [e], _ = first_occurrences(s, [e], np.arange(size))
        known, pos = visited.find(s, [e])
        new = ~known
        visited.merge(s[new], [lambda: e[new]] if size == 40 else [e[new]], pos[new])  # a word made when written
        want_pos = np.searchsorted(want_s, s[new])
        want_s, want_e = np.insert(want_s, want_pos, s[new]), np.insert(want_e, want_pos, e[new])
        assert np.array_equal(visited.sort_key, want_s) and np.array_equal(visited.extras[0], want_e)
    assert len(visited) == len(set(zip(want_s.tolist(), want_e.tolist())))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(keys_2w, min_size=1, max_size=12))
def test_runs_hold_exactly_what_the_chunks_added(mix, chunks) -> None:
    """A level's keys as sorted runs (merged like a binary counter): each chunk finds exactly the
    keys an earlier chunk added, and the merged run is every key, sorted as the visited set is."""
    fmt = KeyFormat([64, 20])
    runs, held = keyset.Runs(fmt), set()
    for chunk in chunks:
        s, e, _ = first_occurrences(*fmt.split(as_words(chunk)), np.arange(len(chunk)))
        found = runs.find(s, e)
        keys = [tuple(int(w) for w in col) for col in fmt.join(s, e).T]
        assert [k in held for k in keys] == found.tolist()
        runs.add(s[~found], [x[~found] for x in e])
        held |= set(keys)
        sizes = [len(r) for r in runs.runs]
        assert all(a > 2 * b for a, b in zip(sizes, sizes[1:]))  # each run over twice the next newer
    merged = runs.merged()
    assert len(merged) == len(held) and np.all(np.diff(merged.sort_key.astype(np.float64)) >= 0)
    assert {tuple(int(w) for w in col) for col in fmt.join(merged.sort_key, merged.extras).T} == held


@settings(max_examples=40, deadline=None)
@given(levels=st.lists(st.sets(st.integers(0, 2**64 - 1), max_size=50), max_size=8))
def test_one_word_keys_merge_by_a_stable_sort(levels) -> None:
    """One-word keys merge into the visited set by appending and a stable sort: the same
    sorted array as a sorted insert."""
    visited, want = Visited(KeyFormat([64])), set()
    for level in levels:
        new = np.array(sorted(level - want), dtype=np.uint64)
        visited.merge(new, [])
        want |= level
        assert visited.sort_key.tolist() == sorted(want)


def test_coded_words_are_exact_and_widen(mix) -> None:
    """Wide keys stored with their other words coded (WordCodes): finds and merges agree with a
    plain set through a dictionary outgrowing uint8 (and so widening what is stored), the
    codes decode to the words, and a find given the words themselves (the stored codes
    decoded to compare) finds the same keys. Each dictionary's table stays its values sorted,
    and a code once given keeps its word."""
    rng = np.random.default_rng(3)
    fmt = KeyFormat([64, 64, 20])
    codes = WordCodes(fmt)
    visited, held = Visited(fmt, codes.dtypes), set()
    given: list[tuple[list[np.ndarray], list[np.ndarray]]] = []  # (codes, their words) of every round
    for size in [5, 50, 400, 3000, 200]:  # word 1 takes up to 1,000 values: past 256
        words = np.stack([rng.integers(0, 8, size), rng.integers(0, 1000, size), rng.integers(0, 3, size)]).astype(np.uint64)
        s, e, _ = first_occurrences(*fmt.split(words), np.arange(size))
        runs = keyset.Runs(fmt, codes)
        coded = codes.code(e, [visited, *runs.runs])
        given.append((coded, e))
        for (ascending, index), values in zip(codes.tables, codes.values):
            assert np.array_equal(values[index], ascending) and np.all(np.diff(ascending.astype(np.float64)) > 0)
        assert all(np.array_equal(a, b) for c, w in given for a, b in zip(codes.decode(c), w))
        into = np.empty((len(e), size), dtype=np.uint64)[:, :len(s)]
        codes.decode_into(coded, into)
        assert np.array_equal(into, np.stack(e).astype(np.uint64))
        found, _ = visited.find(s, coded)
        keys = [tuple(int(w) for w in col) for col in fmt.join(s, e).T]
        assert found.tolist() == [k in held for k in keys]
        assert visited.find(s, e, codes.decode)[0].tolist() == found.tolist()
        visited.merge(s[~found], [x[~found] for x in coded])
        held |= set(keys)
    assert codes.dtypes[0] == np.uint16 and visited.extras[0].dtype == np.uint16
    assert len(visited) == len(held)
    assert {tuple(int(w) for w in col) for col in fmt.join(visited.sort_key, codes.decode(visited.extras)).T} == held


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 300), st.integers(0, 2)),
                                min_size=1, max_size=80), min_size=1, max_size=10))
def test_level_keys_hold_each_key_once_at_its_position(mix, relayout, chunks) -> None:
    """A coded level's keys (LevelKeys: runs of sort keys and positions, the coded words kept
    once by position, bit-packed): each chunk finds exactly the keys an earlier chunk added,
    through a dictionary outgrowing uint8 mid-level (its layout laid out afresh, or, monkeypatched
    below, given more pieces); at the end every key is sorted with the position it was given,
    and the keys read in the level's order are at those positions."""
    fmt = KeyFormat([64, 64, 20])
    codes = WordCodes(fmt)
    level = LevelKeys(fmt, codes)
    at: dict[tuple[int, ...], int] = {}
    for chunk in chunks:
        s, e, _ = first_occurrences(*fmt.split(np.array(chunk, dtype=np.uint64).T.copy()), np.arange(len(chunk)))
        coded = codes.code(e, [level])
        found = level.find(s, coded)
        keys = [tuple(int(w) for w in col) for col in fmt.join(s, e).T]
        assert found.tolist() == [k in at for k in keys]
        new = np.flatnonzero(~found)
        place = np.arange(len(at), len(at) + len(new), dtype=np.int64)[::-1]  # any order of positions
        level.add(s[new], [*(x[new] for x in coded), place])
        at.update({keys[i]: int(p) for i, p in zip(new.tolist(), place.tolist())})
    sort_key, place, in_order, lanes, layout = level.in_order()
    assert len(sort_key) == len(at) and np.all(np.diff(sort_key.astype(np.float64)) >= 0)
    assert np.array_equal(in_order[place], sort_key)
    words = [layout.unpack(w, layout.wide(lanes), len(in_order)) for w in range(fmt.words - 1)]
    got = [tuple(int(w) for w in col) for col in fmt.join(in_order, codes.decode(words)).T]
    assert dict(zip(got, range(len(got)))) == at  # each key at the position it was given


@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40), st.data())
def test_rows_read_what_gathering_would(values: list[int], data: st.DataObject) -> None:
    """keyset.Rows, the words of keys searched run after run, read only where indexed: the
    rows of rows of an array are those a gather of a gather gives."""
    x = np.array(values, dtype=np.uint64)
    indices = st.lists(st.integers(0, len(x) - 1), min_size=1, max_size=30).map(np.array)
    outer = data.draw(indices)
    inner = data.draw(st.lists(st.integers(0, len(outer) - 1), min_size=1, max_size=30).map(np.array))
    rows = keyset.Rows(keyset.Rows(x, outer), inner)
    assert np.array_equal(rows[np.arange(len(inner))], x[outer][inner])
    assert rows[len(inner) - 1] == x[outer][inner][-1]
