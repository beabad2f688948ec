"""Memory sizes as people write them: bytes, or a number with K, M, G or T (binary units:
2G = 2 GiB), for `--memory-limit` and a baseline's `memory_limit`."""

from __future__ import annotations

import math
import re

_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(value: int | str) -> int:
    """The size in bytes; ValueError, saying what to write, when it is not a positive size."""
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        m = _SIZE.match(str(value))
        if not m:
            raise ValueError(f"{value!r} is not a size; write bytes or a number with K, M, G or T (e.g. 4G)")
        number = float(m.group(1)) * _UNITS[m.group(2).lower()]
        if not math.isfinite(number):
            raise ValueError(f"{str(value)[:20]!r}...: the size is too large to be a number")
        size = int(number)
    if size <= 0:
        raise ValueError(f"{value!r}: the size must be positive")
    return size


def show_size(n: int) -> str:
    """A size as it could have been written: 4G, 1536M, 1000."""
    for unit, factor in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n % factor == 0:
            return f"{n // factor}{unit}"
    return str(n)
