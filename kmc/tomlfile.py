"""Reading input files (run files, baselines, scenarios, traces) with errors that name the file
and the line.

tomllib gives values but no positions, so `KeyLines` finds the line a key is written on by
a light scan of the text (table headers, arrays of tables, `key =` lines): enough to point a
person at the key an error is about.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from kmc.errors import BadInput

_ARRAY = re.compile(r"^\s*\[\[\s*([^\]]+?)\s*\]\]")
_TABLE = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
_KEY = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*=""")

MAX_BYTES = 2**28  # the largest input file read (traces of kmc's runs are kilobytes, baselines too)
Where = tuple[Any, ...]  # a table's path: names, with an index after the name of an array of tables


class KeyLines:
    """The line (1-based) of each key and table header of a TOML text."""

    def __init__(self, text: str):
        self.lines: dict[tuple[Where, str | None], int] = {}
        counts: dict[str, int] = {}
        table: Where = ()
        for number, line in enumerate(text.splitlines(), start=1):
            if m := _ARRAY.match(line):
                name = m.group(1)
                counts[name] = counts.get(name, -1) + 1
                table = (*self._path(name, counts), counts[name])
                self.lines.setdefault((table, None), number)
            elif m := _TABLE.match(line):
                table = self._path(m.group(1), counts)
                self.lines.setdefault((table, None), number)
            elif m := _KEY.match(line):
                key = next(g for g in m.groups() if g is not None)
                self.lines.setdefault((table, key), number)

    @staticmethod
    def _path(dotted: str, counts: dict[str, int]) -> Where:
        """`check.expect` inside the third [[check]] is ("check", 2, "expect")."""
        parts = [p.strip().strip('"') for p in dotted.split(".")]
        out: list[Any] = []
        for k, part in enumerate(parts):
            out.append(part)
            prefix = ".".join(parts[: k + 1])
            if prefix in counts and k < len(parts) - 1:
                out.append(counts[prefix])
        return tuple(out)

    def line(self, table: Where = (), key: str | None = None) -> int | None:
        """The line of `key` in `table` (or of the table's header); None when not found."""
        found = self.lines.get((table, key))
        if found is None and key is not None:
            found = self.lines.get((table, None))
        return found


def read_text(path: Path, what: str) -> str:
    """The text of an input file, which must be UTF-8 (as TOML and JSON require) and at most
    MAX_BYTES long (read no further: /dev/zero is refused too)."""
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size  # a regular file's size: refused before it is read
            data = b"" if size > MAX_BYTES else f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise BadInput(f"{path}: no such {what}")
    except OSError as e:
        raise BadInput(f"{path}: cannot read the {what}: {e.strerror}")
    if size > MAX_BYTES or len(data) > MAX_BYTES:
        raise BadInput(f"{path}: the {what} is larger than {MAX_BYTES // 2**20} MiB; kmc's input files are far smaller")
    return decode(data, str(path))


def decode(data: bytes, source: str) -> str:
    """UTF-8 bytes as text; otherwise BadInput naming the first bad byte and its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise BadInput(f"{source}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                       "save the file as UTF-8")


class TomlFile:
    """A parsed TOML file that raises BadInput as `FILE:LINE: message`."""

    def __init__(self, path: Path, what: str):
        self.path = path
        self.text = read_text(path, what)
        try:
            self.data: dict[str, Any] = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as e:
            raise BadInput(f"{path}: malformed TOML: {e}")
        except RecursionError:
            raise BadInput(f"{path}: malformed TOML: arrays or tables nested too deeply")
        self.keys = KeyLines(self.text)

    def error(self, message: str, table: Where = (), key: str | None = None) -> BadInput:
        line = self.keys.line(table, key)
        return BadInput(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")


def type_name(value: Any) -> str:
    """A TOML value's type, as TOML names it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__
