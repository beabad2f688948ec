"""`--checkpoint-dir DIR` and `--resume` for the vector and compiled engines: each completed
level on disk, and a stopped run continued from the last one.

After level L is merged into the visited set, DIR/level-LLLL/ gets, as NumPy .npy files (read
back without pickles: data, never code):

- `keys-sort.npy`: the level's sort keys, sorted, and the other words of its keys in that
  order: coded keys (kmc/engines/vector/keyset.py) bit-packed into lanes, each index in the bits
  its dictionary needs, a key's lanes side by side (`keys-rows.npy`, so that a search on disk
  reads them in one page, and `keys-layout.npy`, where each word's bits are:
  kmc/engines/vector/packed.py); keys not coded a word a file (`keys-word-W.npy`). Formats 3
  and 4 kept a file a lane (`keys-lane-L.npy`), format 2 coded keys a word a file too;
- `tree-leaf-W.npy`, `tree-inner.npy` (the compiled engine, whose keys are tree codes,
  kmc/engines/vector/treecodes.py): the values each of the tree's tables first numbered while
  the level was found, in number order; `keys-sort.npy` then holds the level's codes, and the
  frontier its codes in order (`frontier-words-0.npy`), which `--resume` decodes to check them;
- `links-children.npy`, `links-action.npy` (from level 2): how many of the level's states each
  state of the level before reached first (kmc/engines/vector/links.py), and the instance that
  reached each state, for counterexamples (formats 2 and 3 kept each state's parent,
  `links-parent.npy`);
- `frontier-*.npy`: the level's states in the scalar engine's order (the keys again, coded, or
  the packed words with --symmetry), the word dictionaries, and (from level 2) each state of
  the level before's steps, which give the counts at a violation found in this level
  (kmc/engines/vector/verdicts.py); kept for the last level only. The frontier's states are
  checked against the invariants when they are expanded, after `--resume`.

Then the manifest is replaced (kmc/engines/checkpoints.py: the run's identity, the counts, the
violations found so far, every file's size and SHA-256 under a digest). `--resume` proves the
directory first, checks it is the same run (model fingerprint, settings, invariants, search
options), checks every array's type and length against the manifest, rebuilds the visited set
from the levels' keys (spilling past --memory-limit as a run does) and goes on from the last
level's frontier: the results are those of a run that never stopped. A level of an older format
is rewritten in this one as it is loaded, for the disk it frees.
"""

from __future__ import annotations

import json
from collections import deque
from concurrent.futures import Executor, Future
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence, Union

import numpy as np

from kmc.engines import checkpoints
from kmc.engines.checkpoints import Layout, level_dir
from kmc.engines.interface import SearchOptions
from kmc.engines.vector import packed
from kmc.engines.vector.keyset import KeyFormat, New, Visited
from kmc.engines.vector.wordcodes import WordCodes
from kmc.engines.vector.treecodes import TreeCodes
from kmc.engines.vector.levels import Level
from kmc.engines.vector.links import Parents
from kmc.engines.vector.packed import PackedVisited
from kmc.engines.vector.verdicts import Expansion
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model

# 5: a key's lanes in a row; 4: a file a lane, parent links as child counts; 3: each state's
# parent, coded keys bit-packed; 2: and a word a file
LAYOUT = Layout("vector", 5, "frontier-", reads_older=(2, 3, 4))
_DECODED_AT_ONCE = 1 << 16  # frontier states decoded at a time to check them at --resume (24 MiB of kraft's)
_CODE_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64))


def identity(model: Model, invariants: Sequence[Invariant], search: SearchOptions, fmt: KeyFormat,
             tree: bool = False) -> dict[str, Any]:
    """What names a run in its manifest (as JSON reads it back); `tree`: keys kept as their tree
    codes (kmc/engines/vector/treecodes.py)."""
    named = {"model": model.name, "settings": dict(model.settings), "invariants": [i.name for i in invariants],
             "model_fingerprint": checkpoints.fingerprint(model, invariants), "symmetry": search.symmetry,
             "keep_going": search.keep_going, "key_words": fmt.words, **({"key_codes": "tree"} if tree else {})}
    return json.loads(json.dumps(named))


class ToFile:
    """A file written by `write(path)` itself, not an array gathered then saved: a level's rows
    filled a lane at a time in the file's mapping, so that they take page cache, not 2.6 GB of
    the run's memory (a level of 65 million kraft states)."""

    def __init__(self, write: Callable[[Path], None]):
        self.write = write


