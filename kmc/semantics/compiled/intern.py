"""Native intern tables: 64-bit keys numbered in the order they were first met
(kmc/engines/vector/treecodes.py codes wide keys with them).

A table is `values` (uint64, index -> key, appended) and `slots` (uint32, open-addressed with
linear probing, each the index of a key or FREE), a key's first slot the top bits of its mix
(kmc/engines/vector/keyset.py:mix). `intern(keys, n, slots, shift, values, size, out)` gives
each key its index, a new one (size[0], then size[0] + 1, ...) to a key not held, which it
appends; `find(keys, n, slots, shift, values, limit, out)` only reads: the index of each key
among the first `limit`, else FREE. A `find` beside an `intern` trusts only indices below
`limit`, whose slots and values no intern writes again: with linear probing and nothing ever
removed, the slots between a key's first slot and its own hold smaller indices, so an index at
or past `limit` on the way means the key is not among the first `limit` (it is read as FREE).
A slot is one aligned 32-bit word: never read half written. Each kernel fetches the first slot
of the key 32 keys on while it probes this one's.
"""

from __future__ import annotations

import ctypes
from typing import Sequence

import numpy as np
from llvmlite import ir

from kmc.semantics.compiled import cache
from kmc.semantics.compiled.emit import Loop, kernel_function
from kmc.semantics.compiled.hashset import fetch_ahead, prefetch_function, slot_mask
from kmc.semantics.compiled.keys import I32, mixed
from kmc.semantics.compiled.values import I64, P64, c64

FREE = np.uint32(0xFFFFFFFF)  # an empty slot; from `find`, a key not among those it may read (treecodes.FREE)
_SCALARS = ("n", "shift", "limit")


def intern_kernels(module: ir.Module) -> None:
    prefetch = prefetch_function(module)
    free = ir.Constant(I32, int(FREE))
    for name, args in (("intern", ("keys", "n", "slots", "shift", "values", "size", "out")),
                       ("find", ("keys", "n", "slots", "shift", "values", "limit", "out"))):
        fn, a = kernel_function(module, name, args,
                                lambda x: I64 if x in _SCALARS else I32.as_pointer() if x in ("slots", "out") else P64)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        slot = b.alloca(I64, name="slot")
        count = b.alloca(I64, name="next")
        if name == "intern":
            b.store(b.load(a["size"]), count)
        mask = slot_mask(b, a["shift"])
        last = b.sub(a["n"], c64(1))
        with Loop(b, a["n"], "i") as li:
            fetch_ahead(b, prefetch, a["keys"], a["slots"], a["shift"], li.value, last, write=name == "intern")
            key = b.load(b.gep(a["keys"], [li.value], inbounds=True))
            out = b.gep(a["out"], [li.value], inbounds=True)
            b.store(b.lshr(mixed(b, key), a["shift"]), slot)
            head, vacant, held, found, on = (fn.append_basic_block(x) for x in ("head", "vacant", "held", "found", "on"))
            b.branch(head)
            b.position_at_end(head)
            at = b.load(slot)
            index = b.load(b.gep(a["slots"], [at], inbounds=True))
            b.cbranch(b.icmp_unsigned("==", index, free), vacant, held)
            b.position_at_end(held)
            wide = b.zext(index, I64)
            if name == "find":  # an index past the limit: a key interned since, not this one
                trusted = fn.append_basic_block("trusted")
                b.cbranch(b.icmp_unsigned(">=", wide, a["limit"]), vacant, trusted)
                b.position_at_end(trusted)
            same = b.icmp_unsigned("==", b.load(b.gep(a["values"], [wide], inbounds=True)), key)
            b.cbranch(same, found, on)
            b.position_at_end(on)
            b.store(b.and_(b.add(at, c64(1)), mask), slot)
            b.branch(head)
            b.position_at_end(found)
            b.store(index, out)
            b.branch(li.next_)
            b.position_at_end(vacant)
            if name == "find":
                b.store(free, out)
            else:  # the key first, then the slot that points at it
                new = b.load(count)
                b.store(key, b.gep(a["values"], [new], inbounds=True))
                b.store(b.trunc(new, I32), b.gep(a["slots"], [at], inbounds=True))
                b.store(b.trunc(new, I32), out)
                b.store(b.add(new, c64(1)), count)
            b.branch(li.next_)
        if name == "intern":
            b.store(b.load(count), a["size"])
        b.ret_void()


