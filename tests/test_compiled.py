"""The compiled interpretation and the compiled engine.

Second computation: the vector engine (itself held to the scalar reference by
tests/test_vector_parity.py) on the same configuration gives the same distinct and generated
states, depth, verdicts and counterexamples, step by step; the differential check compares the
compiled interpretation with the scalar, vector and z3 ones on drawn states, and names a
kernel planted wrong. Kernels are compiled into the user's cache (`$XDG_CACHE_HOME/kmc/kernels`)
and loaded from it on later runs; the cache test uses a directory of its own.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

import pytest

from kmc import registry
from kmc.api import CheckResult, Limits, SearchOptions, check
from kmc.contract.differential import differences
from kmc.model.core import Action, Backend, Bool, Domain, Effect, Field, Model, Option, Schema, State, StateView, action
from kmc.semantics.compiled import cache
from kmc.semantics.compiled.kernels import Kernels
from kmc.traces.replay import replay
from tests.conftest import build
from tests.test_vector_parity import outcome

TWO_PC = "examples/two_phase_commit/model.py"
KRAFT_TWO = dict(brokers=2, replication_factor=2, init_isr_size=2)


def assert_same_run(name: str, limits: Limits = Limits(), search: SearchOptions = SearchOptions(keep_going=True),
                    **settings: Any) -> CheckResult:
    model, invariants = build(name, **settings)
    want = check(model, invariants, engine="vector", limits=limits, search=search)
    got = check(model, invariants, engine="compiled", limits=limits, search=search)
    assert outcome(got) == outcome(want)
    assert got.engine == "compiled"
    for inv in invariants:
        trace = got.invariants[inv.name].trace
        if trace is not None:
            replay(trace, inv)
    return got


MODELS = [
    *[("replication", dict(mode=m)) for m in registry.model_class("replication").modes],
    pytest.param("replication", dict(mode="hw", replicas=3), marks=pytest.mark.slow),  # 43 s on the shared machine
    *[("fetch", dict(mode=m)) for m in registry.model_class("fetch").modes],
    *[("idempotence", dict(mode=m)) for m in registry.model_class("idempotence").modes],
    *[("transactions", dict(mode=m)) for m in registry.model_class("transactions").modes],
    *[("kraft", dict(KRAFT_TWO, mode=m, min_insync_replicas=2)) for m in registry.model_class("kraft").modes],
    *[("kraft", dict(KRAFT_TWO, mode=m, fence_broker_limit=1)) for m in registry.model_class("kraft").modes],
    ("kraft", dict(KRAFT_TWO, mode="v3.5", unclean_shutdown_limit=1)),
    (TWO_PC, dict(rms=3)),
]


def case_id(name: str, settings: dict[str, Any], *rest: Any) -> str:
    return "-".join([name.split("/")[-2] if "/" in name else name, *(f"{k}={v}" for k, v in settings.items()),
                     *map(str, rest)])


def cases(rows: list[Any]) -> list[Any]:
    """Rows as pytest params named by case_id (a row given as pytest.param keeps its marks)."""
    return [pytest.param(*r.values, marks=r.marks, id=case_id(*r.values)) if hasattr(r, "values")
            else pytest.param(*r, id=case_id(*r)) for r in rows]


@pytest.mark.parametrize("name,settings", cases(MODELS))
def test_the_compiled_engine_is_the_vector_engine(name: str, settings: dict[str, Any]) -> None:
    assert_same_run(name, **settings)


@pytest.mark.parametrize("limits", [Limits(), Limits(max_states=700), Limits(max_depth=6)],
                         ids=["first-violation", "max-states", "max-depth"])
def test_limits_stop_both_engines_at_the_same_state(limits: Limits) -> None:
    """The first violation (a shortest trace), --max-states and --max-depth cut the same run."""
    assert_same_run("kraft", limits, SearchOptions(), **KRAFT_TWO, mode="v3.5", min_insync_replicas=2, fence_broker_limit=1,
                    unclean_shutdown_limit=1)


def test_two_phase_commit_at_tlc_s_count() -> None:
    """2PC with 3 RMs: 288 states (TLC, and Stateright's figure, examples/two_phase_commit/README.md)."""
    assert assert_same_run(TWO_PC, rms=3).distinct_states == 288


@pytest.mark.slow
def test_kraft_lrs_bounds() -> None:
    """kip966, 2 brokers, MinISR 2, one fence, one unclean shutdown: 290,764 states, depth 41,
    every invariant holding (TLC on what kmc keeps: tests/reference/tlc-kraft-kmc-view.md)."""
    model, invariants = build("kraft", **KRAFT_TWO, mode="kip966", min_insync_replicas=2, fence_broker_limit=1,
                              unclean_shutdown_limit=1)
    got = check(model, invariants, engine="compiled", search=SearchOptions(keep_going=True))
    assert (got.distinct_states, got.depth) == (290764, 41)
    assert all(v.holds for v in got.invariants.values())


# -- the differential check -------------------------------------------------------------------------

LRS = dict(KRAFT_TWO, mode="kip966", min_insync_replicas=2, fence_broker_limit=1, unclean_shutdown_limit=1)
DIFFERENTIAL = [("replication", dict(mode="kip320"), 200), ("replication", dict(mode="hw", replicas=3), 200),
                ("fetch", {}, 200), ("idempotence", {}, 200), ("transactions", {}, 200),
                ("transactions", dict(mode="kip98"), 200), ("kraft", LRS, 40), (TWO_PC, dict(rms=3), 200),
                pytest.param("kraft", LRS, 200, marks=pytest.mark.slow)]  # z3's terms: 113 s


@pytest.mark.parametrize("name,settings,count", cases(DIFFERENTIAL))
def test_the_four_interpretations_agree(name: str, settings: dict[str, Any], count: int) -> None:
    model, invariants = build(name, **settings)
    found = differences(model, invariants, rng=random.Random(29), count=count, compiled=Kernels(model, invariants))
    assert [str(d) for d in found] == []


@pytest.mark.parametrize("name,settings", [("kraft", dict(brokers=3, replication_factor=3, init_isr_size=2)),
                                           ("replication", dict(mode="kip279", replicas=3))])
def test_native_sort_keys_are_the_key_format_s(name: str, settings: dict[str, Any]) -> None:
    """The compiled step's sort keys (a native kernel) are KeyFormat.split's, bit for bit, on
    keys given whole or as a slice of wider rows (the kernels' candidates are)."""
    import numpy as np

    import copy

    from kmc.engines.compiled.step import CompiledStep

    model, invariants = build(name, **settings)
    step = CompiledStep(model, invariants, False)
    assert step.packing.words > 1
    rng = np.random.default_rng(7)
    keys = rng.integers(-(2**63), 2**63 - 1, size=(step.packing.words, 3001), dtype=np.int64, endpoint=True).view(np.uint64)
    plain = copy.copy(step.fmt)  # as pickled for Spark's executors: numpy's mixes
    assert plain.sort_keys != step.fmt.sort_keys
    for words in (keys, keys[:, 5:2000], keys[:, :0]):
        got, want = step.split(words), plain.split(words)
        assert np.array_equal(got[0], want[0])
        assert [(x.dtype, x.tolist()) for x in got[1]] == [(x.dtype, x.tolist()) for x in want[1]]
        # and back: the format's join (its first word from the native sort keys) is numpy's, and
        # gives words (a narrow word's cut to its bits) that split the same
        joined = step.fmt.join(*want)
        assert np.array_equal(joined, plain.join(*want))
        again = plain.split(joined)
        assert np.array_equal(again[0], want[0]) and all(np.array_equal(x, y) for x, y in zip(again[1], want[1]))
        # the format's hook takes any layout: every other key, a transposed copy's view
        for other in (words[:, ::2], np.ascontiguousarray(words.T).T):
            assert np.array_equal(step.fmt.sort_keys(other), plain.sort_keys(other))


def test_a_comparison_the_ranges_decide_is_a_constant() -> None:
    """The invariant kernel's comparisons of a position with a constant, or of two positions,
    are constants exactly where every value in their ranges gives the same answer (checked
    here value by value), as type-ok's `lo <= x <= hi` on a state within its ranges."""
    import itertools
    import operator

    from kmc.semantics.compiled.values import COMPARE, Values
    from kmc.semantics.compiled.programs import Program

    ops = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}
    assert sorted(ops) == sorted(COMPARE)
    spans = [(0, 0), (0, 2), (1, 3), (2, 2), (3, 5), (-1, 1)]
    # positions 0..5 with those ranges; slots 0..5 read them, slots 6.. are the constants -1..4
    constants = list(range(-1, 5))
    program = Program(slots=[*range(len(spans)), *constants])
    values = Values(None, program, {}, None, None, ([lo for lo, _ in spans], [hi for _, hi in spans]))
    operands = [(("r", k), list(range(lo, hi + 1))) for k, (lo, hi) in enumerate(spans)]
    operands += [(("c", len(spans) + j), [c]) for j, c in enumerate(constants)]
    decided = 0
    for (left, xs), (right, ys) in itertools.product(operands, repeat=2):
        for o, f in ops.items():
            answers = {f(x, y) for x in xs for y in ys}
            want = answers.pop() if len(answers) == 1 else None
            assert values.decided(o, left, right) == want, (o, left, right)
            decided += want is not None
    assert decided > 100
    # without ranges, only constants are decided
    plain = Values(None, program, {}, None, None)
    assert plain.decided("<=", ("c", 6), ("r", 0)) is None and plain.decided("<", ("c", 6), ("c", 7)) is True