Arrays = dict[str, Union[Callable[[], np.ndarray], ToFile]]  # name -> the array, gathered when called (one at a time)


def write_level(root: Path, level: int, arrays: Arrays, manifest: dict[str, Any], pool: Executor | None = None,
                ways: int = 1) -> None:
    """Level `level`'s arrays in its directory, then the manifest naming them."""
    d = level_dir(root, level)
    d.mkdir(parents=True, exist_ok=True)
    _save(d, arrays, pool, ways)
    checkpoints.write_manifest(root, {**manifest, "depth": level}, LAYOUT)


def _save(d: Path, arrays: Arrays, pool: Executor | None = None, ways: int = 1) -> None:
    """Each array written as `name`.npy in `d`. With a pool, `ways` arrays are gathered at a time
    on its threads while this one writes: a level's lanes each gather and pack dozens of words
    (about two minutes a level of 60 million kraft states, on one thread)."""
    def write(name: str, a: np.ndarray | None) -> None:
        if a is not None:  # None: a ToFile wrote it
            np.save(d / f"{name}.npy", np.ascontiguousarray(a), allow_pickle=False)

    def made(name: str, gather: Callable[[], np.ndarray] | ToFile) -> np.ndarray | None:
        return gather.write(d / f"{name}.npy") if isinstance(gather, ToFile) else gather()

    if pool is None:
        for name, gather in arrays.items():
            write(name, made(name, gather))
        return
    pending: deque[tuple[str, Future]] = deque()
    for name, gather in arrays.items():
        pending.append((name, pool.submit(made, name, gather)))
        if len(pending) > ways:
            write(*_result(pending.popleft()))
    for item in pending:
        write(*_result(item))


def _result(item: tuple[str, Future]) -> tuple[str, np.ndarray]:
    return item[0], item[1].result()


