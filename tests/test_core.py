"""The model contract's plumbing: schema layout, effects, options."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kmc.errors import BadInput
from kmc.model.core import Field, Option, Schema
from kmc.model.replication import Replication

SCHEMA = Schema([Field("a", lo=0, hi=3), Field("b", lo=-1, hi=2, shape=(2,)), Field("c", lo=0, hi=1, shape=(2, 3))])


def test_layout_is_row_major() -> None:
    assert SCHEMA.width == 1 + 2 + 6
    assert SCHEMA.element_names()[:4] == ["a", "b[0]", "b[1]", "c[0][0]"]
    assert SCHEMA.element_names()[-1] == "c[1][2]"


@given(st.lists(st.integers(-5, 5), min_size=9, max_size=9))
def test_view_reads_back_what_state_wrote(values: list[int]) -> None:
    state = SCHEMA.state(a=values[0], b=values[1:3], c=[values[3:6], values[6:9]])
    assert state == tuple(values)
    v = SCHEMA.view(state)
    assert v.a == values[0] and v.b == values[1:3] and v.c == [values[3:6], values[6:9]]


def test_partial_updates_touch_only_the_named_elements() -> None:
    assert SCHEMA.updates({"b": {1: 7}, "c": {1: {2: 5}}}) == [(2, 7), (8, 5)]
    assert SCHEMA.updates({"c": {0: [1, 1, 1]}}) == [(3, 1), (4, 1), (5, 1)]


def test_malformed_effects_are_refused() -> None:
    with pytest.raises(KeyError, match="unknown field 'z'"):
        SCHEMA.updates({"z": 1})
    with pytest.raises(ValueError, match="length 3 for an axis of size 2"):
        SCHEMA.updates({"b": [1, 2, 3]})
    with pytest.raises(IndexError):
        SCHEMA.updates({"b": {2: 0}})


def test_options_name_the_flag_and_what_is_allowed() -> None:
    with pytest.raises(BadInput, match=r"--replicas must be from 1 to 8 \(got 9\)"):
        Replication(replicas=9)
    with pytest.raises(BadInput, match="--mode: unknown value 'x'; allowed: hw, kip101"):
        Replication(mode="x")
    with pytest.raises(BadInput, match="unknown option 'brokers' for model replication"):
        Replication(brokers=3)
    with pytest.raises(BadInput, match="takes an integer"):
        Option("n", 1, "n", min=0).check("3")


def test_instances_are_numbered_in_a_stable_order() -> None:
    labels = [i.label for i in Replication(mode="kip320").instances()]
    assert labels[0] == "controller_elect_leader(leader=r1)"
    assert labels == [i.label for i in Replication(mode="kip320").instances()]
    assert len(labels) == len(set(labels))


def test_a_lazy_view_reads_only_the_fields_asked_for() -> None:
    """`Schema.view_lazily` gives what `view` gives, field by field, and reads a field's
    positions only when model code first asks for that field."""

    class Reads(list):  # a flat state that records the positions read
        seen: set[int]

        def __getitem__(self, j):  # type: ignore[override]
            got = super().__getitem__(j)
            self.seen |= set(range(9)[j]) if isinstance(j, slice) else {j}
            return got

    values = Reads(range(9))
    values.seen = set()
    lazy, eager = SCHEMA.view_lazily(values), SCHEMA.view(list(range(9)))
    assert values.seen == set()
    assert lazy.b == eager.b and values.seen == {1, 2}
    assert lazy.c == eager.c and lazy.a == eager.a and values.seen == set(range(9))
    with pytest.raises(AttributeError):
        lazy.nope