_TREE_SCALARS = ("n", "rows", "leaves", "wstride", "kstride")
_TREE_ARGS = ("keys", "wstride", "kstride", "n", "rows", "leaves", "left", "right", "slots", "shifts", "values",
              "limits", "numbers", "scratch", "at", "found")


def tree_kernels(module: ir.Module) -> None:
    """`tree_find` and `tree_code`: a batch of wide keys through every table of their tree in one
    call (kmc/engines/vector/treecodes.py), the work of `find` (or `intern`) once per leaf and
    inner node. `keys`: key j's word w at w * wstride + j * kstride; `rows` numbers per key, the
    first `leaves` the leaves' (row w: word w in table w), then the inner nodes' (row r: the pair
    of rows left[r - leaves] and right[r - leaves], in table `leaves`); per table its slots' and
    values' addresses, shift, and limit (`tree_find`) or the address of its size (`tree_code`).
    `numbers` (rows x n, uint32): out for `tree_find`; for `tree_code`, FREE where a number is
    still to be given, each table with room for all of them. `scratch`, `at`, `found`: n each."""
    find, intern = module.get_global("find"), module.get_global("intern")
    free = ir.Constant(I32, int(FREE))
    for name in ("tree_find", "tree_code"):
        coding = name == "tree_code"
        fn, a = kernel_function(module, name, _TREE_ARGS, lambda x: I64 if x in _TREE_SCALARS
                                else I32.as_pointer() if x in ("numbers", "found") else P64)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        taken = b.alloca(I64, name="taken")  # tree_code: the keys of this row still to number
        n = a["n"]

        def gather(value: ir.Value, j: ir.Value, row: ir.Value) -> None:
            """Key j of this row into the scratch: every key (find), or those with no number yet."""
            if not coding:
                b.store(value, b.gep(a["scratch"], [j], inbounds=True))
                return
            keep, done = fn.append_basic_block("keep"), fn.append_basic_block("kept")
            b.cbranch(b.icmp_unsigned("==", b.load(b.gep(row, [j], inbounds=True)), free), keep, done)
            b.position_at_end(keep)
            m = b.load(taken)
            b.store(value, b.gep(a["scratch"], [m], inbounds=True))
            b.store(j, b.gep(a["at"], [m], inbounds=True))
            b.store(b.add(m, c64(1)), taken)
            b.branch(done)
            b.position_at_end(done)

        with Loop(b, a["rows"], "r") as lr:
            r = lr.value
            row = b.gep(a["numbers"], [b.mul(r, n)], inbounds=True)
            b.store(c64(0), taken)
            leaf = b.icmp_signed("<", r, a["leaves"])
            on_leaf, on_inner, filled = (fn.append_basic_block(x) for x in ("leaf", "inner", "filled"))
            b.cbranch(leaf, on_leaf, on_inner)
            b.position_at_end(on_leaf)
            with Loop(b, n, "j") as lj:
                at = b.add(b.mul(r, a["wstride"]), b.mul(lj.value, a["kstride"]))
                gather(b.load(b.gep(a["keys"], [at], inbounds=True)), lj.value, row)
            b.branch(filled)
            b.position_at_end(on_inner)
            k = b.sub(r, a["leaves"])
            lrow = b.gep(a["numbers"], [b.mul(b.load(b.gep(a["left"], [k], inbounds=True)), n)], inbounds=True)
            rrow = b.gep(a["numbers"], [b.mul(b.load(b.gep(a["right"], [k], inbounds=True)), n)], inbounds=True)
            with Loop(b, n, "p") as lp:
                lv = b.zext(b.load(b.gep(lrow, [lp.value], inbounds=True)), I64)
                rv = b.zext(b.load(b.gep(rrow, [lp.value], inbounds=True)), I64)
                gather(b.or_(b.shl(lv, c64(32)), rv), lp.value, row)
            b.branch(filled)
            b.position_at_end(filled)
            table = b.select(leaf, r, a["leaves"])

            def entry(array: str) -> ir.Value:
                return b.load(b.gep(a[array], [table], inbounds=True))

            slots = b.inttoptr(entry("slots"), I32.as_pointer())
            values = b.inttoptr(entry("values"), P64)
            if not coding:
                b.call(find, [a["scratch"], n, slots, entry("shifts"), values, entry("limits"), row])
            else:
                m = b.load(taken)
                b.call(intern, [a["scratch"], m, slots, entry("shifts"), values,
                                b.inttoptr(entry("limits"), P64), a["found"]])
                with Loop(b, m, "q") as lq:
                    j = b.load(b.gep(a["at"], [lq.value], inbounds=True))
                    b.store(b.load(b.gep(a["found"], [lq.value], inbounds=True)), b.gep(row, [j], inbounds=True))
        b.ret_void()