class Stored:
    """A proved checkpoint directory, read back array by array with their types and lengths checked."""

    def __init__(self, root: Path, expected: dict[str, Any]):
        self.root = root
        self.manifest = checkpoints.proved(root, LAYOUT)
        if self.manifest.get("key_codes") != expected.get("key_codes"):
            kept, this = (("as tree codes", "word by word") if self.manifest.get("key_codes") == "tree"
                          else ("word by word", "as tree codes"))
            raise BadInput(f"--resume: the run in {root} keeps its keys {kept}, and this kmc with these settings keeps "
                           f"them {this} (kmc/engines/vector/treecodes.py): start the run afresh, or resume it with "
                           "the kmc and the engine that kept it")
        checkpoints.same_run(root, self.manifest, expected)
        self.depth = int(self.manifest["depth"])
        self.sizes = [int(lv["keys"]) for lv in self.manifest["levels"]]

    def array(self, level: int, name: str, dtypes: Sequence[np.dtype], length: int | None) -> np.ndarray:
        """An array of level `level`, mapped read-only: BadInput unless it is one-dimensional, of
        one of `dtypes` and of `length` elements."""
        path = level_dir(self.root, level) / f"{name}.npy"
        try:
            a = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as e:
            raise BadInput(f"--resume: {path}: not a NumPy array file kmc wrote ({e})") from e
        if a.ndim != 1 or a.dtype not in dtypes or (length is not None and len(a) != length):
            raise BadInput(f"--resume: {path}: {a.dtype}{list(a.shape)}, expected one of "
                           f"{', '.join(str(d) for d in dtypes)} with {length} elements: the run cannot be resumed")
        return a

    def keys(self, level: int, fmt: KeyFormat, codes: WordCodes | None) -> tuple[np.ndarray, list[New]]:
        """Level `level`'s keys: the sort keys, and the other words (arrays, or functions that
        unpack them from lanes), every index within its dictionary (given `codes`)."""
        size = self.sizes[level - 1]
        sort_key = self.array(level, "keys-sort", [np.dtype(np.uint64)], size)
        if codes is None or "keys-layout.npy" not in self.manifest["levels"][level - 1]["files"]:
            return sort_key, list(self.words(level, "keys", fmt, codes))
        layout = self.layout(level, fmt)
        lanes = [np.ascontiguousarray(a) for a in self.lanes(level, layout)]  # a pass over the rows, not one a word
        return sort_key, [partial(self._unpacked, level, layout, lanes, w, len(codes.values[w]))
                          for w in range(fmt.words - 1)]

    def lanes(self, level: int, layout: packed.Layout) -> list[np.ndarray]:
        """Level `level`'s lanes: views of its rows, or a file a lane (formats 3 and 4)."""
        size = self.sizes[level - 1]
        if "keys-rows.npy" in self.manifest["levels"][level - 1]["files"]:
            return layout.of_rows(self.array(level, "keys-rows", [layout.row_dtype()], size))
        return [self.array(level, f"keys-lane-{lane}", [dt], size) for lane, dt in enumerate(layout.dtypes())]

    def layout(self, level: int, fmt: KeyFormat) -> packed.Layout:
        """Where level `level`'s coded keys have each word's bits (kmc/engines/vector/packed.py)."""
        try:
            return packed.Layout.from_table(np.array(self.array(level, "keys-layout", [np.dtype(np.int64)], None)),
                                            fmt.words - 1)
        except ValueError as e:
            raise BadInput(f"--resume: {level_dir(self.root, level)}/keys-layout.npy: {e}: the run cannot be resumed") \
                from e

    def older(self, level: int, codes: WordCodes | None) -> list[str]:
        """The kinds of file (name prefixes) of level `level` kept in an older format: coded keys
        a word a file (format 2), a lane a file (formats 3 and 4), each state's parent (formats 2
        and 3)."""
        files = self.manifest["levels"][level - 1]["files"]
        older = []
        if codes is not None and codes.values and "keys-layout.npy" not in files:
            older.append("keys-word-")
        if "keys-layout.npy" in files and "keys-rows.npy" not in files:
            older.append("keys-lane-")
        if "links-parent.npy" in files:
            older.append("links-parent")
        return older

    def rewrite(self, level: int, older: list[str], fmt: KeyFormat, codes: WordCodes | None, instances: int) -> None:
        """Level `level`'s files of the `older` kinds rewritten as this kmc writes them: a
        format-2 level takes about 60 % more disk, a format-3 one 3 bytes a state more, and a
        search on disk reads a page of a format-4 level's keys for each of its lanes. If the run
        stops before the manifest names the new files, or before the old ones are deleted,
        --resume names the files left over, to remove."""
        arrays: Arrays = {}
        if "keys-word-" in older:
            assert codes is not None
            arrays.update(key_arrays(*self.keys(level, fmt, codes), codes))
            del arrays["keys-sort"]
        if "keys-lane-" in older:
            layout = self.layout(level, fmt)
            arrays["keys-rows"] = rows_file(layout, self.lanes(level, layout), self.sizes[level - 1])
        if "links-parent" in older:
            parents = self.array(level, "links-parent", [np.dtype(np.int32)], self.sizes[level - 1])
            if len(parents) and not bool(np.all(parents[1:] >= parents[:-1])):
                raise BadInput(f"--resume: {level_dir(self.root, level)}/links-parent.npy: the parents are not in "
                               "order: the run cannot be resumed")
            arrays["links-children"] = partial(self._children, level, parents, instances)
        d = level_dir(self.root, level)
        _save(d, arrays)
        self.manifest = checkpoints.relist(self.root, self.manifest, level, leaving=tuple(older))
        for prefix in older:
            for f in d.glob(prefix + "*"):
                f.unlink()

    def _children(self, level: int, parents: np.ndarray, instances: int) -> np.ndarray:
        before = self.sizes[level - 2]
        if len(parents) and (int(parents[0]) < 0 or int(parents[-1]) >= before):
            raise BadInput(f"--resume: {level_dir(self.root, level)}: a parent link out of range: "
                           "the run cannot be resumed")
        return Parents.of(parents, before, instances).children

    def key_bytes(self, level: int) -> int:
        """The bytes of level `level`'s keys on disk."""
        files = self.manifest["levels"][level - 1]["files"]
        return sum(int(size) for name, (size, _) in files.items() if name.startswith("keys-"))

    def words(self, level: int, name: str, fmt: KeyFormat, codes: WordCodes | None) -> list[np.ndarray]:
        """The other words of level `level`'s keys a word a file (`name`-word-W), every index
        within its dictionary (given `codes`)."""
        size = self.sizes[level - 1]
        out = [self.array(level, f"{name}-word-{w}", _CODE_DTYPES if codes is not None else [dt], size)
               for w, dt in enumerate(fmt.extra_dtypes)]
        for w, x in enumerate(out):
            if codes is not None and len(x) and int(x.max()) >= len(codes.values[w]):
                raise BadInput(f"--resume: {level_dir(self.root, level)}/{name}-word-{w}.npy: a code beyond its "
                               "dictionary: the run cannot be resumed")
        return out

    def _unpacked(self, level: int, layout: packed.Layout, lanes: list[np.ndarray], w: int, known: int) -> np.ndarray:
        """Word w's indices, unpacked from `lanes`: BadInput unless each is below `known`."""
        x = layout.unpack(w, lanes, self.sizes[level - 1])
        if len(x) and int(x.max()) >= known:
            raise BadInput(f"--resume: {level_dir(self.root, level)}/keys-rows.npy: word {w} has a code beyond its "
                           "dictionary: the run cannot be resumed")
        return x

    def codes(self, fmt: KeyFormat) -> WordCodes:
        """The word dictionaries of the last level."""
        codes = WordCodes(fmt)
        for w in range(fmt.words - 1):
            values = np.array(self.array(self.depth, f"frontier-codes-{w}", [np.dtype(np.uint64)], None))
            if len(np.unique(values)) != len(values):
                raise BadInput(f"--resume: {level_dir(self.root, self.depth)}/frontier-codes-{w}.npy: a dictionary "
                               "with a value twice: the run cannot be resumed")
            codes.restore(w, values)
        return codes

    def tree(self, level: int, tree: TreeCodes, codes: np.ndarray) -> None:
        """The values level `level` first numbered, numbered again in `tree`'s tables (the
        leaves' first, then the inner nodes', whose halves must be numbers given), and the
        level's codes (`codes`, its sorted keys) checked the same way."""
        for name, table in tree.tables().items():
            values = self.array(level, name, [np.dtype(np.uint64)], None)
            if not table.extend(values):
                raise BadInput(f"--resume: {level_dir(self.root, level)}/{name}.npy: a value numbered twice: "
                               "the run cannot be resumed")
        for name, pairs in (("tree-inner", tree.inner.settled()), ("keys-sort", codes)):
            if len(pairs) and max(int(pairs.max() >> np.uint64(32)), int((pairs & np.uint64(0xFFFFFFFF)).max())) \
                    >= tree.bound():
                raise BadInput(f"--resume: {level_dir(self.root, level)}/{name}.npy: a number no table of the "
                               "tree gives: the run cannot be resumed")

    def decodes(self, frontier: Level) -> None:
        """BadInput unless the tree gives every state of the frontier back (not where a code,
        or a node under it, has a number its table did not give), a slice at a time."""
        for start in range(0, len(frontier), _DECODED_AT_ONCE):
            try:
                frontier.words(start, start + _DECODED_AT_ONCE)
            except IndexError:
                raise BadInput(f"--resume: {level_dir(self.root, self.depth)}/frontier-words-0.npy: a state the "
                               "tree's tables do not hold: the run cannot be resumed") from None

    def links(self, level: int, before: int, instances: int, iid_dtype: np.dtype) -> tuple[Parents, np.ndarray]:
        """The parent links of level `level` (2 or more), checked against the level before's size
        (`before`) and the model's instance count."""
        size = self.sizes[level - 1]
        children = self.array(level, "links-children", [np.min_scalar_type(instances)], before)
        iids = self.array(level, "links-action", [np.dtype(iid_dtype)], size)
        if size and (int(iids.max()) >= instances or int(children.max()) > instances
                     or int(children.sum(dtype=np.int64)) != size):
            raise BadInput(f"--resume: {level_dir(self.root, level)}: a parent link out of range: "
                           "the run cannot be resumed")
        return Parents(children), iids

    def frontier(self, fmt: KeyFormat, codes: WordCodes | None, words: int,
                 decode: Callable[[np.ndarray], np.ndarray] | None = None) -> Level:
        """The last level's states, as the run held them: coded when `codes` are given, as tree
        codes (one row) that `decode` reads when it is."""
        level, size = self.depth, self.sizes[-1]
        if codes is None:
            rows = [self.array(level, f"frontier-words-{w}", [np.dtype(np.uint64)], size) for w in range(words)]
            return Level.of_words(np.stack(rows) if rows else np.zeros((0, size), dtype=np.uint64), decode)
        sort_key = self.array(level, "frontier-sort", [np.dtype(np.uint64)], size)
        return Level.of_codes(sort_key, self.words(level, "frontier", fmt, codes), fmt, codes)