class _Writes(Model):
    """Writes of every kind the intervals tell apart: a copy between positions of one range,
    a constant, a sum that fits, one that does not, one clipped by min, a count, a selection,
    a position a table gives (`bump(j)` over two counters of one range)."""

    name = "writes"
    summary = "the range-check cases"
    modes = {"plain": "the one mode"}
    options = (Option("mode", "plain", "the one mode", choices=("plain",)),)

    def _build(self) -> None:
        self.schema = Schema([Field("a", lo=0, hi=3), Field("b", lo=0, hi=3), Field("c", lo=0, hi=7),
                              Field("d", lo=0, hi=3), Field("e", lo=0, hi=3), Field("f", lo=0, hi=2),
                              Field("g", lo=-1, hi=3), Field("n", lo=0, hi=3, shape=(2,))])

    def initial_states(self) -> list[State]:
        return [self.schema.state(a=0, b=0, c=0, d=0, e=0, f=0, g=0, n=[0, 0])]

    def actions(self) -> Sequence[Action]:
        return [self.move, self.bump]

    @action()
    def move(self, s: StateView, X: Backend) -> Bool:
        return s.a <= 3

    @move.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"a": s.b, "b": 2, "c": s.a + s.b, "d": s.a + 1, "e": X.min_(s.a + 1, 3),
                "f": X.count([s.a == 1, s.b == 1]), "g": X.ite(s.a == 0, -1, s.b)}

    @action(j=Domain(lambda m: range(2)))
    def bump(self, s: StateView, X: Backend, j: int) -> Bool:
        return s.n[j] < 3

    @bump.effect
    def _(self, s: StateView, X: Backend, j: int) -> Effect:
        return {"n": X.set_at(s.n, j, s.n[j] + 1)}


