"""The models kmc knows, by name, each with the module that lists its invariants."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from kmc.errors import BadInput
from kmc.model.core import Invariant, Model


@dataclass(frozen=True)
class Entry:
    model: str  # "module:Class"
    invariants: str  # "module:function"

    def load(self) -> tuple[type[Model], Callable[[Any], list[Invariant]]]:
        mod, cls = self.model.split(":")
        inv_mod, fn = self.invariants.split(":")
        return getattr(importlib.import_module(mod), cls), getattr(importlib.import_module(inv_mod), fn)


MODELS: dict[str, Entry] = {
    "replication": Entry("kmc.model.replication:Replication", "kmc.invariants.replication:invariants"),
    "fetch": Entry("kmc.model.fetch:Fetch", "kmc.invariants.fetch:invariants"),
    "idempotence": Entry("kmc.model.idempotence:Idempotence", "kmc.invariants.idempotence:invariants"),
    "transactions": Entry("kmc.model.transactions:Transactions", "kmc.invariants.transactions:invariants"),
}


def model_class(name: str) -> type[Model]:
    if name not in MODELS:
        raise BadInput(f"unknown model {name!r}; allowed: {', '.join(MODELS)}")
    return MODELS[name].load()[0]


def build(name: str, **settings: Any) -> tuple[Model, list[Invariant]]:
    """The model `name` with the given settings, and all of its invariants."""
    cls = model_class(name)
    model = cls(**settings)
    return model, MODELS[name].load()[1](model)


def select(invariants: list[Invariant], names: list[str] | None) -> list[Invariant]:
    """The named invariants, in the order given; None means all of them."""
    if names is None:
        return invariants
    by_name = {i.name: i for i in invariants}
    for n in names:
        if n not in by_name:
            raise BadInput(f"unknown invariant {n!r}; allowed: {', '.join(by_name)}")
    return [by_name[n] for n in dict.fromkeys(names)]
