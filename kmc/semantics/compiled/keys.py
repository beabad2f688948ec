"""Native kernels over packed keys of a given width, for any model: sort keys, and the first
occurrences of a chunk's keys.

A chunk's keys are `words` rows of uint64 (word w of key j at K[w * stride + j]), as the
successor kernels write them. `sort_keys` computes kmc/engines/vector/keyset.py:KeyFormat.split's
sort key bit for bit. `first` finds each distinct key's candidate of smallest rank with an
open-addressing table of the chunk's size, comparing whole keys, so that only the distinct
keys are then gathered and sorted, not every candidate (kmc/engines/vector/keyset.py:sorted_distinct).
`search` looks every word of a batch of keys up in its dictionary (kmc/engines/vector/wordcodes.py:WordCodes)
in one call: a branch-free binary search per word and key. `unpack_words` gives a coded
level's other words back from its bit-packed dictionary indices (kmc/engines/vector/levels.py). `mark` and `marked` set and test the
bits of kmc/engines/vector/prefilter.py:KeyFilter, bit for bit. `lower_bounds` is numpy's
searchsorted over sorted sort keys (the visited set's, a level's runs), a block of keys' loads
overlapped; `lower_bounds_from` the same within a range of each key's own (a run on disk's
sparse index gives it).
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

import numpy as np
from llvmlite import ir

from kmc.semantics.compiled import cache
from kmc.semantics.compiled.emit import Loop, kernel_function
from kmc.semantics.compiled.values import I8, I64, P64, c64

MIX = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)  # kmc/engines/vector/keyset.py:mix (splitmix64)
_SCALARS = ("n", "stride", "mask", "shift")
I32 = ir.IntType(32)
_AHEAD = 32  # keys between a bit's fetch and its use
_SHORT_MOVE = 16  # bytes moved by a loop, not a call to memmove
# keys searched at a time: their positions stay in cache. Searching 50,000 keys of 20 million
# sorted ones took 3.4 ms in blocks of 2,048, 4.5 ms at once, 14.7 ms by numpy's searchsorted
_LOWER_BOUNDS_BLOCK = 2048
_NATIVE_FROM = 64  # fewer keys (or fewer than 16 times as many sorted ones) are searched by numpy: no call to make


def _signed(v: int) -> ir.Constant:
    return c64(v - (1 << 64) if v >= 1 << 63 else v)  # the same bits


def mixed(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """kmc/engines/vector/keyset.py:mix (splitmix64) of one 64-bit value."""
    golden, m1, m2 = (_signed(v) for v in MIX)
    x = b.add(x, golden)
    x = b.mul(b.xor(x, b.lshr(x, c64(30))), m1)
    x = b.mul(b.xor(x, b.lshr(x, c64(27))), m2)
    return b.xor(x, b.lshr(x, c64(31)))


def sort_key_kernel(module: ir.Module, words: int) -> None:
    """`sort_keys(K, n, stride, out)`: the sort key of each of n keys of `words` words: its
    first word XOR the mix of the others, chained as KeyFormat.split chains them."""
    fn, a = kernel_function(module, "sort_keys", ("K", "n", "stride", "out"), lambda x: I64 if x in _SCALARS else P64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    # word by word over all the keys: each key's chain of mixes waits on itself, the keys' do not
    def word(w: int, j: ir.Value) -> ir.Value:
        return b.load(b.gep(a["K"], [b.add(b.mul(c64(w), a["stride"]), j)], inbounds=True))

    def out(j: ir.Value) -> ir.Value:
        return b.gep(a["out"], [j], inbounds=True)

    with Loop(b, a["n"], "first") as lj:
        b.store(mixed(b, word(1, lj.value)), out(lj.value))
    for w in range(2, words):
        with Loop(b, a["n"], f"w{w}") as lj:
            b.store(mixed(b, b.xor(b.load(out(lj.value)), word(w, lj.value))), out(lj.value))
    with Loop(b, a["n"], "last") as lj:
        b.store(b.xor(word(0, lj.value), b.load(out(lj.value))), out(lj.value))
    b.ret_void()


def first_kernel(module: ir.Module, words: int) -> None:
    """`first(K, n, stride, sk, rank, table, mask, shift, out, found)`: out[0:found] is, for each
    distinct key among n, the candidate of smallest rank, in the order the keys are first met.
    `table` (mask + 1 slots, all -1) maps a slot, the top bits of sort key x golden ratio, to a
    position in `out`; a key whose slot is taken by another key goes on to the next slot. Keys
    with equal sort keys are compared on words 1..words-1 (equal sort keys and equal other words
    make word 0 equal)."""
    fn, a = kernel_function(module, "first", ("K", "n", "stride", "sk", "rank", "table", "mask", "shift", "out", "found"),
                      lambda x: I64 if x in _SCALARS else P64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    distinct = b.alloca(I64, name="distinct")
    slot = b.alloca(I64, name="slot")
    b.store(c64(0), distinct)

    def at(array: str, j: ir.Value) -> ir.Value:
        return b.gep(a[array], [j], inbounds=True)

    def word(w: int, j: ir.Value) -> ir.Value:
        return b.load(b.gep(a["K"], [b.add(b.mul(c64(w), a["stride"]), j)], inbounds=True))

    with Loop(b, a["n"], "i") as li:
        i = li.value
        key = b.load(at("sk", i))  # sort keys first, then words 1.. (word 0 follows from them)
        b.store(b.and_(b.lshr(b.mul(key, _signed(MIX[0])), a["shift"]), a["mask"]), slot)
        probe, empty, taken, same, other = (fn.append_basic_block(x) for x in ("probe", "empty", "taken", "same", "other"))
        b.branch(probe)
        b.position_at_end(probe)
        s = b.load(slot)
        d = b.load(at("table", s))
        b.cbranch(b.icmp_signed("<", d, c64(0)), empty, taken)

        b.position_at_end(empty)  # a key not met before in the chunk
        count = b.load(distinct)
        b.store(count, at("table", s))
        b.store(i, at("out", count))
        b.store(b.add(count, c64(1)), distinct)
        b.branch(li.next_)

        b.position_at_end(taken)  # the same key, or another in this slot
        j = b.load(at("out", d))
        for w in range(0, words):
            equal = fn.append_basic_block(f"equal{w}")
            mine, theirs = (key, b.load(at("sk", j))) if w == 0 else (word(w, i), word(w, j))
            b.cbranch(b.icmp_unsigned("==", mine, theirs), equal, other)
            b.position_at_end(equal)
        b.branch(same)

        b.position_at_end(same)  # the key met before: keep the candidate of smaller rank
        smaller = b.icmp_signed("<", b.load(at("rank", i)), b.load(at("rank", j)))
        b.store(b.select(smaller, i, j), at("out", d))
        b.branch(li.next_)

        b.position_at_end(other)  # another key in this slot: the next slot
        b.store(b.and_(b.add(s, c64(1)), a["mask"]), slot)
        b.branch(probe)
    b.store(b.load(distinct), a["found"])
    b.ret_void()


def _halvings(b: ir.IRBuilder, n: ir.Value, low: ir.Value, ascending: ir.Value, keys: ir.Value, size: ir.Value,
              below: str, name: str, clear: bool = True) -> None:
    """Binary searches of n keys (at `keys`) in the ascending values at `ascending` (as many as
    `size`, a pointer, holds; it is used up), branch-free, every key's range halved in one pass
    over the keys so that their loads overlap: low[i] (set to 0 first, or as given unless
    `clear`) ends at the last position of the range from it whose value is `below` key i (the
    comparison, unsigned), or its start. `b` is left after."""
    fn = b.function

    def at(p: ir.Value, j: ir.Value) -> ir.Value:
        return b.gep(p, [j], inbounds=True)

    if clear:
        with Loop(b, n, f"{name}.clear") as li:
            b.store(c64(0), at(low, li.value))
    head, halve, done = (fn.append_basic_block(f"{name}.{part}") for part in ("head", "halve", "done"))
    b.branch(head)
    b.position_at_end(head)
    left = b.load(size)
    b.cbranch(b.icmp_signed(">", left, c64(1)), halve, done)
    b.position_at_end(halve)
    half = b.lshr(left, c64(1))
    with Loop(b, n, f"{name}.i") as li:
        lo = b.load(at(low, li.value))
        middle = b.add(lo, half)
        goes = b.icmp_unsigned(below, b.load(at(ascending, middle)), b.load(at(keys, li.value)))
        b.store(b.select(goes, middle, lo), at(low, li.value))
    b.store(b.sub(left, half), size)
    b.branch(head)
    b.position_at_end(done)


def search_kernel(module: ir.Module) -> None:
    """`search(X, n, words, asc, idx, sizes, out, unknown, low)`: for word w of key i (X[w * n + i]),
    its position in word w's sorted values (at address asc[w], sizes[w] of them, at least one)
    gives out[w * n + i] = idx[w][position]; unknown[i] = 1 where some word is not there.
    A binary search halves every key's range in one pass over the keys (`low`: n scratch
    positions), as all of a word's searches take the same steps: the keys' loads overlap."""
    fn, a = kernel_function(module, "search", ("X", "n", "words", "asc", "idx", "sizes", "out", "unknown", "low"),
                      lambda x: I8.as_pointer() if x == "unknown" else P64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    size = b.alloca(I64, name="size")

    def at(p: ir.Value, j: ir.Value) -> ir.Value:
        return b.gep(p, [j], inbounds=True)

    with Loop(b, a["words"], "w") as lw:
        asc = b.inttoptr(b.load(at(a["asc"], lw.value)), P64)
        idx = b.inttoptr(b.load(at(a["idx"], lw.value)), P64)
        keys = at(a["X"], b.mul(lw.value, a["n"]))
        b.store(b.load(at(a["sizes"], lw.value)), size)
        _halvings(b, a["n"], a["low"], asc, keys, size, "<=", "search")
        with Loop(b, a["n"], "found") as li:
            lo = b.load(at(a["low"], li.value))
            b.store(b.load(at(idx, lo)), at(b.gep(a["out"], [b.mul(lw.value, a["n"])], inbounds=True), li.value))
            missing = fn.append_basic_block("missing")
            b.cbranch(b.icmp_unsigned("==", b.load(at(asc, lo)), b.load(at(keys, li.value))), li.next_, missing)
            b.position_at_end(missing)
            b.store(ir.Constant(I8, 1), at(a["unknown"], li.value))
    b.ret_void()


def unpack_words_kernel(module: ir.Module) -> None:
    """`unpack_words(L, n, pieces, starts, words, values, sizes, out, stride, bad)`: the other words
    of n keys whose dictionary indices are bit-packed in lanes (kmc/engines/vector/packed.py:Layout;
    lane k, uint64, at address L[k]). Word w's index is its pieces (rows (lane, shift, bits) of
    `pieces`, from starts[w] to starts[w + 1], lowest bits first), and out[w * stride + i] is
    value number index of its dictionary (sizes[w] values at address values[w]). An index past
    its dictionary (a damaged level) gives 0 and is counted in bad[0]. A word at a time, a piece
    at a time over the keys: every pass reads and writes in order."""
    fn, a = kernel_function(module, "unpack_words",
                            ("L", "n", "pieces", "starts", "words", "values", "sizes", "out", "stride", "bad"),
                            lambda x: I64 if x in ("n", "words", "stride") else P64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    low, bad = b.alloca(I64, name="low"), b.alloca(I64, name="bad")
    b.store(c64(0), bad)

    def at(p: ir.Value, j: ir.Value) -> ir.Value:
        return b.gep(p, [j], inbounds=True)

    with Loop(b, a["words"], "w") as lw:
        w = lw.value
        row = b.gep(a["out"], [b.mul(w, a["stride"])], inbounds=True)
        first = b.load(at(a["starts"], w))
        with Loop(b, a["n"], "clear") as li:
            b.store(c64(0), at(row, li.value))
        b.store(c64(0), low)
        with Loop(b, b.sub(b.load(at(a["starts"], b.add(w, c64(1)))), first), "piece") as lp:
            piece = b.mul(b.add(first, lp.value), c64(3))
            lane = b.inttoptr(b.load(at(a["L"], b.load(at(a["pieces"], piece)))), P64)
            shift = b.load(at(a["pieces"], b.add(piece, c64(1))))
            bits = b.load(at(a["pieces"], b.add(piece, c64(2))))
            mask = b.lshr(c64(-1), b.sub(c64(64), bits))  # bits is 1 to 64
            up = b.load(low)
            with Loop(b, a["n"], "bits") as li:
                part = b.shl(b.and_(b.lshr(b.load(at(lane, li.value)), shift), mask), up)
                b.store(b.or_(b.load(at(row, li.value)), part), at(row, li.value))
            b.store(b.add(up, bits), low)
        values = b.inttoptr(b.load(at(a["values"], w)), P64)
        size = b.load(at(a["sizes"], w))
        with Loop(b, a["n"], "value") as li:
            index = b.load(at(row, li.value))
            inside, outside = fn.append_basic_block("inside"), fn.append_basic_block("outside")
            b.cbranch(b.icmp_unsigned("<", index, size), inside, outside)
            b.position_at_end(inside)
            b.store(b.load(at(values, index)), at(row, li.value))
            b.branch(li.next_)
            b.position_at_end(outside)
            b.store(c64(0), at(row, li.value))
            b.store(b.add(b.load(bad), c64(1)), bad)
    b.store(b.load(bad), a["bad"])
    b.ret_void()


def lower_bound_kernel(module: ir.Module, ranged: bool) -> None:
    """`lower_bounds(A, size, Q, n, low)`: low[i] = how many of the `size` ascending values at A
    are below Q[i] (numpy's searchsorted, side left). Branch-free, every key's range halved in
    one pass over the keys, as `search`: the keys' loads overlap where numpy's wait on each other.
    `ranged`: `lower_bounds_from(A, size, Q, n, low)`, each key searched among the `size` values
    from low[i] as given (kmc/engines/vector/bounds.py:lower_bounds_from)."""
    fn, a = kernel_function(module, "lower_bounds_from" if ranged else "lower_bounds", ("A", "size", "Q", "n", "low"),
                            lambda x: I64 if x in ("size", "n") else P64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    left = b.alloca(I64, name="left")

    def at(p: ir.Value, j: ir.Value) -> ir.Value:
        return b.gep(p, [j], inbounds=True)

    last, done = fn.append_basic_block("lower.last"), fn.append_basic_block("lower.done")
    b.store(a["size"], left)
    _halvings(b, a["n"], a["low"], a["A"], a["Q"], left, "<", "lower", clear=not ranged)
    b.cbranch(b.icmp_signed(">", a["size"], c64(0)), last, done)
    b.position_at_end(last)
    with Loop(b, a["n"], "end") as li:
        lo = b.load(at(a["low"], li.value))
        below = b.icmp_unsigned("<", b.load(at(a["A"], lo)), b.load(at(a["Q"], li.value)))
        b.store(b.add(lo, b.zext(below, I64)), at(a["low"], li.value))
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()


def filter_kernels(module: ir.Module) -> None:
    """`mark(sk, n, table, shift)` sets, and `marked(sk, n, table, shift, out)` tests, each sort
    key's bit in a bit table (uint8): bit number mix(key) >> shift, as KeyFilter._slots."""
    # llvm.prefetch(address, write, locality, data)
    prefetch = ir.Function(module, ir.FunctionType(ir.VoidType(), [I8.as_pointer(), I32, I32, I32]),
                           name="llvm.prefetch.p0i8")
    for name, args in (("mark", ("sk", "n", "table", "shift")), ("marked", ("sk", "n", "table", "shift", "out"))):
        fn, a = kernel_function(module, name, args,
                                lambda x: I64 if x in _SCALARS else I8.as_pointer() if x in ("table", "out") else P64)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        last = b.sub(a["n"], c64(1))
        with Loop(b, a["n"], "i") as li:
            # the byte of the key _AHEAD on is fetched meanwhile: the table is larger than the
            # cache, and each key's byte a miss (memory's latency, not its bandwidth, bounds this)
            ahead = b.add(li.value, c64(_AHEAD))
            ahead = b.select(b.icmp_signed(">", ahead, last), last, ahead)
            later = b.lshr(mixed(b, b.load(b.gep(a["sk"], [ahead], inbounds=True))), a["shift"])
            b.call(prefetch, [b.gep(a["table"], [b.lshr(later, c64(3))], inbounds=True),
                              ir.Constant(I32, int(name == "mark")), ir.Constant(I32, 3), ir.Constant(I32, 1)])
            slot = b.lshr(mixed(b, b.load(b.gep(a["sk"], [li.value], inbounds=True))), a["shift"])
            byte = b.gep(a["table"], [b.lshr(slot, c64(3))], inbounds=True)
            bit = b.trunc(b.and_(slot, c64(7)), I8)
            if name == "mark":
                b.store(b.or_(b.load(byte), b.shl(ir.Constant(I8, 1), bit)), byte)
            else:
                b.store(b.and_(b.lshr(b.load(byte), bit), ir.Constant(I8, 1)), b.gep(a["out"], [li.value], inbounds=True))
        b.ret_void()


def insert_kernel(module: ir.Module) -> None:
    """`insert(A, size, n, pos, m, new)`: the m values at `new` inserted into the n sorted
    values at A (room for n + m; each `size` bytes), new[k] before A[pos[k]] (pos ascending):
    from the top, the run of stored values between two insertion points moves up by the
    number of new values at or below it (one memmove), then new[k] goes in below it."""
    memmove = ir.Function(module, ir.FunctionType(ir.VoidType(), [I8.as_pointer(), I8.as_pointer(), I64, ir.IntType(1)]),
                          name="llvm.memmove.p0i8.p0i8.i64")
    fn, a = kernel_function(module, "insert", ("A", "size", "n", "pos", "m", "new"),
                            lambda x: I8.as_pointer() if x in ("A", "new") else P64 if x == "pos" else I64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    size = a["size"]

    def byte(p: ir.Value, i: ir.Value) -> ir.Value:
        return b.gep(p, [b.mul(i, size)], inbounds=True)

    def move(dst: ir.Value, src: ir.Value, length: ir.Value, name: str) -> None:
        """memmove(dst, src, length); a few bytes moved here, from the top (a call costs more)."""
        short, call, moved = (fn.append_basic_block(f"{name}.{x}") for x in ("short", "call", "moved"))
        b.cbranch(b.icmp_signed("<=", length, c64(_SHORT_MOVE)), short, call)
        b.position_at_end(short)
        with Loop(b, length, f"{name}.byte") as lj:
            j = b.sub(b.sub(length, c64(1)), lj.value)
            b.store(b.load(b.gep(src, [j], inbounds=True)), b.gep(dst, [j], inbounds=True))
        b.branch(moved)
        b.position_at_end(call)
        b.call(memmove, [dst, src, length, ir.Constant(ir.IntType(1), 0)])
        b.branch(moved)
        b.position_at_end(moved)

    with Loop(b, a["m"], "k") as lk:
        k = b.sub(b.sub(a["m"], c64(1)), lk.value)  # from the top
        start = b.load(b.gep(a["pos"], [k], inbounds=True))
        top = b.icmp_signed("==", k, b.sub(a["m"], c64(1)))
        end = b.select(top, a["n"], b.load(b.gep(a["pos"], [b.select(top, k, b.add(k, c64(1)))], inbounds=True)))
        move(byte(a["A"], b.add(start, b.add(k, c64(1)))), byte(a["A"], start), b.mul(b.sub(end, start), size), "run")
        move(byte(a["A"], b.add(start, k)), byte(a["new"], k), size, "new")
    b.ret_void()


class KeyKernels:
    """The key kernels for keys of `words` words, compiled once (cached on disk): sort keys and
    first occurrences for keys of more than one word."""

    def __init__(self, words: int):
        self.words = words

        def ir_text() -> str:
            module = cache.new_module(f"kmc keys of {words} words")
            if words > 1:
                sort_key_kernel(module, words)
                first_kernel(module, words)
            search_kernel(module)
            unpack_words_kernel(module)
            lower_bound_kernel(module, ranged=False)
            lower_bound_kernel(module, ranged=True)
            filter_kernels(module)
            insert_kernel(module)
            return str(module)

        function = cache.cached(cache.generated_fingerprint("keys", words), ir_text)
        if words > 1:
            self._sort_keys = function("sort_keys", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p])
            self._first = function("first", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                             ctypes.c_void_p, ctypes.c_void_p])
        self._search = function("search", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                           ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_void_p])
        self._lower_bounds, self._lower_bounds_from = (
            function(name, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p])
            for name in ("lower_bounds", "lower_bounds_from"))
        self._unpack_words = function("unpack_words", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                                       ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                                       ctypes.c_int64, ctypes.c_void_p])
        self._insert = function("insert", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                           ctypes.c_int64, ctypes.c_void_p])
        self._mark = function("mark", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64])
        self._marked = function("marked", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p])

    def takes(self, keys: np.ndarray) -> bool:
        """Whether `keys` (words x n) are laid out as the sort-key and first-occurrence kernels,
        made for keys of more than one word, read them."""
        return self.words > 1 and keys.strides[0] % 8 == 0 and keys.dtype == np.uint64 and keys.shape[0] == self.words and keys.strides[1] == 8 and keys.shape[1] > 0

    def sort_keys(self, keys: np.ndarray) -> np.ndarray:
        """The sort keys of `keys` (words x n): read in place when laid out as the kernel reads them
        (a slice of wider rows included), else copied so (KeyFormat.sort_keys hands it any array)."""
        if not self.takes(keys):
            keys = np.ascontiguousarray(keys, dtype=np.uint64)
            if keys.shape[1] == 0:
                return np.zeros(0, dtype=np.uint64)
        n = keys.shape[1]
        sort_key = np.empty(n, dtype=np.uint64)
        self._sort_keys(keys.ctypes.data, n, keys.strides[0] // 8, sort_key.ctypes.data)
        return sort_key

    def first(self, keys: np.ndarray, sort_key: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """The position of each distinct key's candidate of smallest `rank` (int64), in the
        order the keys are first met."""
        n = keys.shape[1]
        bits = max(2 * n - 1, 1).bit_length()  # at most half the slots taken
        table = np.full(1 << bits, -1, dtype=np.int64)
        rank = np.ascontiguousarray(rank, dtype=np.int64)
        out = np.empty(n, dtype=np.int64)
        count = np.zeros(1, dtype=np.int64)
        self._first(keys.ctypes.data, n, keys.strides[0] // 8, sort_key.ctypes.data, rank.ctypes.data,
                    table.ctypes.data, (1 << bits) - 1, 64 - bits, out.ctypes.data, count.ctypes.data)
        return out[:int(count[0])]

    def search(self, words: np.ndarray, tables: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """(for each word w of each key in `words` (W x n, uint64), its index in `tables[w]` =
        (values ascending, their indices), W x n int64; whether each key has a word not there).
        Every table holds a value."""
        words = np.ascontiguousarray(words, dtype=np.uint64)
        count, n = words.shape
        ascending = [np.ascontiguousarray(t[0], dtype=np.uint64) for t in tables]
        index = [np.ascontiguousarray(t[1], dtype=np.int64) for t in tables]  # kept alive through the call
        out = np.empty((count, n), dtype=np.int64)
        unknown = np.zeros(n, dtype=np.int8)
        low = np.empty(n, dtype=np.int64)
        addresses = np.array([[x.ctypes.data for x in ascending], [x.ctypes.data for x in index],
                              [len(x) for x in ascending]], dtype=np.int64)
        self._search(words.ctypes.data, n, count, addresses[0].ctypes.data, addresses[1].ctypes.data,
                     addresses[2].ctypes.data, out.ctypes.data, unknown.ctypes.data, low.ctypes.data)
        return out, unknown.view(np.bool_)

    def unpack_words(self, pieces: list[list[tuple[int, int, int]]], lanes: list[np.ndarray], values: list[np.ndarray],
                     out: np.ndarray) -> None:
        """kmc/engines/vector/levels.py:unpack_words in one native call: the other words of keys
        whose indices are bit-packed in `lanes` (word w's `pieces[w]`: kmc/engines/vector/packed.py:Layout),
        decoded by the dictionaries `values`, into the rows of `out` (words x n, uint64, each row
        contiguous)."""
        n = out.shape[1]
        if not n or not len(values):
            return
        assert out.dtype == np.uint64 and out.strides[1] == 8 and out.shape[0] == len(values)
        lanes = [np.ascontiguousarray(x, dtype=np.uint64) for x in lanes]  # kept alive through the call
        values = [np.ascontiguousarray(v, dtype=np.uint64) for v in values]
        table = np.array([p for word in pieces for p in word], dtype=np.int64).reshape(-1)
        starts = np.cumsum([0, *(len(word) for word in pieces)], dtype=np.int64)
        addresses = np.array([x.ctypes.data for x in lanes] or [0], dtype=np.int64)
        dictionaries = np.array([[v.ctypes.data for v in values], [len(v) for v in values]], dtype=np.int64)
        bad = np.zeros(1, dtype=np.int64)
        self._unpack_words(addresses.ctypes.data, n, table.ctypes.data, starts.ctypes.data, len(values),
                           dictionaries[0].ctypes.data, dictionaries[1].ctypes.data, out.ctypes.data,
                           out.strides[0] // 8, bad.ctypes.data)
        if bad[0]:
            raise ValueError(f"{int(bad[0])} coded words past their dictionaries: the level is damaged")

    def lower_bounds(self, ascending: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """np.searchsorted(ascending, keys) for uint64 arrays (int64 positions)."""
        if len(keys) < _NATIVE_FROM or len(ascending) < 16 * _NATIVE_FROM:
            return np.searchsorted(ascending, keys)
        return _in_blocks(self._lower_bounds, ascending, len(ascending), keys, np.empty(len(keys), dtype=np.int64))

    def lower_bounds_from(self, ascending: np.ndarray, keys: np.ndarray, start: np.ndarray, span: int) -> np.ndarray:
        """kmc/engines/vector/bounds.py:lower_bounds_from: start[i] + how many of the `span`
        values of `ascending` from start[i] are below keys[i]."""
        return _in_blocks(self._lower_bounds_from, ascending, span, keys, np.array(start, dtype=np.int64))

    def insert(self, arrays: list[np.ndarray], n: int, news: Sequence[Any], pos: np.ndarray) -> None:
        """kmc/engines/vector/keyset.py:insert, natively: each of `news` (an array, or a
        function making it) into the sorted first n values of its array in `arrays` (room for
        them), new[i] before a[pos[i]] (pos ascending): a memmove per run of stored values."""
        pos = np.ascontiguousarray(pos, dtype=np.int64)
        for a, made in zip(arrays, news):
            new = np.ascontiguousarray(made() if callable(made) else made, dtype=a.dtype)
            if len(pos) != len(new) or len(a) < n + len(new) or not a.flags.c_contiguous or not a.flags.writeable:
                raise ValueError("insert: writable contiguous arrays with room for the new values, one place each")
            if len(new):
                self._insert(a.ctypes.data, a.dtype.itemsize, n, pos.ctypes.data, len(new), new.ctypes.data)

    def mark(self, table: np.ndarray, bits: int, sort_key: np.ndarray) -> None:
        """Set the bit of each sort key in `table` (2**bits bits, uint8)."""
        sort_key = np.ascontiguousarray(sort_key, dtype=np.uint64)
        self._mark(sort_key.ctypes.data, len(sort_key), table.ctypes.data, 64 - bits)

    def marked(self, table: np.ndarray, bits: int, sort_key: np.ndarray) -> np.ndarray:
        """Whether the bit of each sort key is set in `table`."""
        sort_key = np.ascontiguousarray(sort_key, dtype=np.uint64)
        out = np.empty(len(sort_key), dtype=np.uint8)
        self._marked(sort_key.ctypes.data, len(sort_key), table.ctypes.data, 64 - bits, out.ctypes.data)
        return out.view(np.bool_)


def _in_blocks(kernel: Any, ascending: np.ndarray, size: int, keys: np.ndarray, out: np.ndarray) -> np.ndarray:
    """`kernel`(A, size, Q, n, low) (a lower-bound kernel) over `keys` a block at a time, so that a
    block's keys and positions stay in cache; `out` holds each key's start where the kernel reads one."""
    ascending = np.ascontiguousarray(ascending, dtype=np.uint64)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    for at in range(0, len(keys), _LOWER_BOUNDS_BLOCK):
        n = min(_LOWER_BOUNDS_BLOCK, len(keys) - at)
        kernel(ascending.ctypes.data, size, keys[at:].ctypes.data, n, out[at:].ctypes.data)
    return out
