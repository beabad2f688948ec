"""Programs as LLVM IR (llvmlite's IR builder): a kernel per template, `expand` over them, and
one kernel for the invariants.

Every operation becomes one or two instructions over 64-bit integers (values.py), so an
effect is straight-line code. `expand` loops over a chunk of
states and, on each (a state is read once), tests each template's guard's conjuncts that read
no table column and calls the template's kernel where they hold; the kernel loops over its
table's rows (one per instance): the guard's other conjuncts, each branching out when false, the cheapest
first (most guards fail on their first); where the guard holds, the effect's values, the
range check of those the positions' ranges do not keep in range (intervals.py), and the
successor's packed key: its parent's key plus (new - old) x multiplier at each written
position, in 64-bit wrap-around arithmetic (the unsigned words' bits). Candidates are appended in (state, template) order; each one's rank (parent x
instances + instance id) says where the scalar engine finds it.

`expand`'s arguments (`SUCCESSOR_ARGS`), arrays as pointers to int64 unless said:
  S (states x positions), n (states), width (positions), K (states x words: the keys), words,
  tables (per template, the address of its table: a row per instance, its id, then the
  varying slots), table_rows, table_cols (per template), count (the model's instances), word
  and mult (per position: its key word, its multiplier), drop (leave out successors equal to
  their parent), rows (write each successor's state to R and skip the range check), out_keys
  (words x cap), cap, out_rank, out_stutter, slot (rank -> candidate; other entries
  untouched), fill ([candidates, stutters], read and updated), enabled (per instance), err
  ([instance + 1, state] where a written value leaves its range; [-1] when the candidates
  outgrow `cap`), R (candidates x positions).
A template's kernel takes `TEMPLATE_ARGS`: one state's row and number, its table, its rows
and columns, the rest as `expand`'s.
The invariant kernel: `holds(S, n, width, k, out)` writes invariant k's truth per state (int8).
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

from llvmlite import ir

from kmc.semantics.compiled.intervals import Intervals
from kmc.semantics.compiled.programs import Program, Ref, Template
from kmc.semantics.compiled.values import I8, I64, P8, P64, Values, c64, narrow, wide

SUCCESSOR_ARGS = ("S", "n", "width", "K", "words", "tables", "table_rows", "table_cols", "count", "word", "mult", "drop", "rows",
                  "out_keys", "cap", "out_rank", "out_stutter", "slot", "fill", "enabled", "err", "R")
TEMPLATE_ARGS = ("row", "i", "width", "K", "words", "T", "nb", "tcols", "count", "word", "mult", "drop", "rows",
                 "out_keys", "cap", "out_rank", "out_stutter", "slot", "fill", "enabled", "err", "R")
_SCALARS = {"n", "i", "width", "words", "nb", "tcols", "count", "drop", "rows", "cap"}
_ROWS = {"S", "row", "R"}  # arrays of states' positions: of the rows' element type
INVARIANT_ARGS = ("S", "n", "width", "k", "out")


def kernel_function(module: ir.Module, name: str, args: Sequence[str], pointers: Callable[[str], ir.Type]
              ) -> tuple[ir.Function, dict[str, ir.Value]]:
    types = [I64 if a in _SCALARS or a == "k" else pointers(a) for a in args]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), types), name)
    named = {}
    for a, arg in zip(args, fn.args):
        arg.name = a
        if isinstance(arg.type, ir.PointerType):
            arg.add_attribute("noalias")
        named[a] = arg
    return fn, named


class Loop:
    """`for v in range(stop)` as blocks: the body is built between `__enter__` and `__exit__`;
    `next_` is the block that goes on to the next iteration (a `continue`)."""

    def __init__(self, b: ir.IRBuilder, stop: ir.Value, name: str):
        self.b, self.stop, self.name = b, stop, name

    def __enter__(self) -> Loop:
        b = self.b
        here = b.block
        b.position_at_start(b.function.entry_basic_block)  # allocas in the entry block: registers once optimised
        self.counter = b.alloca(I64, name=self.name + ".at")
        b.position_at_end(here)
        b.store(c64(0), self.counter)
        fn = b.function
        self.head = fn.append_basic_block(self.name + ".head")
        body = fn.append_basic_block(self.name + ".body")
        self.next_ = fn.append_basic_block(self.name + ".next")
        self.done = fn.append_basic_block(self.name + ".done")
        b.branch(self.head)
        b.position_at_end(self.head)
        self.value = b.load(self.counter, name=self.name)
        b.cbranch(b.icmp_signed("<", self.value, self.stop), body, self.done)
        b.position_at_end(body)
        return self

    def __exit__(self, *exc: object) -> None:
        b = self.b
        if not b.block.is_terminated:
            b.branch(self.next_)
        b.position_at_end(self.next_)
        b.store(b.add(self.value, c64(1)), self.counter)
        b.branch(self.head)
        b.position_at_end(self.done)



def successor_kernel(module: ir.Module, name: str, tpl: Template, elem: ir.IntType,
                     ranges: tuple[Sequence[int], Sequence[int]]) -> None:
    """The kernel of one template, on one state (arguments: TEMPLATE_ARGS; called by `expand`
    only where the guard's shared conjuncts hold: `driver` tests them); rows (`row`, `R`) hold
    `elem` integers."""
    fn, a = kernel_function(module, name, TEMPLATE_ARGS, lambda x: elem.as_pointer() if x in _ROWS else P64)
    fn.linkage = "internal"
    fn.attributes.add("noinline")  # each template compiled on its own: LLVM's time stays linear
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def at(ptr: ir.Value, index: ir.Value) -> ir.Value:
        return b.gep(ptr, [index], inbounds=True)

    c = b.alloca(I64, name="c")
    st = b.alloca(I64, name="st")
    b.store(b.load(at(a["fill"], c64(0))), c)
    b.store(b.load(at(a["fill"], c64(1))), st)
    p = tpl.program
    intervals = Intervals(tpl, *ranges)

    def finish() -> None:
        b.store(b.load(c), at(a["fill"], c64(0)))
        b.store(b.load(st), at(a["fill"], c64(1)))

    def room(used: ir.Value) -> None:
        """Go on if an output array has room for one more at `used`; else stop, err [-1]: the
        caller gives more room and runs again."""
        full, ok = fn.append_basic_block("full"), fn.append_basic_block("room")
        b.cbranch(b.icmp_signed(">=", used, a["cap"]), full, ok)
        b.position_at_end(full)
        b.store(c64(-1), at(a["err"], c64(0)))
        finish()
        b.ret_void()
        b.position_at_end(ok)

    i, row = a["i"], a["row"]
    # the guard's conjuncts that read no table column hold for every binding or for none: the
    # driver tests them before it calls this kernel (`driver`); their values are emitted again
    # here, for the effect to read
    once = Values(b, p, tpl.columns, row, None)
    shared = shared_conjuncts(once, tpl)
    for ref in shared:
        for k in once.needs(ref):
            once.done[k] = once.emit(p.ops[k])
    with Loop(b, a["nb"], "b") as lb:
        trow = at(a["T"], b.mul(lb.value, a["tcols"]))
        v = Values(b, p, tpl.columns, row, trow)
        v.done = dict(once.done)
        v.guard(fn, lb.next_, [r for r in v.conjuncts(p.guard) if r not in shared])
        v.run(p.ops)  # the effect (and what of the guard it reads, emitted already)
        iid = b.load(trow)
        counted = at(a["enabled"], iid)
        b.store(b.add(b.load(counted), c64(1)), counted)
        rank = b.add(b.mul(i, a["count"]), iid)
        # the written values and their positions, stored in two small arrays: each write is two
        # stores here, and the key below is a loop over them (the code stays small)
        count = c64(len(p.writes))
        xs, ps, moved = _locals(b, len(p.writes))
        for n, (pos_slot, ref) in enumerate(p.writes):
            b.store(v.int_(ref), at(xs, c64(n)))
            b.store(v.slot(pos_slot), at(ps, c64(n)))
        # the written values the ranges do not keep in range (intervals.py), checked (not on
        # states from anywhere, `rows`): a value out of range stops the run
        bad = [_outside(b, module, v, pos_slot, ref) for pos_slot, ref in p.writes if not intervals.within((pos_slot, ref))]
        if bad:
            fail, good = fn.append_basic_block("fail"), fn.append_basic_block("good")
            out = b.and_(b.icmp_signed("==", a["rows"], c64(0)), functools.reduce(b.or_, bad))
            b.cbranch(out, fail, good)
            b.position_at_end(fail)
            b.store(b.add(iid, c64(1)), at(a["err"], c64(0)))
            b.store(i, at(a["err"], c64(1)))
            finish()
            b.ret_void()
            b.position_at_end(good)
        cv = b.load(c)
        room(cv)
        copy, key = fn.append_basic_block("copy"), fn.append_basic_block("key")
        b.cbranch(b.icmp_signed("!=", a["rows"], c64(0)), copy, key)
        b.position_at_end(copy)  # the successor's state, whole
        out_row = at(a["R"], b.mul(cv, a["width"]))
        with Loop(b, a["width"], "j") as lj:
            b.store(b.load(at(row, lj.value)), at(out_row, lj.value))
        with Loop(b, count, "wr") as lw:
            b.store(narrow(b, b.load(at(xs, lw.value)), elem), at(out_row, b.load(at(ps, lw.value))))
        b.branch(key)
        b.position_at_end(key)  # the parent's key, then per write: whether it changes the state,
        # and (new - old) x multiplier added to its key word (a stutter needs room here too)
        parent = at(a["K"], b.mul(i, a["words"]))
        with Loop(b, a["words"], "w") as lw:
            b.store(b.load(at(parent, lw.value)), at(a["out_keys"], b.add(b.mul(lw.value, a["cap"]), cv)))
        b.store(c64(0), moved)
        with Loop(b, count, "upd") as lw:
            x, pos = b.load(at(xs, lw.value)), b.load(at(ps, lw.value))
            change = b.sub(x, wide(b, b.load(at(row, pos))))
            update = fn.append_basic_block("update")
            b.cbranch(b.icmp_signed("!=", change, c64(0)), update, lw.next_)  # unchanged: the key as it is
            b.position_at_end(update)
            b.store(c64(1), moved)
            w = b.load(at(a["word"], pos))
            m = b.load(at(a["mult"], pos))
            cell = at(a["out_keys"], b.add(b.mul(w, a["cap"]), cv))
            b.store(b.add(b.load(cell), b.mul(change, m)), cell)
        stutter, emit = fn.append_basic_block("stutter"), fn.append_basic_block("emit")
        still = b.icmp_signed("==", b.load(moved), c64(0))
        b.cbranch(b.and_(b.icmp_signed("!=", a["drop"], c64(0)), still), stutter, emit)
        b.position_at_end(stutter)  # the slot written is left to the next candidate
        s = b.load(st)
        room(s)
        b.store(rank, at(a["out_stutter"], s))
        b.store(b.add(s, c64(1)), st)
        b.branch(lb.next_)
        b.position_at_end(emit)
        b.store(rank, at(a["out_rank"], cv))
        b.store(cv, at(a["slot"], rank))
        b.store(b.add(cv, c64(1)), c)
    finish()
    b.ret_void()


def shared_conjuncts(v: Values, tpl: Template) -> list[Ref]:
    """The conjuncts of a template's guard that read no table column: they hold for every
    binding or for none."""
    return [r for r in v.conjuncts(tpl.program.guard) if not _varies(tpl.program, tpl.columns, r)]


def _varies(p: Program, columns: dict[int, int], ref: Ref) -> bool:
    """Whether a value depends on the table row (reads a slot the table gives)."""
    todo, seen = [ref], set()
    while todo:
        tag, k = todo.pop()
        if tag != "n":
            if k in columns:
                return True
            continue
        if k in seen:
            continue
        seen.add(k)
        op = p.ops[k]
        if op.op == "read_at" and op.start in columns:
            return True
        todo.extend(op.refs)
    return False


def _outside(b: ir.IRBuilder, module: ir.Module, v: Values, pos_slot: int, ref: Ref) -> ir.Value:
    """Whether a written value is outside its position's range (LO, HI)."""
    x, pos = v.int_(ref), v.slot(pos_slot)
    low = b.load(b.gep(module.get_global("LO"), [c64(0), pos], inbounds=True))
    high = b.load(b.gep(module.get_global("HI"), [c64(0), pos], inbounds=True))
    return b.or_(b.icmp_signed("<", x, low), b.icmp_signed(">", x, high))


def _locals(b: ir.IRBuilder, writes: int) -> tuple[ir.Value, ...]:
    """Stack slots in the entry block: the written values, their positions, a flag."""
    here = b.block
    b.position_at_start(b.function.entry_basic_block)
    out = (b.alloca(I64, size=max(writes, 1), name="xs"), b.alloca(I64, size=max(writes, 1), name="ps"),
           b.alloca(I64, name="moved"))
    b.position_at_end(here)
    return out


def driver(module: ir.Module, names: Sequence[str], templates: Sequence[Template], elem: ir.IntType) -> None:
    """`expand` (arguments: SUCCESSOR_ARGS): for each state of the chunk, every template's
    kernel in turn (each state read once, candidates appended in state order), called only
    where the conjuncts of its guard that every binding shares hold (most templates are
    disabled on most states: a few loads and compares here, not a call); it stops at the first
    value out of range."""
    fn, a = kernel_function(module, "expand", SUCCESSOR_ARGS, lambda x: elem.as_pointer() if x in _ROWS else P64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    kernels = [module.get_global(n) for n in names]
    with Loop(b, a["n"], "i") as li:
        i = li.value
        row = b.gep(a["S"], [b.mul(i, a["width"])], inbounds=True)
        for t, (kernel, tpl) in enumerate(zip(kernels, templates)):
            once = Values(b, tpl.program, tpl.columns, row, None)
            call, after = fn.append_basic_block(f"call{t}"), fn.append_basic_block(f"after{t}")
            once.guard(fn, after, shared_conjuncts(once, tpl))
            b.branch(call)
            b.position_at_end(call)
            table = b.inttoptr(b.load(b.gep(a["tables"], [c64(t)], inbounds=True)), P64)
            nb = b.load(b.gep(a["table_rows"], [c64(t)], inbounds=True))
            tcols = b.load(b.gep(a["table_cols"], [c64(t)], inbounds=True))
            args = {**a, "row": row, "i": i, "T": table, "nb": nb, "tcols": tcols}
            b.call(kernel, [args[x] for x in TEMPLATE_ARGS])
            failed, ok = fn.append_basic_block(f"failed{t}"), fn.append_basic_block(f"ok{t}")
            b.cbranch(b.icmp_signed("!=", b.load(a["err"]), c64(0)), failed, ok)
            b.position_at_end(failed)
            b.ret_void()
            b.position_at_end(ok)
            b.branch(after)
            b.position_at_end(after)
    b.ret_void()


def invariant_kernel(module: ir.Module, programs: Sequence[Program], elem: ir.IntType,
                     ranges: tuple[Sequence[int], Sequence[int]]) -> None:
    """`holds(S, n, width, k, out)`: invariant k's truth on each state (0 or 1, int8). The states
    are within their positions' `ranges` (the engines store no other: a write out of range
    stops the run), so a comparison those ranges decide is a constant (type-ok's)."""
    fn, a = kernel_function(module, "holds", INVARIANT_ARGS, lambda x: P8 if x == "out" else elem.as_pointer())
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    end = fn.append_basic_block("end")
    switch = b.switch(a["k"], end)
    for k, p in enumerate(programs):
        block = fn.append_basic_block(f"inv{k}")
        switch.add_case(c64(k), block)
        b.position_at_end(block)
        with Loop(b, a["n"], "i") as li:
            row = b.gep(a["S"], [b.mul(li.value, a["width"])], inbounds=True)
            v = Values(b, p, {}, row, None, ranges)
            v.run(p.ops)
            b.store(b.zext(v.truth(p.guard), I8), b.gep(a["out"], [li.value], inbounds=True))
        b.branch(end)
    b.position_at_end(end)
    b.ret_void()


def unpack_kernel(module: ir.Module, spans: Sequence[tuple[int, int]], radix: Sequence[int], lo: Sequence[int],
                  elem: ir.IntType) -> None:
    """`unpack(packed, n, width, out)`: the states (n x width, `elem`) packed in words (packed: words x n)."""
    fn, a = kernel_function(module, "unpack", ("packed", "n", "width", "out"),
                      lambda x: elem.as_pointer() if x == "out" else P64)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with Loop(b, a["n"], "i") as li:
        i = li.value
        row = b.gep(a["out"], [b.mul(i, a["width"])], inbounds=True)
        for w, (s, e) in enumerate(spans):
            rest = b.load(b.gep(a["packed"], [b.add(b.mul(c64(w), a["n"]), i)], inbounds=True))
            for j in range(e - 1, s - 1, -1):
                q = int(radix[j])
                digit = rest if j == s else b.urem(rest, c64(q))
                b.store(narrow(b, b.add(digit, c64(lo[j])), elem), b.gep(row, [c64(j)], inbounds=True))
                if j != s:
                    rest = b.udiv(rest, c64(q))
    b.ret_void()


def ranges(module: ir.Module, lo: Sequence[int], hi: Sequence[int]) -> None:
    """The globals LO and HI: each position's range, for writes at positions a table gives."""
    for name, values in (("LO", lo), ("HI", hi)):
        ty = ir.ArrayType(I64, len(values))
        g = ir.GlobalVariable(module, ty, name)
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(ty, [int(x) for x in values])