def test_a_write_its_ranges_keep_in_range_is_not_checked() -> None:
    """The intervals of written values (kmc/semantics/compiled/intervals.py): the writes they
    keep in range are those whose every value is in range on every state in range (checked
    here state by state); the kernels check the others, and a write out of range stops the run
    with the action, value and position named."""
    import itertools

    import numpy as np

    from kmc.semantics.compiled.intervals import Intervals
    from kmc.semantics.compiled.programs import templates
    from kmc.semantics.scalar import ScalarModel

    model = _Writes()
    schema, scalar = model.schema, ScalarModel(model)
    names = schema.element_names()
    # every state in range of the positions the writes read (a, b, n); the others at their lowest
    every = [schema.state(a=a, b=b, c=0, d=0, e=0, f=0, g=-1, n=list(n))
             for a, b, *n in itertools.product(range(4), range(4), range(4), range(4))]
    kept = {}
    for tpl in templates(model):
        intervals = Intervals(tpl, schema.lo, schema.hi)
        for row in tpl.table:
            inst = model.instances()[row[0]]
            for pos_slot, ref in tpl.program.writes:
                pos = intervals.slot_values(pos_slot)[tpl.table.index(row)] if pos_slot in tpl.columns \
                    else tpl.program.slots[pos_slot]
                kept[(inst.label, names[pos])] = intervals.within((pos_slot, ref))
    assert kept == {("move()", "a"): True, ("move()", "b"): True, ("move()", "c"): True, ("move()", "d"): False,
                    ("move()", "e"): True, ("move()", "f"): True, ("move()", "g"): True,
                    ("bump(j=0)", "n[0]"): False, ("bump(j=0)", "n[1]"): True,  # set_at writes the whole row
                    ("bump(j=1)", "n[0]"): True, ("bump(j=1)", "n[1]"): False}
    for state in every:  # the second computation: the writes' values on every state in range
        for inst in model.instances():
            nxt = scalar.step(state, inst)
            if nxt is None:
                continue
            for pos, (v, lo, hi) in enumerate(zip(nxt, schema.lo, schema.hi)):
                if kept.get((inst.label, names[pos])):
                    assert lo <= v <= hi, (inst.label, names[pos], state)
    model.schema = Schema([*schema.fields[:3], Field("d", lo=0, hi=2), *schema.fields[4:]])  # d := a + 1 leaves it
    kernels, width = Kernels(model, []), len(names)
    rows = np.array([schema.state(a=2, b=2, c=2, d=1, e=1, f=0, g=-1, n=[0, 0])])
    with pytest.raises(ValueError, match=r"action move\(\) writes 3 to d, outside its range \[0, 2\]"):
        kernels.successors(rows, np.zeros((1, 1), dtype=np.uint64), np.zeros(width, dtype=np.int64),
                           np.zeros(width, dtype=np.uint64), drop=True)


