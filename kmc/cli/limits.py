"""`--time-limit` and `--memory-limit`: options that end long runs cleanly with a partial
verdict (kmc/engines/interface.py:Limits.exhausted says when)."""

from __future__ import annotations

import math
from typing import Any, Callable

import click

from kmc.sizes import parse_size


class ByteSize(click.ParamType):
    """A memory size: bytes, or a number with K, M, G or T (binary units: 2G = 2 GiB)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            return parse_size(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class Seconds(click.FloatRange):
    """A duration in seconds: a finite number above 0 (nan and inf would turn a limit off)."""

    name = "seconds"

    def __init__(self) -> None:
        super().__init__(0, None, min_open=True)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a number of seconds; write a finite number above 0", param, ctx)
        return float(seconds)


def limit_options() -> list[Callable[[Any], Any]]:
    return [
        click.option("--time-limit", type=Seconds(), default=None, metavar="SECONDS",
                     help="end the run cleanly after this many seconds, with partial verdicts"),
        click.option("--memory-limit", type=ByteSize(), default=None, metavar="SIZE",
                     help="once resident memory reaches SIZE (e.g. 4G): the vector and compiled engines go on with the "
                          "visited set on disk ($TMPDIR), the others end the run cleanly with partial verdicts"),
    ]
