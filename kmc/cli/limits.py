"""`--time-limit` and `--memory-limit`: options that end long runs cleanly with a partial
verdict (kmc/engines/interface.py:Limits.exhausted says when)."""

from __future__ import annotations

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
            size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
        if size <= 0:
            self.fail(f"{value!r}: the size must be positive", param, ctx)
        return size


def limit_options() -> list[Callable[[Any], Any]]:
    return [
        click.option("--time-limit", type=click.FloatRange(0, None, min_open=True), default=None, metavar="SECONDS",
                     help="end the run cleanly after this many seconds, with partial verdicts"),
        click.option("--memory-limit", type=ByteSize(), default=None, metavar="SIZE",
                     help="end the run cleanly once resident memory reaches SIZE (e.g. 4G), with partial verdicts"),
    ]
