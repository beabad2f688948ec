"""The layout of a state: named integer fields (`Field`), a state seen by field name (`View`),
and the `Schema` that flattens fields into a tuple of ints and reads effects back into positions.

A concrete state is a flat tuple of ints laid out by the model's Schema; `NONE` (-1) is "no
value" in any field. Part of the model contract (kmc/model/core.py re-exports every name here,
so model files import from one place). This module depends on nothing else in kmc.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from kmc.errors import BadInput
from kmc.model.located import Mistake

State = tuple[int, ...]

NONE = -1  # "no value" in any field: no replica, no epoch, no record, an empty log slot


def replica_name(r: int) -> str:
    """Replicas as Kafka engineers name them in traces: r1, r2, ... (or none)."""
    return "none" if r == NONE else f"r{r + 1}"


@dataclass(frozen=True)
class Field:
    """A named integer field with inclusive range [lo, hi]; `shape` makes it an array:
    `Field("hw", lo=0, hi=size, shape=(n,), doc="high watermark", replica_axes=(0,))`.

    `replica_axes` lists the axes indexed by replica id and `holds_replica` says whether
    the values are replica ids (with -1 for none): the symmetry reduction needs both.
    """

    name: str
    lo: int
    hi: int
    _: KW_ONLY
    shape: tuple[int, ...] = ()
    doc: str = ""
    replica_axes: tuple[int, ...] = ()
    holds_replica: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.shape, tuple) or not all(isinstance(n, numbers.Integral) and n >= 0 for n in self.shape):
            raise Mistake(f"field {self.name}: shape={self.shape!r}: a shape is a tuple of sizes, as shape=(3,) "
                          "or shape=(3, 2)")

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class View:
    """A state seen by field name. Slots are filled by Schema.view."""

    __slots__ = ()

    if TYPE_CHECKING:  # fields are attributes made per schema: a type checker sees any name
        def __getattr__(self, name: str) -> Any: ...


# The types model code is written against. Values are lifted: a Python int or bool (scalar),
# a numpy column (vector), a tracing Term, a z3 term (symbolic), so they stay `Any` to a checker.
StateView = View  # `s`: a state (or a batch of states) seen by field name: s.hw[r], s.log_id[r][o]
Bool = Any  # a lifted truth value: what guards and invariants return
Int = Any  # a lifted integer
Effect = dict[str, Any]  # field name -> its new value, or {concrete index: new sub-value}


class Schema:
    """The layout of a state: fields in order, each flattened row-major."""

    def __init__(self, fields: Sequence[Field]):
        for f in fields:
            if not isinstance(f, Field):
                raise Mistake(f"the schema lists {f!r}, not a Field: list Field(\"name\", lo=0, hi=3), ...")
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise Mistake(f"two fields named {twice!r} in the schema: give each field its own name")
        for f in fields:
            if f.lo > f.hi:
                raise Mistake(f"field {f.name}: empty range [{f.lo}, {f.hi}]: lo must be at most hi")
        self.fields: tuple[Field, ...] = tuple(fields)
        self.by_name: dict[str, Field] = {f.name: f for f in fields}
        self.offset: dict[str, int] = {}
        pos = 0
        for f in fields:
            self.offset[f.name] = pos
            pos += f.size
        self.width = pos
        self.lo: tuple[int, ...] = tuple(f.lo for f in fields for _ in range(f.size))
        self.hi: tuple[int, ...] = tuple(f.hi for f in fields for _ in range(f.size))
        self._view_class: type[View] = type("StateView", (View,), {"__slots__": tuple(names)})
        self._builders = [(f.name, self._builder(f)) for f in fields]
        self._lazy_class: type[View] = _lazy_view_class(dict(self._builders))

    # -- reading -----------------------------------------------------------------------

    def _builder(self, f: Field) -> Callable[[Sequence[Any]], Any]:
        start = self.offset[f.name]
        if not f.shape:
            return lambda v: v[start]
        if len(f.shape) == 1:
            end = start + f.shape[0]
            return lambda v: list(v[start:end])
        if len(f.shape) == 2:
            rows, cols = f.shape
            return lambda v: [list(v[start + i * cols : start + (i + 1) * cols]) for i in range(rows)]

        def nested(v: Sequence[Any], shape: tuple[int, ...] = f.shape, base: int = start) -> Any:
            if len(shape) == 1:
                return list(v[base : base + shape[0]])
            stride = math.prod(shape[1:])
            return [nested(v, shape[1:], base + i * stride) for i in range(shape[0])]

        return nested

    def view(self, values: Sequence[Any]) -> Any:
        """A view of one flat state (or of one column per position, for vector backends)."""
        obj = self._view_class.__new__(self._view_class)
        for name, build in self._builders:
            object.__setattr__(obj, name, build(values))
        return obj

    def view_lazily(self, values: Sequence[Any]) -> Any:
        """A view like `view`'s that reads a field from `values` only when model code first
        asks for it (engines pass columns gathered on demand: most effects read few fields)."""
        obj = self._lazy_class.__new__(self._lazy_class)
        object.__setattr__(obj, "_values", values)
        return obj

    def value(self, state: Sequence[Any], name: str) -> Any:
        """The (nested) value of one field of a flat state."""
        return self._builders[[f.name for f in self.fields].index(name)][1](state)

    def positions(self, name: str) -> Iterator[tuple[int, tuple[int, ...]]]:
        """(flat position, index tuple) of every element of a field."""
        f = self.by_name[name]
        base = self.offset[name]
        for k, idx in enumerate(itertools.product(*(range(n) for n in f.shape))):
            yield base + k, idx

    # -- writing -----------------------------------------------------------------------

    def updates(self, effect: Mapping[str, Any]) -> list[tuple[int, Any]]:
        """Flatten an action's effect into (flat position, new value) pairs.

        An effect maps a field name to its whole new value (a scalar, or nested lists in the
        field's shape) or to a dict {concrete index: new sub-value} that changes only the
        named elements, recursively.
        """
        out: list[tuple[int, Any]] = []
        for name, value in effect.items():
            f = self.by_name.get(name)
            if f is None:
                raise KeyError(f"effect names unknown field {name!r} (fields: {', '.join(self.by_name)})")
            try:
                self._flatten(f.shape, self.offset[name], value, out)
            except (ValueError, IndexError) as e:
                raise type(e)(f"effect sets field {name}: {e}") from e
        return out

    def _flatten(self, shape: tuple[int, ...], base: int, value: Any, out: list[tuple[int, Any]]) -> None:
        if not shape:
            out.append((base, value))
            return
        stride = math.prod(shape[1:])
        if isinstance(value, dict):
            items: Any = value.items()
        else:
            if not hasattr(value, "__len__"):
                raise ValueError(f"one value for an axis of size {shape[0]}: give a list, or {{index: value}} for "
                                 "some elements")
            if len(value) != shape[0]:
                raise ValueError(f"a value of length {len(value)} for an axis of size {shape[0]}")
            items = enumerate(value)
        for i, sub in items:
            if not 0 <= i < shape[0]:
                raise IndexError(f"index {i} outside an axis of size {shape[0]}")
            self._flatten(shape[1:], base + i * stride, sub, out)

    def state(self, **values: Any) -> State:
        """A flat state from whole field values; every field must be given."""
        missing = [f.name for f in self.fields if f.name not in values]
        if missing:
            raise Mistake(f"schema.state() misses field {missing[0]}: give every field its value, "
                             f"as schema.state({', '.join(f'{n}=...' for n in self.by_name)})")
        unknown = [n for n in values if n not in self.by_name]
        if unknown:
            raise Mistake(f"schema.state() names no field {unknown[0]!r}; fields: {', '.join(self.by_name)}")
        flat = [0] * self.width
        for pos, v in self.updates(values):
            flat[pos] = int(v)
        return tuple(flat)

    def element_names(self) -> list[str]:
        """A name per flat position: field[i][j]."""
        names: list[str] = []
        for f in self.fields:
            for _, idx in self.positions(f.name):
                names.append(f.name + "".join(f"[{i}]" for i in idx))
        return names


def _lazy_view_class(builders: dict[str, Callable[[Sequence[Any]], Any]]) -> type[View]:
    """A view class whose fields are built from `_values` on first read, then kept."""

    def __getattr__(self: Any, name: str) -> Any:
        build = builders.get(name)
        if build is None:
            raise AttributeError(name)
        value = build(object.__getattribute__(self, "_values"))
        object.__setattr__(self, name, value)
        return value

    return type("StateView", (View,), {"__slots__": (*builders, "_values"), "__getattr__": __getattr__})
