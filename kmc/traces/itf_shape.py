"""The JSON shape of an ITF trace, checked before anything reads it as a trace.

An ITF document is an object: "#meta" (an object), "states" (a non-empty list of objects), and
optionally "vars" (a list of names) and "loop" (a state's index). A state's fields are integers
or lists of them (nested as the schema's arrays are); ITF's `{"#bigint": "-12"}` is taken as the
integer it spells. Every integer fits in 64 bits. Anything else is one BadInput line naming the
file and the JSON path of the first value that does not fit (`states[3].hw[1]`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from kmc.errors import BadInput

LIMIT = 2**63  # integers are in [-LIMIT, LIMIT): a state's values are machine words
DIGITS = 20  # the longest integer literal read: 2**63 has 19 digits, a sign makes 20
NESTING = 8  # lists inside lists a field value may have (a schema's arrays have a few axes)
_BIGINT = re.compile(r"^-?[0-9]{1,19}$")

_META_TEXT = ("format", "source", "model", "model_source", "description")


def parse(text: str, source: str) -> Any:
    """JSON text as Python values: integer literals of at most DIGITS digits, no NaN or
    Infinity, no nesting deeper than Python's recursion allows."""

    def integer(literal: str) -> int:
        if len(literal.lstrip("-")) > DIGITS:
            raise BadInput(f"{source}: integer {literal[:12]}... has {len(literal.lstrip('-')):,} digits; "
                           "a trace's integers fit in 64 bits")
        return int(literal)

    def constant(name: str) -> Any:
        raise BadInput(f"{source}: {name} is not a JSON number; a trace's numbers are integers")

    try:
        return json.loads(text, parse_int=integer, parse_constant=constant)
    except json.JSONDecodeError as e:
        raise BadInput(f"{source}: not JSON: {e}")
    except RecursionError:
        raise BadInput(f"{source}: not an ITF trace: lists or objects nested too deeply")


def check(data: Any, source: str) -> dict[str, Any]:
    """`data` (parsed JSON) if it has an ITF trace's shape, its `#bigint`s made integers;
    otherwise BadInput naming the first value that does not fit."""
    top = _object(data, "the document", source)
    for key in ("#meta", "states"):
        if key not in top:
            raise BadInput(f"{source}: not an ITF trace: it has no {key!r} key")
    meta = _object(top.get("#meta"), "#meta", source)
    for key in _META_TEXT:
        if key in meta:
            _text(meta[key], f"#meta.{key}", source)
    if meta.get("invariant") is not None:
        _text(meta["invariant"], "#meta.invariant", source)
    if "length" in meta:
        _integer(meta["length"], "#meta.length", source)
    if "settings" in meta:
        settings = _object(meta["settings"], "#meta.settings", source)
        for name, value in settings.items():
            if not isinstance(value, (str, bool)):
                settings[name] = _integer(value, f"#meta.settings.{name}", source)
    if "vars" in top:
        names = top["vars"]
        if not isinstance(names, list):
            raise BadInput(f"{source}: vars must be a list of field names (got {_kind(names)})")
        for k, name in enumerate(names):
            _text(name, f"vars[{k}]", source)
    states = top.get("states")
    if not isinstance(states, list) or not states:
        raise BadInput(f"{source}: states must be a non-empty list of states (got {_kind(states)})")
    for k, raw in enumerate(states):
        _state(raw, f"states[{k}]", source)
    if "loop" in top and top["loop"] is not None:
        _integer(top["loop"], "loop", source)
    return top


def _state(raw: Any, where: str, source: str) -> None:
    state = _object(raw, where, source)
    for name, value in state.items():
        if name == "#meta":
            _step_meta(value, f"{where}.#meta", source)
        else:
            state[name] = _value(value, f"{where}.{name}", source, 0)


def _step_meta(raw: Any, where: str, source: str) -> None:
    meta = _object(raw, where, source)
    for key in ("action", "label"):
        if key in meta:
            _text(meta[key], f"{where}.{key}", source)
    if "index" in meta:
        _integer(meta["index"], f"{where}.index", source)
    if "params" in meta:
        params = _object(meta["params"], f"{where}.params", source)
        for name, value in params.items():
            if not isinstance(value, str):
                params[name] = _integer(value, f"{where}.params.{name}", source)


def _value(value: Any, where: str, source: str, depth: int) -> Any:
    """A field's value: an integer, or a list of values (at most NESTING deep)."""
    if isinstance(value, list):
        if depth >= NESTING:
            raise BadInput(f"{source}: {where}: lists nested more than {NESTING} deep; a field is an integer "
                           "or an array of them")
        return [_value(v, f"{where}[{k}]", source, depth + 1) for k, v in enumerate(value)]
    return _integer(value, where, source)


def _integer(value: Any, where: str, source: str) -> int:
    if isinstance(value, dict) and set(value) == {"#bigint"}:
        spelled = value["#bigint"]
        if not (isinstance(spelled, str) and _BIGINT.match(spelled)):
            raise BadInput(f"{source}: {where}: #bigint must spell an integer of at most 19 digits "
                           f"(got {str(spelled)[:40]!r})")
        value = int(spelled)
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadInput(f"{source}: {where} must be an integer (got {_kind(value)})")
    if not -LIMIT <= value < LIMIT:
        raise BadInput(f"{source}: {where} = {value} does not fit in 64 bits")
    return value


def _object(value: Any, where: str, source: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadInput(f"{source}: not an ITF trace: {where} must be a JSON object (got {_kind(value)})")
    return value


def _text(value: Any, where: str, source: str) -> str:
    if not isinstance(value, str):
        raise BadInput(f"{source}: {where} must be a string (got {_kind(value)})")
    return value


def _kind(value: Any) -> str:
    """A JSON value's type, as JSON names it."""
    if value is None:
        return "null"
    if value == []:
        return "an empty array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
