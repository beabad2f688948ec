"""A native kernel that moves walkers to their chosen successors: `patch(old, new, who, n, rows)`.

For each of n walkers, `old` and `new` hold its key words before and after its step (n x
words, uint64) and `who` its row in `rows` (walkers x positions, of the rows' dtype); the positions of each
key word that changed are unpacked again from the new word (digit j of a word is
`word // mult[j] % radix[j]`, plus the position's lowest value), the others are left as they
are: a step changes a few fields, and a kraft state has 1,484 positions in 47 words. Built as
LLVM IR for the model's packing and compiled (or loaded from the cache) through
kmc/semantics/compiled/cache.py, like the model's own kernels.
"""

from __future__ import annotations

import ctypes
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from kmc.semantics.compiled import cache
from kmc.semantics.compiled.values import element, narrow

_I64 = ir.IntType(64)


def _c(v: int) -> ir.Constant:
    v = int(v)
    return ir.Constant(_I64, v - 2**64 if v >= 2**63 else v)  # the same 64 bits, as LLVM reads a constant


def patch_ir(name: str, spans: Sequence[tuple[int, int]], radix: Sequence[int], mult: Sequence[int],
             lo: Sequence[int], width: int, itemsize: int) -> str:
    """The kernel's IR for a packing (its key words' spans of positions, each position's radix,
    multiplier and lowest value) of states `width` positions of `itemsize` bytes wide."""
    module = cache.new_module(name)
    p64 = _I64.as_pointer()
    elem = element(itemsize)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [p64, p64, p64, _I64, elem.as_pointer()]), "patch")
    old, new, who, n, rows = fn.args
    words = len(spans)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    counter = b.alloca(_I64)
    b.store(_c(0), counter)
    head, body, done = (fn.append_basic_block(x) for x in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    i = b.load(counter)
    b.cbranch(b.icmp_signed("<", i, n), body, done)
    b.position_at_end(body)
    row = b.gep(rows, [b.mul(b.load(b.gep(who, [i])), _c(width))])
    for w, (s, e) in enumerate(spans):
        at = b.add(b.mul(i, _c(words)), _c(w))
        word = b.load(b.gep(new, [at]))
        differs = b.icmp_unsigned("!=", b.load(b.gep(old, [at])), word)
        with b.if_then(differs):
            for j in range(s, e):
                digit = b.udiv(word, _c(mult[j])) if mult[j] != 1 else word
                if j != s:
                    digit = b.urem(digit, _c(radix[j]))
                b.store(narrow(b, b.add(digit, _c(lo[j])), elem), b.gep(row, [_c(j)]))
    b.store(b.add(i, _c(1)), counter)
    b.branch(head)
    b.position_at_end(done)
    b.ret_void()
    return str(module)


def patch_kernel(spans: Sequence[tuple[int, int]], radix: Sequence[int], mult: Sequence[int], lo: Sequence[int],
                 width: int, dtype: np.dtype) -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]:
    """`patch(old, new, who, rows)` for a packing and rows of `dtype`, compiled (or loaded from the cache)."""
    text = patch_ir("kmc patch", spans, radix, mult, lo, width, dtype.itemsize)
    function, _, _ = cache.load(text)
    run = function("patch", [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p])

    def patch(old: np.ndarray, new: np.ndarray, who: np.ndarray, rows: np.ndarray) -> None:
        old, new = np.ascontiguousarray(old, dtype=np.uint64), np.ascontiguousarray(new, dtype=np.uint64)
        who = np.ascontiguousarray(who, dtype=np.int64)
        assert rows.flags.c_contiguous and rows.dtype == dtype and old.shape == new.shape == (len(who), len(spans))
        run(old.ctypes.data, new.ctypes.data, who.ctypes.data, len(who), rows.ctypes.data)

    return patch
