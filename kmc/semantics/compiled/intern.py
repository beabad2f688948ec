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


class InternKernels:
    """`intern` and `find` over a table of 2**bits slots (uint32, FREE where empty), its keys
    (`values`, uint64, with room for every key interned) and its size (`count`, int64[1]: the
    kernels' `size`)."""

    def __init__(self) -> None:
        def ir_text() -> str:
            module = cache.new_module("kmc intern table")
            intern_kernels(module)
            return str(module)

        function = cache.cached(cache.generated_fingerprint("intern table"), ir_text)
        p, i = ctypes.c_void_p, ctypes.c_int64
        self._intern = function("intern", [p, i, p, i, p, p, p])
        self._find = function("find", [p, i, p, i, p, i, p])

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


def _shift(slots: np.ndarray) -> int:
    """64 - bits, for a table of 2**bits slots."""
    bits = len(slots).bit_length() - 1
    assert len(slots) == 1 << bits and slots.dtype == np.uint32 and slots.flags.c_contiguous
    return 64 - bits
