"""A native hash set of 64-bit keys: the keys a level has found so far, when a key is one word
(kmc/engines/vector/levelset.py).

The table is open-addressed with linear probing: uint64 slots, each a key or EMPTY (all ones;
the key EMPTY itself is held by a flag beside the table), a key's first slot the top bits of
its mix (kmc/engines/vector/keyset.py:mix, as the key filter's bit). `add(keys, n, table,
shift, flag)` puts each key in, once; `holds(keys, n, table, shift, flag, out)` writes 1
where a key is in the table; `insert(keys, n, table, shift, flag, out)` does both, one probe a
key: 1 where a key was held, and 0 where it was not and is now. Each fetches the first slot of the key 32 keys on while it probes
this one's: a table larger than the cache misses at nearly every key.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from llvmlite import ir

from kmc.semantics.compiled import cache
from kmc.semantics.compiled.emit import Loop, kernel_function
from kmc.semantics.compiled.keys import I32, mixed
from kmc.semantics.compiled.values import I8, I64, P64, c64

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
_AHEAD = 32  # keys between a slot's fetch and its probe


def prefetch_function(module: ir.Module) -> ir.Function:
    """LLVM's prefetch intrinsic, declared in `module`."""
    return ir.Function(module, ir.FunctionType(ir.VoidType(), [I8.as_pointer(), I32, I32, I32]),
                       name="llvm.prefetch.p0i8")


def fetch_ahead(b: ir.IRBuilder, prefetch: ir.Function, keys: ir.Value, table: ir.Value, shift: ir.Value,
                i: ir.Value, last: ir.Value, write: bool) -> None:
    """Fetch the first slot (in `table`, of 2**(64 - shift) slots) of the key _AHEAD keys after
    key i (the last key near the end), for reading or for writing."""
    ahead = b.add(i, c64(_AHEAD))
    ahead = b.select(b.icmp_signed(">", ahead, last), last, ahead)
    later = b.lshr(mixed(b, b.load(b.gep(keys, [ahead], inbounds=True))), shift)
    b.call(prefetch, [b.bitcast(b.gep(table, [later], inbounds=True), I8.as_pointer()),
                      ir.Constant(I32, int(write)), ir.Constant(I32, 3), ir.Constant(I32, 1)])


def slot_mask(b: ir.IRBuilder, shift: ir.Value) -> ir.Value:
    """2**(64 - shift) - 1: a slot's index wraps around the table."""
    return b.sub(b.shl(c64(1), b.sub(c64(64), shift)), c64(1))


def hash_kernels(module: ir.Module) -> None:
    prefetch = prefetch_function(module)
    empty = c64(-1)
    for name, args in (("add", ("keys", "n", "table", "shift", "flag")),
                       ("holds", ("keys", "n", "table", "shift", "flag", "out")),
                       ("insert", ("keys", "n", "table", "shift", "flag", "out"))):
        writes = name != "holds"
        fn, a = kernel_function(module, name, args,
                                lambda x: I64 if x in ("n", "shift") else I8.as_pointer() if x == "out" else P64)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        slot = b.alloca(I64, name="slot")
        mask = slot_mask(b, a["shift"])
        last = b.sub(a["n"], c64(1))
        with Loop(b, a["n"], "i") as li:
            fetch_ahead(b, prefetch, a["keys"], a["table"], a["shift"], li.value, last, write=writes)
            key = b.load(b.gep(a["keys"], [li.value], inbounds=True))
            out = b.gep(a["out"], [li.value], inbounds=True) if name != "add" else None
            flagged, probe = fn.append_basic_block("flagged"), fn.append_basic_block("probe")
            b.cbranch(b.icmp_unsigned("==", key, empty), flagged, probe)
            b.position_at_end(flagged)  # the key EMPTY: the flag
            if out is not None:
                b.store(b.trunc(b.load(a["flag"]), I8), out)
            if writes:
                b.store(c64(1), a["flag"])
            b.branch(li.next_)
            b.position_at_end(probe)
            b.store(b.lshr(mixed(b, key), a["shift"]), slot)
            head, found, vacant, on = (fn.append_basic_block(x) for x in ("head", "found", "vacant", "on"))
            b.branch(head)
            b.position_at_end(head)
            at = b.load(slot)
            held = b.load(b.gep(a["table"], [at], inbounds=True))
            other = fn.append_basic_block("other")
            b.cbranch(b.icmp_unsigned("==", held, key), found, other)
            b.position_at_end(other)
            b.cbranch(b.icmp_unsigned("==", held, empty), vacant, on)
            b.position_at_end(on)
            b.store(b.and_(b.add(at, c64(1)), mask), slot)
            b.branch(head)
            b.position_at_end(found)
            if out is not None:
                b.store(ir.Constant(I8, 1), out)
            b.branch(li.next_)
            b.position_at_end(vacant)
            if writes:
                b.store(key, b.gep(a["table"], [at], inbounds=True))
            if out is not None:
                b.store(ir.Constant(I8, 0), out)
            b.branch(li.next_)
        b.ret_void()


class HashKernels:
    """`add`, `holds` and `insert` over a table of 2**bits slots (uint64, EMPTY where free) and its flag
    (int64[1]: whether the key EMPTY is held)."""

    def __init__(self) -> None:
        def ir_text() -> str:
            module = cache.new_module("kmc hash set")
            hash_kernels(module)
            return str(module)

        function = cache.cached(cache.generated_fingerprint("hash set"), ir_text)
        self._add = function("add", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p])
        self._holds = function("holds", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_void_p, ctypes.c_void_p])
        self._insert = function("insert", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                           ctypes.c_void_p, ctypes.c_void_p])

    def add(self, table: np.ndarray, flag: np.ndarray, keys: np.ndarray) -> None:
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        if len(keys):
            self._add(keys.ctypes.data, len(keys), table.ctypes.data, _shift(table), flag.ctypes.data)

    def holds(self, table: np.ndarray, flag: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return self._marked(self._holds, table, flag, keys)

    def insert(self, table: np.ndarray, flag: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Whether each of distinct keys was held; those not held are added (the table must
        have room for them)."""
        return self._marked(self._insert, table, flag, keys)

    @staticmethod
    def _marked(kernel: Any, table: np.ndarray, flag: np.ndarray, keys: np.ndarray) -> np.ndarray:
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        out = np.empty(len(keys), dtype=np.uint8)
        if len(keys):
            kernel(keys.ctypes.data, len(keys), table.ctypes.data, _shift(table), flag.ctypes.data, out.ctypes.data)
        return out.view(np.bool_)


def _shift(table: np.ndarray) -> int:
    """64 - bits, for a table of 2**bits slots."""
    bits = len(table).bit_length() - 1
    assert len(table) == 1 << bits and table.dtype == np.uint64 and table.flags.c_contiguous
    return 64 - bits
