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
    lemmas: str = ""  # "module:function": strengthening lemmas for `kmc prove`, never checked by default

    def load(self) -> tuple[type[Model], Callable[[Any], list[Invariant]]]:
        mod, cls = self.model.split(":")
        inv_mod, fn = self.invariants.split(":")
        return getattr(importlib.import_module(mod), cls), getattr(importlib.import_module(inv_mod), fn)


MODELS: dict[str, Entry] = {
    "replication": Entry("kmc.model.replication:Replication", "kmc.invariants.replication:invariants",
                         "kmc.invariants.replication:lemmas"),
    "fetch": Entry("kmc.model.fetch:Fetch", "kmc.invariants.fetch:invariants", "kmc.invariants.fetch:lemmas"),
    "idempotence": Entry("kmc.model.idempotence:Idempotence", "kmc.invariants.idempotence:invariants",
                         "kmc.invariants.idempotence:lemmas"),
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


def lemmas(name: str, model: Model) -> list[Invariant]:
    """The model's strengthening lemmas (invariants that help k-induction, documented with
    the model's invariants); `kmc check` leaves them out: they are proof aids, and some are
    true only in the modes whose proofs use them."""
    entry = MODELS[name]
    if not entry.lemmas:
        return []
    mod, fn = entry.lemmas.split(":")
    return list(getattr(importlib.import_module(mod), fn)(model))


def select(invariants: list[Invariant], names: list[str] | None) -> list[Invariant]:
    """The named invariants, in the order given; None means all of them."""
    if names is None:
        return invariants
    by_name = {i.name: i for i in invariants}
    for n in names:
        if n not in by_name:
            raise BadInput(f"unknown invariant {n!r}; allowed: {', '.join(by_name)}")
    return [by_name[n] for n in dict.fromkeys(names)]
