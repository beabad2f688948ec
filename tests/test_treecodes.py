"""Wide keys coded as one word each (kmc/engines/vector/treecodes.py): a code for every key, the
same code exactly for the same key, the key back from its code; workers that find codes beside
the thread that numbers them never read a wrong number; the compiled engine's checkpoints keep
the tree and refuse a tree that is not the run's.

Second computation: numpy's own distinct rows and the keys themselves."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("llvmlite")

from kmc.api import Checkpoint, Limits, SearchOptions, check  # noqa: E402
from kmc.engines.vector.treecodes import FREE, Interned, TreeCodes  # noqa: E402
from kmc.errors import BadInput  # noqa: E402
from kmc.semantics.compiled.intern import InternKernels  # noqa: E402
from tests.conftest import build  # noqa: E402
from tests.test_vector_checkpoint import KRAFT, _rewrite  # noqa: E402

U64 = np.uint64


@pytest.fixture(scope="module")
def kernels() -> InternKernels:
    return InternKernels()


def _keys(rng: np.random.Generator, words: int, n: int, spread: int) -> np.ndarray:
    """n keys (words x n) drawn from few values a word, so that keys and subtrees repeat; one
    word all ones (a value like any other)."""
    keys = rng.integers(0, spread, size=(words, n)).astype(U64) * U64(0x9E3779B97F4A7C15)
    keys[0, :7] = U64(2**64 - 1)
    return keys


def _distinct(keys: np.ndarray) -> int:
    return len(np.unique(np.ascontiguousarray(keys.T), axis=0))


def test_numbers_are_given_in_the_order_values_are_first_met(kernels: InternKernels) -> None:
    table = Interned(kernels)
    values = np.array([5, 9, 5, 2**64 - 1, 0, 9, 7], dtype=U64)
    assert table.intern(values).tolist() == [0, 1, 0, 2, 3, 1, 4]
    assert table.values[:len(table)].tolist() == [5, 9, 2**64 - 1, 0, 7]
    # find reads only what was settled
    assert (table.find(values) == FREE).all()
    table.settle()
    assert table.find(np.array([7, 8, 5], dtype=U64)).tolist() == [4, int(FREE), 0]
    # thousands more: the table grows, the numbers stay
    more = np.arange(100, 5100, dtype=U64)
    assert table.intern(more).tolist() == list(range(5, 5005))
    assert table.intern(values).tolist() == [0, 1, 0, 2, 3, 1, 4]


@pytest.mark.parametrize("words", [2, 3, 5, 47])
def test_keys_have_the_same_code_exactly_when_they_are_equal(kernels: InternKernels, words: int) -> None:
    rng = np.random.default_rng(words)
    tree = TreeCodes(words, kernels)
    keys = _keys(rng, words, 4000, 3)
    codes = tree.code(keys)
    assert len(np.unique(codes)) == _distinct(keys)
    with pytest.raises(IndexError):
        tree.decode(codes)  # decoding reads only what was settled
    tree.settle()
    assert np.array_equal(tree.decode(codes), keys)
    pairs = np.unique(np.stack([codes, np.unique(np.ascontiguousarray(keys.T), axis=0, return_inverse=True)[1]
                                .astype(U64).ravel()]), axis=1)
    assert pairs.shape[1] == len(np.unique(codes))  # code -> key is a function, and one-to-one


def test_the_whole_tree_in_one_call_numbers_as_each_table_alone(kernels: InternKernels) -> None:
    """The fused kernels (every leaf and inner node in one call) against each table searched
    alone, bottom-up; keys laid out by word (C order) or by key (a gather's F order)."""
    rng = np.random.default_rng(11)
    tree = TreeCodes(47, kernels)
    keys = _keys(rng, 47, 3000, 3)
    codes = tree.code(np.asfortranarray(keys))
    assert np.array_equal(codes, tree.code(keys))
    tree.settle()
    expected = np.empty((47 + len(tree.nodes) - 1, keys.shape[1]), dtype=np.uint32)
    for w, leaf in enumerate(tree.leaves):
        expected[w] = leaf.find(keys[w])
    for k, (left, right) in enumerate(tree.nodes[:-1], start=47):
        expected[k] = tree.inner.find((expected[left].astype(U64) << U64(32)) | expected[right].astype(U64))
    for layout, reference in ((keys, expected), (np.asfortranarray(keys), expected), (keys[:, ::-1], expected[:, ::-1])):
        found, missing, numbers = tree.find(layout)
        assert np.array_equal(numbers, reference) and not missing.any()


def test_find_gives_the_codes_of_settled_keys_and_marks_the_others(kernels: InternKernels) -> None:
    rng = np.random.default_rng(7)
    tree = TreeCodes(47, kernels)
    old = _keys(rng, 47, 2000, 3)
    codes = tree.code(old)
    _, missing, _ = tree.find(old)
    assert missing.all()  # nothing settled yet
    tree.settle()
    found, missing, _ = tree.find(old)
    assert not missing.any() and np.array_equal(found, codes)
    new = old.copy()
    new[30] += U64(1)  # one word each has not taken
    known = np.concatenate([old, new], axis=1)
    found, missing, numbers = tree.find(known)
    coded = tree.code(known, numbers)  # from what find found
    assert np.array_equal(coded, tree.code(known))
    assert np.array_equal(missing, ~np.isin(coded, codes))
    assert np.array_equal(found[~missing], coded[~missing])


def test_finding_beside_the_thread_that_numbers_never_reads_a_wrong_number(kernels: InternKernels) -> None:
    """Four threads find while one interns (its tables grow and are rehashed meanwhile): each
    key found has its right number, or none."""
    rng = np.random.default_rng(3)
    tree = TreeCodes(8, kernels)
    settled = _keys(rng, 8, 20_000, 6)
    want = tree.code(settled)
    tree.settle()
    later = [_keys(rng, 8, 5_000, 40) for _ in range(40)]
    wrong: list[str] = []
    done = threading.Event()

    def finder() -> None:
        while not done.is_set():
            for batch in (settled, later[int(rng.integers(0, len(later)))]):
                found, missing, _ = tree.find(batch)
                if batch is settled and (missing.any() or not np.array_equal(found, want)):
                    wrong.append("a settled key")
                if not np.array_equal(tree.decode(found[~missing]), batch[:, ~missing]):
                    wrong.append("a later key")

    threads = [threading.Thread(target=finder) for _ in range(4)]
    for t in threads:
        t.start()
    for batch in later:
        tree.code(batch)
    done.set()
    for t in threads:
        t.join()
    assert not wrong


def test_a_tree_coded_run_is_the_run_and_keeps_fewer_bytes_a_state() -> None:
    """kraft kip966, 2 brokers (22-word keys): TLC's count (tests/reference/tlc-kraft-kmc-view.md), in 8
    bytes a state of codes, 4 of filter and links, and the tables."""
    model, invariants = build("kraft", **KRAFT, min_insync_replicas=2, fence_broker_limit=1)
    result = check(model, invariants, engine="compiled", search=SearchOptions())
    assert (result.distinct_states, result.depth) == (290_764, 41)
    assert result.bytes_per_state is not None
    assert result.bytes_per_state < 26  # regression pin: 24.5 (12.7 of it the tables'); word codes took 29.8


@pytest.mark.parametrize("bound", [0, 200_000, 1 << 30], ids=["decoded", "kept-then-decoded", "kept"])
def test_a_level_is_the_same_whether_its_words_are_kept_or_decoded(monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    """A small level of tree codes keeps its states' words (no decode when it is expanded); one
    that grows past the bound while it is built drops them. TLC's count either way, and the same
    first violation (v3.5 on the same bounds loses a committed record)."""
    from kmc.engines.vector import engine as vector, nextlevel

    monkeypatch.setattr(vector, "DECODED_BYTES", bound)
    monkeypatch.setattr(nextlevel, "DECODED_BYTES", bound)
    model, invariants = build("kraft", **KRAFT, min_insync_replicas=2, fence_broker_limit=1)
    result = check(model, invariants, engine="compiled", search=SearchOptions(), workers=2)
    assert (result.distinct_states, result.depth) == (290_764, 41)
    v35, invariants = build("kraft", **{**KRAFT, "mode": "v3.5"}, min_insync_replicas=2, fence_broker_limit=1)
    lost = check(v35, invariants, engine="compiled", search=SearchOptions(), workers=2)
    reference = check(v35, invariants, engine="vector", search=SearchOptions())
    assert lost.stopped_by == reference.stopped_by == "violation"
    assert [(n, v.trace is not None and [s.state for s in v.trace.steps]) for n, v in lost.invariants.items()] == \
        [(n, v.trace is not None and [s.state for s in v.trace.steps]) for n, v in reference.invariants.items()]


def _kept(root: Path) -> tuple[object, object]:
    model, invariants = build("kraft", **KRAFT)
    first = check(model, invariants, engine="compiled", limits=Limits(max_depth=9), checkpoint=Checkpoint(directory=root))
    assert first.stopped_by == "max-depth"
    return model, invariants


@pytest.mark.parametrize("level, name, change, message", [
    (7, "tree-inner.npy", lambda a: np.concatenate([a, a[:1]]), "tree-inner.npy: a value numbered twice"),
    (7, "tree-leaf-3.npy", lambda a: a.astype(np.int64), "expected one of uint64"),
    (7, "tree-inner.npy", lambda a: np.concatenate([a, [np.uint64(0xFFFFFFFF << 32)]]).astype(np.uint64),
     "tree-inner.npy: a number no table of the tree gives"),
    (8, "keys-sort.npy", lambda a: np.concatenate([a[:-1], [np.uint64(2**64 - 1)]]).astype(np.uint64),
     "keys-sort.npy: a number no table of the tree gives"),
    (9, "frontier-words-0.npy", lambda a: np.full_like(a, 2**64 - 2),
     "frontier-words-0.npy: a state the tree's tables do not hold"),
    # numbers just past what the tables gave, inside the room their arrays keep for more
    (9, "frontier-words-0.npy", lambda a: np.full_like(a, (int(a.max() >> np.uint64(32)) + 3) * (2**32 + 1)),
     "frontier-words-0.npy: a state the tree's tables do not hold"),
])
def test_a_checkpoint_whose_tree_is_wrong_is_refused(tmp_path: Path, level: int, name: str, change: object,
                                                     message: str) -> None:
    model, invariants = _kept(tmp_path)
    _rewrite(tmp_path, level, name, change(np.load(tmp_path / f"level-{level:04d}" / name)))  # type: ignore[operator]
    with pytest.raises(BadInput, match=message):
        check(model, invariants, engine="compiled", checkpoint=Checkpoint(directory=tmp_path, resume=True))


def test_a_tree_coded_run_is_not_resumed_by_an_engine_that_codes_words(tmp_path: Path) -> None:
    model, invariants = _kept(tmp_path)
    with pytest.raises(BadInput, match="keeps its keys as tree codes, and this kmc with these settings keeps them "
                                       "word by word"):
        check(model, invariants, engine="vector", checkpoint=Checkpoint(directory=tmp_path, resume=True))