def frontier_arrays(level: Level, codes: WordCodes | None) -> Arrays:
    """The files of a level's frontier (its states in order), and of the dictionaries that read it and the keys."""
    out: Arrays = {}
    for name, gather in level.columns():
        if name == "words":
            out.update({f"frontier-words-{w}": partial(_row, gather, w) for w in range(len(gather()))})
        else:
            out[f"frontier-{name}"] = gather
    if codes is not None:
        out.update({f"frontier-codes-{w}": partial(_same, values) for w, values in enumerate(codes.values)})
    return out


def _row(words: Callable[[], np.ndarray], w: int) -> np.ndarray:
    return words()[w]


def _same(a: np.ndarray) -> np.ndarray:
    return a


def kept_keys(root: Path, number: int, size: int, fmt: KeyFormat, codes: WordCodes | None) -> Visited:
    """Level `number`'s keys as this run kept them in `root` (sorted), mapped read-only: a run of
    the visited set on disk that takes no disk of its own (kmc/engines/vector/disk.py). Plain
    arrays over the mapping: a search indexes them dozens of times a chunk, and a memmap's
    indexing runs Python code each time."""
    sort_key = np.asarray(kept_array(root, number, "keys-sort", size))
    table = level_dir(root, number) / "keys-layout.npy"
    if codes is None or not table.exists():
        return Visited.holding(fmt, sort_key, [np.asarray(kept_array(root, number, f"keys-word-{w}", size))
                                               for w in range(fmt.words - 1)])
    try:
        layout = packed.Layout.from_table(np.load(table, allow_pickle=False), fmt.words - 1)
    except (OSError, ValueError) as e:
        raise BadInput(f"--checkpoint-dir: {table}: gone or changed while the run read it ({e})") from e
    rows = np.asarray(kept_array(root, number, "keys-rows", size))
    return PackedVisited.over(fmt, codes, layout, sort_key, layout.of_rows(rows))