def test_native_unpacked_words_are_numpy_s() -> None:
    """A coded level's words unpacked natively (KeyKernels.unpack_words) are numpy's
    (kmc/engines/vector/levels.py:unpack_words), and both the dictionaries' values at the packed
    indices, on a layout whose words took one piece, two (grown), none (a dictionary of one
    value) and 64 bits; an index past its dictionary is refused."""
    import numpy as np

    from kmc.engines.vector.levels import unpack_words
    from kmc.engines.vector.packed import Layout
    from kmc.semantics.compiled.keys import KeyKernels

    rng = np.random.default_rng(13)
    sizes = [5, 300, 1, 70000, 2**20, 3]  # each word's dictionary
    # word 1 grown to two pieces, word 2 none, word 4 64 bits wide (more than its indices need)
    layout = Layout.fresh([3, 9, 0, 17, 64, 2]).grown([3, 11, 0, 17, 64, 2])
    assert len(layout.pieces[1]) == 2 and not layout.pieces[2] and layout.bits(4) == 64
    n = 2500
    codes = [rng.integers(0, size, n, dtype=np.uint64) for size in sizes]
    values = [rng.integers(0, 2**63, size, dtype=np.uint64) for size in sizes]
    lanes = [np.zeros(n, dtype=dt) for dt in layout.dtypes()]
    for w, c in enumerate(codes):
        layout.pack(w, c, lanes)
    want = np.empty((len(sizes), n), dtype=np.uint64)
    unpack_words(layout.pieces, layout.wide(lanes), values, want)
    assert np.array_equal(want, np.array([v[c] for v, c in zip(values, codes)]))
    kernels = KeyKernels(len(sizes) + 1)
    rows = np.empty((len(sizes) + 1, n), dtype=np.uint64)  # the other words of keys: all rows but the first
    kernels.unpack_words(layout.pieces, layout.wide(lanes), values, rows[1:])
    assert np.array_equal(rows[1:], want)
    values[1] = values[1][:100]  # a damaged level: indices past their dictionary
    with pytest.raises(ValueError, match="past their dictionaries"):
        kernels.unpack_words(layout.pieces, layout.wide(lanes), values, rows[1:])


