"""`--time-limit` and `--memory-limit`: options that end long runs cleanly with a partial
verdict (kmc/engines/interface.py:Limits.exhausted says when)."""

from __future__ import annotations

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


def limit_options() -> list[Callable[[Any], Any]]:
    return [
        click.option("--time-limit", type=click.FloatRange(0, None, min_open=True), default=None, metavar="SECONDS",
                     help="end the run cleanly after this many seconds, with partial verdicts"),
        click.option("--memory-limit", type=ByteSize(), default=None, metavar="SIZE",
                     help="end the run cleanly once resident memory reaches SIZE (e.g. 4G), with partial verdicts"),
    ]