def kept_array(root: Path, number: int, name: str, size: int) -> np.ndarray:
    """Array `name` of level `number` as this run kept it in `root` (or proved it, resuming), mapped read-only."""
    path = level_dir(root, number) / f"{name}.npy"
    try:
        a = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise BadInput(f"--checkpoint-dir: {path}: gone or changed while the run read it ({e})") from e
    if a.ndim != 1 or len(a) != size:
        raise BadInput(f"--checkpoint-dir: {path}: changed while the run read it ({a.dtype}{list(a.shape)}, where "
                       f"{size} elements were written)")
    return a


def key_arrays(sort_key: np.ndarray, extras: Sequence[New], codes: WordCodes | None) -> Arrays:
    """The files of a level's keys in sort-key order (the other words as arrays, or functions that
    gather them): coded keys (given `codes`) bit-packed into lanes, each index in the bits its
    dictionary needs; others a word a file."""
    out: Arrays = {"keys-sort": partial(_same, sort_key)}
    if codes is None:
        return {**out, **{f"keys-word-{w}": x if callable(x) else partial(_same, x) for w, x in enumerate(extras)}}
    layout = packed.Layout.fresh(packed.needed(codes))
    out["keys-layout"] = layout.table
    n = len(sort_key)
    out["keys-rows"] = rows_file(layout, [partial(layout.lane, lane, extras, n) for lane in range(len(layout.used))], n)
    return out


def rows_file(layout: packed.Layout, lanes: Sequence[New], n: int) -> ToFile:
    """The file of n keys' rows (kmc/engines/vector/packed.py:Layout.rows), its lanes made one at a time."""
    def write(path: Path) -> None:
        out = np.lib.format.open_memmap(path, mode="w+", dtype=layout.row_dtype(), shape=(n,))
        layout.rows(lanes, n, out)
        out.flush()

    return ToFile(write)


