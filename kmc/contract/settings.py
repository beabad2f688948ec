"""The option combinations a contract check runs a model class under.

Model code branches on options (a mode adds an action, a switch changes a guard, a bound
sizes an array), so a model that keeps the contract under its defaults may break it under
another mode, switch or bound. The combinations:

- every value of every choice option (the mode, and others such as `acks`) and both values
  of every switch, crossed with one another: these select code paths;
- int options at their minimum, default and maximum: these size arrays and instance lists.
  With `full=True`, the product of those three values over every int option (crossed with
  the above); by default the ints vary one at a time around their defaults, plus all at the
  minimum and all at the maximum (crossed with every choice and switch). An int option
  without a `min` or `max` uses its default on that side.

Combinations the model class refuses (`BadInput` from its constructor: `min_insync_replicas`
above `replicas`, say) are left out; a DeclarationError (a mistake in the class) is raised.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterator

from kmc.errors import BadInput
from kmc.model.located import DeclarationError
from kmc.model.core import Model, Option


def is_int(option: Option) -> bool:
    return isinstance(option.default, int) and not isinstance(option.default, bool)


def int_values(option: Option) -> list[int]:
    """Minimum, default, maximum (distinct, ascending)."""
    assert isinstance(option.default, int)
    ends = [option.default if option.min is None else option.min, option.default,
            option.default if option.max is None else option.max]
    return sorted(set(ends))


def _branch_values(option: Option) -> list[Any]:
    if isinstance(option.default, bool):
        return [False, True]
    if option.choices is not None:
        return list(option.choices)
    return [option.default]  # a free-form string option: only its default is known to be valid


def _int_rows(ints: list[Option], full: bool) -> list[tuple[int, ...]]:
    if full:
        return list(itertools.product(*(int_values(o) for o in ints)))
    default = tuple(int(o.default) for o in ints)
    rows = [default, tuple(int_values(o)[0] for o in ints), tuple(int_values(o)[-1] for o in ints)]
    for k, o in enumerate(ints):
        for v in int_values(o):
            rows.append(default[:k] + (v,) + default[k + 1:])
    return list(dict.fromkeys(rows))  # distinct, in a fixed order


def option_settings(cls: type[Model], *, full: bool = False) -> Iterator[dict[str, Any]]:
    """Settings (option name -> value) of every combination, in a fixed order; see the module
    docstring for which. Each can be passed as `cls(**settings)`."""
    branches = [o for o in cls.options if not is_int(o)]
    ints = [o for o in cls.options if is_int(o)]
    for picked in itertools.product(*(_branch_values(o) for o in branches)):
        for row in _int_rows(ints, full):
            yield {**{o.name: v for o, v in zip(branches, picked)}, **{o.name: v for o, v in zip(ints, row)}}


def models(cls: type[Model], *, full: bool = False) -> Iterator[Model]:
    """An instance of `cls` per combination it accepts."""
    for settings in option_settings(cls, full=full):
        try:
            model = cls(**settings)
        except DeclarationError:
            raise  # a mistake in the model class, not a combination it refuses
        except BadInput:
            continue
        yield model