@pytest.mark.parametrize("name,settings", [("kraft", dict(brokers=3, replication_factor=3, init_isr_size=2)),
                                           ("replication", dict(mode="kip279", replicas=3))])
def test_native_first_occurrences_are_first_occurrences(name: str, settings: dict[str, Any]) -> None:
    """The compiled step's distinct keys (a native hash table) are first_occurrences' exactly:
    the same keys in the same order, each with its smallest rank, on candidates with many
    repeats, and with different keys made to share a sort key (settled on the other words)."""
    import numpy as np

    from kmc.engines.compiled.step import CompiledStep
    from kmc.engines.vector.keyset import first_occurrences

    model, invariants = build(name, **settings)
    step = CompiledStep(model, invariants, False)
    words = step.packing.words
    rng = np.random.default_rng(11)
    pool = rng.integers(0, 2**63, size=(words, 400), dtype=np.int64).view(np.uint64)
    sort_key = step.fmt.split(pool)[0]
    for a, b in ((0, 1), (2, 3), (2, 4)):  # key b's first word chosen so that its sort key is key a's
        pool[0, b] ^= sort_key[b] ^ sort_key[a]
    assert len(set(step.fmt.split(pool)[0].tolist())) == 400 - 3
    wide = np.zeros((words, 5000), dtype=np.uint64)
    wide[:, :3001] = pool[:, rng.integers(0, 400, size=3001)]
    rank = rng.permutation(10_000)[:3001].astype(np.int64)
    for keys, ranks in ((wide[:, :3001], rank), (wide[:, 17:1017], rank[17:1017])):
        got, want = step.distinct(keys, ranks), first_occurrences(*step.fmt.split(keys), ranks)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[2], want[2])
        assert [(x.dtype, x.tolist()) for x in got[1]] == [(x.dtype, x.tolist()) for x in want[1]]


def test_native_dictionary_search_is_word_codes_lookup() -> None:
    """WordCodes.lookup with the native search gives numpy's indices and unknown keys: words with
    one value, with more than 256 (uint16 indices), below and above every value known."""
    import numpy as np

    from kmc.engines.vector.keyset import KeyFormat
    from kmc.engines.vector.wordcodes import WordCodes
    from kmc.semantics.compiled.keys import KeyKernels

    fmt = KeyFormat([64, 32, 64, 64])
    codes = WordCodes(fmt)
    rng = np.random.default_rng(5)
    known = [np.array([7], dtype=np.uint64), rng.integers(10, 2**32, size=300, dtype=np.uint64),
             rng.integers(10, 2**63, size=40, dtype=np.uint64)]
    codes.code([k.astype(dt) for k, dt in zip(known, fmt.extra_dtypes)], [])
    keys = [rng.choice(k, size=2000).astype(dt) for k, dt in zip(known, fmt.extra_dtypes)]
    for w, stray in ((0, 3), (1, 5), (1, 2**32 - 1), (2, 2**64 - 1), (2, 0)):
        keys[w][rng.integers(0, 2000, size=4)] = stray
    native, plain = codes.lookup(keys, KeyKernels(4).search), codes.lookup(keys)
    assert np.array_equal(native[1], plain[1]) and 0 < plain[1].sum() < 2000
    assert [(x.dtype, x[~plain[1]].tolist()) for x in native[0]] == [(x.dtype, x[~plain[1]].tolist()) for x in plain[0]]