_DECODE_SCALARS = ("n", "rows", "leaves", "rootl", "rootr")
_DECODE_ARGS = ("codes", "n", "rows", "leaves", "left", "right", "rootl", "rootr", "values", "limits", "out",
                "numbers", "bad")


def tree_decode_kernel(module: ir.Module) -> None:
    """`tree_decode`: the words of keys given as codes (kmc/engines/vector/treecodes.py:
    TreeCodes.decode), top-down: the root's pair (the code) gives its children's numbers
    (rows `rootl` and `rootr` of `numbers`), each inner node's number (from the last numbered
    to the first) its value in table `leaves`, the pair of its children's numbers, and each
    leaf's number (row w) its value in table w, into row w of `out` (words x n). A number at or
    past its table's limit is read as 0 and counted in `bad`[0]."""
    fn, a = kernel_function(module, "tree_decode", _DECODE_ARGS, lambda x: I64 if x in _DECODE_SCALARS
                            else I32.as_pointer() if x == "numbers" else P64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    n = a["n"]
    low = c64(0xFFFFFFFF)

    def row(r: ir.Value) -> ir.Value:
        return b.gep(a["numbers"], [b.mul(r, n)], inbounds=True)

    def split(pair: ir.Value, left: ir.Value, right: ir.Value, j: ir.Value) -> None:
        b.store(b.trunc(b.lshr(pair, c64(32)), I32), b.gep(left, [j], inbounds=True))
        b.store(b.trunc(b.and_(pair, low), I32), b.gep(right, [j], inbounds=True))

    def value(table: ir.Value, number: ir.Value) -> ir.Value:
        """Table `table`'s value of `number` (0's, and one more in bad, past its limit)."""
        wide = b.zext(number, I64)
        past = b.icmp_unsigned(">=", wide, b.load(b.gep(a["limits"], [table], inbounds=True)))
        bad = a["bad"]
        b.store(b.add(b.load(bad), b.zext(past, I64)), bad)
        values = b.inttoptr(b.load(b.gep(a["values"], [table], inbounds=True)), P64)
        return b.load(b.gep(values, [b.select(past, c64(0), wide)], inbounds=True))

    rootl, rootr = row(a["rootl"]), row(a["rootr"])
    with Loop(b, n, "i") as li:
        split(b.load(b.gep(a["codes"], [li.value], inbounds=True)), rootl, rootr, li.value)
    inner = b.sub(a["rows"], a["leaves"])
    with Loop(b, inner, "k") as lk:
        k = b.sub(b.sub(inner, c64(1)), lk.value)  # parents before their children
        mine = row(b.add(a["leaves"], k))
        left = row(b.load(b.gep(a["left"], [k], inbounds=True)))
        right = row(b.load(b.gep(a["right"], [k], inbounds=True)))
        with Loop(b, n, "j") as lj:
            split(value(a["leaves"], b.load(b.gep(mine, [lj.value], inbounds=True))), left, right, lj.value)
    with Loop(b, a["leaves"], "w") as lw:
        mine = row(lw.value)
        out = b.gep(a["out"], [b.mul(lw.value, n)], inbounds=True)
        with Loop(b, n, "q") as lq:
            b.store(value(lw.value, b.load(b.gep(mine, [lq.value], inbounds=True))),
                    b.gep(out, [lq.value], inbounds=True))
    b.ret_void()


class InternKernels:
    """`intern` and `find` over a table of 2**bits slots (uint32, FREE where empty), its keys
    (`values`, uint64, with room for every key interned) and its size (`count`, int64[1]: the
    kernels' `size`)."""

    def __init__(self) -> None:
        def ir_text() -> str:
            module = cache.new_module("kmc intern table")
            intern_kernels(module)
            tree_kernels(module)
            tree_decode_kernel(module)
            return str(module)

        function = cache.cached(cache.generated_fingerprint("intern table"), ir_text)
        p, i = ctypes.c_void_p, ctypes.c_int64
        self._intern = function("intern", [p, i, p, i, p, p, p])
        self._find = function("find", [p, i, p, i, p, i, p])
        tree = [p, i, i, i, i, i, p, p, p, p, p, p, p, p, p, p]
        self._tree_find = function("tree_find", tree)
        self._tree_code = function("tree_code", tree)
        self._tree_decode = function("tree_decode", [p, i, i, i, p, p, i, i, p, p, p, p, p])

    def intern(self, slots: np.ndarray, values: np.ndarray, count: np.ndarray, keys: np.ndarray) -> np.ndarray:
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        out = np.empty(len(keys), dtype=np.uint32)
        assert int(count[0]) + len(keys) <= len(values) and values.dtype == np.uint64 and count.dtype == np.int64
        if len(keys):
            self._intern(keys.ctypes.data, len(keys), slots.ctypes.data, _shift(slots), values.ctypes.data,
                         count.ctypes.data, out.ctypes.data)
        return out

    def find(self, slots: np.ndarray, values: np.ndarray, limit: int, keys: np.ndarray) -> np.ndarray:
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        out = np.empty(len(keys), dtype=np.uint32)
        if len(keys):
            self._find(keys.ctypes.data, len(keys), slots.ctypes.data, _shift(slots), values.ctypes.data, limit,
                       out.ctypes.data)
        return out


    def tree(self, coding: bool, keys: np.ndarray, left: np.ndarray, right: np.ndarray,
             tables: Sequence[tuple[np.ndarray, np.ndarray, int | np.ndarray]], numbers: np.ndarray) -> None:
        """`tree_find` (or, `coding`, `tree_code`) of the keys `keys` (words x n, any strides),
        through `tables`: the leaves' then the inner nodes' (slots, values, and limit or size
        array), into (or from) `numbers` (rows x n, uint32, C order)."""
        n = numbers.shape[1]
        assert numbers.dtype == np.uint32 and numbers.flags.c_contiguous and keys.dtype == np.uint64
        if n == 0:
            return
        slots = np.array([t[0].ctypes.data for t in tables], dtype=np.int64)
        shifts = np.array([_shift(t[0]) for t in tables], dtype=np.int64)
        values = np.array([t[1].ctypes.data for t in tables], dtype=np.int64)
        limits = np.array([t[2].ctypes.data if isinstance(t[2], np.ndarray) else t[2] for t in tables], dtype=np.int64)
        scratch, at, found = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.uint32)
        kernel = self._tree_code if coding else self._tree_find
        kernel(keys.ctypes.data, keys.strides[0] // 8, keys.strides[1] // 8, n, numbers.shape[0], len(tables) - 1,
               left.ctypes.data, right.ctypes.data, slots.ctypes.data, shifts.ctypes.data, values.ctypes.data,
               limits.ctypes.data, numbers.ctypes.data, scratch.ctypes.data, at.ctypes.data, found.ctypes.data)


    def tree_decode(self, codes: np.ndarray, left: np.ndarray, right: np.ndarray, root: tuple[int, int],
                    tables: Sequence[tuple[np.ndarray, int]], out: np.ndarray) -> int:
        """`tree_decode` of `codes` into `out` (words x n, uint64, C order) through `tables` (the
        leaves' then the inner nodes' values, and how many of them may be read); the numbers
        past a limit it met (0: none)."""
        n = len(codes)
        codes = np.ascontiguousarray(codes, dtype=np.uint64)
        assert out.dtype == np.uint64 and out.flags.c_contiguous and out.shape == (len(tables) - 1, n)
        if n == 0:
            return 0
        rows = len(tables) - 1 + len(left)
        numbers = np.empty((rows, n), dtype=np.uint32)
        values = np.array([t[0].ctypes.data for t in tables], dtype=np.int64)
        limits = np.array([t[1] for t in tables], dtype=np.int64)
        bad = np.zeros(1, dtype=np.int64)
        self._tree_decode(codes.ctypes.data, n, rows, len(tables) - 1, left.ctypes.data, right.ctypes.data,
                          root[0], root[1], values.ctypes.data, limits.ctypes.data, out.ctypes.data,
                          numbers.ctypes.data, bad.ctypes.data)
        return int(bad[0])


def _shift(slots: np.ndarray) -> int:
    """64 - bits, for a table of 2**bits slots."""
    bits = len(slots).bit_length() - 1
    assert len(slots) == 1 << bits and slots.dtype == np.uint32 and slots.flags.c_contiguous
    return 64 - bits