def keep(search: Any, number: int, keys: tuple[np.ndarray, Sequence[New]], level: Level) -> None:
    """Level `number` of `search` (kmc/engines/vector/engine.py:Search, which imports this module),
    complete and merged, in its --checkpoint-dir; `keys`: its sort keys, sorted, and other words."""
    assert search.checkpoint is not None
    arrays = key_arrays(*keys, search.codes)
    if number > 1:
        arrays.update({"links-children": partial(_same, search.parents[-1].children),
                       "links-action": partial(_same, search.iids[-1]),
                       "frontier-steps": partial(_same, search.expansion.steps)})
    arrays.update(frontier_arrays(level, search.codes))
    if search.tree is not None:  # the tree's values first numbered since the level before
        arrays.update({name: partial(_same, values) for name, values in search.tree.parts().items()})
    write_level(search.checkpoint.directory, number, arrays, pool=search.pool, ways=search.workers, manifest={
        **identity(search.model, search.invariants, search.options, search.fmt, search.tree is not None),
        "level_size": len(level),
        "distinct": search.distinct,
        "generated": search.generated,
        **checkpoints.violations_record(search.initial, search.violations, search.found_at),
    })


def resume(search: Any, root: Path) -> tuple[Level, int]:
    """The run kept in `root`, proved and checked, back in `search`: its last level and depth."""
    stored = Stored(root, identity(search.model, search.invariants, search.options, search.fmt, search.tree is not None))
    m = stored.manifest
    if search.codes is not None:
        search.codes = stored.codes(search.fmt)
        search.visited = search.new_visited()
    for number in range(1, stored.depth + 1):
        search._exhausted(coming=2 * stored.key_bytes(number))  # room to load and merge the level, or to disk first
        older = stored.older(number, search.codes)
        if older:
            stored.rewrite(number, older, search.fmt, search.codes, search.step.count)
        sort_key, extras = stored.keys(number, search.fmt, search.codes)
        if search.tree is not None:
            stored.tree(number, search.tree, sort_key)
        if len(sort_key) > 1 and not bool(np.all(sort_key[1:] >= sort_key[:-1])):
            raise BadInput(f"--resume: {root}: the keys of level {number} are not sorted: the run cannot be resumed")
        search.visited.merge(np.array(sort_key), [x if callable(x) else partial(np.array, x) for x in extras])  # a word at a time
        search.in_memory.append((number, len(sort_key)))
        if number > 1:
            parents, iids = stored.links(number, stored.sizes[number - 2], search.step.count,
                                          np.dtype(search.step.iid_dtype))
            search.parents.append(parents)
            search.iids.append(iids)
        search.seen.add(sort_key)  # the filter holds every visited key
        search._exhausted()  # past --memory-limit, what is loaded so far goes to disk
    search.kept_last = stored.depth
    search._fit()
    try:
        search.generated = int(m["generated"])
        search.initial = [tuple(int(v) for v in s) for s in m["initial"]]
        search.violations.first = {int(k): tuple(int(v) for v in s) for k, s in m["first"].items()}
        search.violations.counts = {int(k): int(v) for k, v in m["counts"].items()}
        search.found_at.update({tuple(int(v) for v in st): (int(lv), int(i)) for st, lv, i in m["found_at"]})
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise BadInput(f"--resume: {root}: the manifest's counts or violations are malformed ({e!r})") from e
    known = set(search.model.initial_states())
    if len(search.initial) != stored.sizes[0] or not set(search.initial) <= known \
            or any(k not in range(len(search.invariants)) for k in search.violations.first) \
            or set(search.violations.counts) != {k for k, i in enumerate(search.invariants) if i.report}:
        raise BadInput(f"--resume: {root}: the manifest's initial states or violations are not this model's: "
                       "the run cannot be resumed")
    if stored.depth > 1:  # the level before the frontier, as its expansion counted its steps
        steps = stored.array(stored.depth, "frontier-steps", [np.min_scalar_type(search.step.count)], stored.sizes[-2])
        before = search.generated - int(steps.sum(dtype=np.int64))
        if before < 0 or (len(steps) and int(steps.max()) > search.step.count):
            raise BadInput(f"--resume: {level_dir(root, stored.depth)}/frontier-steps.npy: more steps than the run "
                           "generated: the run cannot be resumed")
        search.expansion = Expansion(before, np.array(steps))
    search.resumed_at = stored.depth
    search.resumed_states = search.distinct
    if search.tree is not None:
        search.tree.parts()  # what the checkpoint holds
        frontier = stored.frontier(search.fmt, None, 1, search.tree.decode)
        stored.decodes(frontier)
        return frontier, stored.depth
    return stored.frontier(search.fmt, search.codes if search.coded_levels else None, search.step.packing.words), stored.depth