def test_native_lower_bounds_are_numpy_s_searchsorted() -> None:
    """KeyKernels.lower_bounds, which searches the visited set and a level's runs, gives numpy's
    positions: sorted and unsorted keys, found or not, repeated values, the ends of the range,
    one value and none, more keys than a block."""
    import numpy as np

    from kmc.semantics.compiled.keys import KeyKernels

    native = KeyKernels(3).lower_bounds
    rng = np.random.default_rng(8)
    for size, m in [(0, 100), (1, 100), (5000, 2), (5000, 3000), (100_000, 5000), (3000, 9000)]:
        ascending = np.sort(np.concatenate([rng.integers(0, 2**64 - 1, size - size // 4, dtype=np.uint64, endpoint=True),
                                            np.repeat(rng.integers(0, 2**64 - 1, 1, dtype=np.uint64), size // 4)]))
        keys = np.concatenate([rng.integers(0, 2**64 - 1, m // 2, dtype=np.uint64, endpoint=True),
                               ascending[rng.integers(0, size, m - m // 2)] if size else np.zeros(m - m // 2, np.uint64)])
        keys[:2] = [0, 2**64 - 1]
        for k in (keys, np.sort(keys)):
            assert np.array_equal(native(ascending, k), np.searchsorted(ascending, k)), (size, m)


def test_a_kernel_planted_wrong_is_named() -> None:
    """One kernel's IR edited (its first comparison negated: `icmp eq` becomes `icmp ne`) and
    compiled: the differential check names that action family, and only it."""
    model, invariants = build("replication", mode="kip320")
    kernels = Kernels(model, invariants)
    text, names, _ = kernels.ir()
    target = names.index(next(n for n in names if n.endswith("_become_leader")))
    start = text.index(f'void @"{names[target]}"')
    end = text.index("\n}\n", start)
    body = text[start:end]
    assert "icmp eq" in body
    kernels.use(cache.load(text[:start] + body.replace("icmp eq", "icmp ne", 1) + text[end:])[0])
    found = differences(model, invariants, rng=random.Random(29), count=200, compiled=kernels)
    assert found, "the planted kernel went unnoticed"
    assert {d.subject.split("(")[0] for d in found} == {"action become_leader"}
    d = found[0]
    assert d.compiled is not None and d.compiled != d.scalar and d.vector == d.scalar and d.z3 == d.scalar
    print(d)


# -- the cache ----------------------------------------------------------------------------------------


def test_kernels_are_compiled_once_per_model_and_settings(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    model, invariants = build(TWO_PC, rms=3)
    assert Kernels(model, invariants).compiled_now
    assert not Kernels(model, invariants).compiled_now  # the model's fingerprint finds the object file
    files = sorted(p.suffix for p in (tmp_path / "kmc" / "kernels").iterdir())
    assert files == [".npz", ".o"]
    other, _ = build(TWO_PC, rms=4)
    assert Kernels(other, invariants).compiled_now
    assert Kernels(model, invariants[:1]).compiled_now  # another invariant kernel, another model fingerprint
    assert len(list((tmp_path / "kmc" / "kernels").glob("*.npz"))) == 3


def test_kernels_are_keyed_by_their_sources_inside_a_zip_too(tmp_path: Any) -> None:
    """Spark's executors import kmc from a zip archive: the sources that key the kernel cache are
    read there as from a folder, so an archive of other code gets other keys (a stale kernel
    module, without the kernels this code asks for, was loaded once)."""
    import zipfile
    from pathlib import Path

    from kmc.semantics.compiled import cache

    folder = Path(cache.__file__).parent
    archive = tmp_path / "kmc.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in folder.glob("*.py"):
            z.write(path, f"kmc/semantics/compiled/{path.name}")
        z.writestr("kmc/semantics/compiled/sub/ignored.py", "x = 1\n")
    assert cache._sources(archive / "kmc/semantics/compiled") == cache._sources(folder) != []
    with zipfile.ZipFile(archive, "a") as z:
        z.writestr("kmc/semantics/compiled/zz_new.py", "y = 2\n")
    assert cache._sources(archive / "kmc/semantics/compiled")[-1] == ("zz_new.py", b"y = 2\n")


def test_symmetry_is_refused_in_one_line(run_kmc: Any) -> None:
    rc, out, err = run_kmc("check", "replication", "--engine", "compiled", "--symmetry", "--no-properties")
    assert rc == 2
    assert err.strip().splitlines() == ["kmc: error: the compiled engine does not reduce by symmetry: --symmetry "
                                        "is for the vector, scalar, dfs, spark engines"]
