"""`--time-limit` and `--memory-limit`: options that end long runs cleanly with a partial
verdict (kmc/engines/search.py:Limits.exhausted says when)."""

from __future__ import annotations

import math
import re
from typing import Any, Callable

import click

_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


class ByteSize(click.ParamType):
    """A memory size: bytes, or a number with K, M, G or T (binary units: 2G = 2 GiB)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            size = value
        else:
            m = _SIZE.match(str(value))
            if not m:
                self.fail(f"{value!r} is not a size; write bytes or a number with K, M, G or T (e.g. 4G)", param, ctx)
            number = float(m.group(1)) * _UNITS[m.group(2).lower()]
            if not math.isfinite(number):
                self.fail(f"{str(value)[:20]!r}...: the size is too large to be a number", param, ctx)
            size = int(number)
        if size <= 0:
            self.fail(f"{value!r}: the size must be positive", param, ctx)
        return size


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
                     help="end the run cleanly once resident memory reaches SIZE (e.g. 4G), with partial verdicts"),
    ]
