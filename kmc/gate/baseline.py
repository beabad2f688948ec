"""Gate baselines: the checks a repository runs in CI and the verdicts it expects of them.

```toml
[[check]]
model = "replication"
states = 10131                  # optional: the exact distinct state count
[check.settings]                # the model's options, by name (mode first)
mode = "hw"
max_leader_epoch = 2
[check.expect]                  # per invariant: "holds", or "violated N" (shortest trace, N steps)
strong-isr = "violated 9"
leader-in-isr = "holds"
```

`model` is a model's name or a model file (`path/model.py[:Class]`, relative to the baseline).
Optional per check: `engine` (default vector), `symmetry`, and `fires`, a list of action
families that must fire at least once (the run collects coverage: a change that silently
disables a rule is a regression). A check without `[check.expect]`
checks every invariant of its model; `kmc gate --update` fills the expectations in.

Limits, optional per check, as the flags of `kmc check`: `time_limit` (seconds), `max_states`,
`max_depth` (BFS levels), `memory_limit` (bytes, or a size such as "4G"). A check they stop
with an invariant undecided is INCOMPLETE (a failure; `kmc gate` exits 4), unless it says
`incomplete_ok = true`: then an undecided invariant passes where the baseline expects "holds"
(read: not violated within the limits).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import tomlkit
from tomlkit.items import InlineTable

from kmc import registry
from kmc.api import DEFAULT_ENGINE, ENGINES, CheckResult, Verdict, able
from kmc.tomlfile import TomlFile, type_name
from kmc.errors import BadInput
from kmc.model.core import Model
from kmc.sizes import parse_size

LIMIT_KEYS = ("time_limit", "max_states", "max_depth", "memory_limit")
CHECK_KEYS = {"model", "engine", "symmetry", "states", "settings", "expect", "fires", *LIMIT_KEYS, "incomplete_ok"}
_VIOLATED = re.compile(r"^violated (\d+)$")


@dataclass
class Expected:
    """An invariant's expected verdict: it holds (steps None), or it is violated with a
    shortest counterexample of `steps` steps."""

    holds: bool
    steps: int | None = None

    def text(self) -> str:
        return "holds" if self.holds else f"violated {self.steps}"

    @staticmethod
    def of(verdict: Verdict) -> Expected | None:
        if verdict.holds is True:
            return Expected(True)
        if verdict.holds is False and verdict.trace is not None:
            return Expected(False, verdict.trace.length)
        return None  # undecided


@dataclass
class Check:
    model: str
    settings: dict[str, Any]
    engine: str = DEFAULT_ENGINE
    symmetry: bool = False
    states: int | None = None
    expect: dict[str, Expected] = field(default_factory=dict)
    base: Path | None = None  # where a model file's relative path starts: the baseline's folder
    fires: list[str] = field(default_factory=list)  # action families that must fire
    time_limit: float | None = None  # seconds
    max_states: int | None = None
    max_depth: int | None = None  # BFS levels, the initial states being level 1
    memory_limit: int | None = None  # bytes
    incomplete_ok: bool = False  # an undecided invariant passes where "holds" is expected


@dataclass
class Baseline:
    path: Path
    checks: list[Check]
    text: str  # the file as read: --update edits it, keeping the user's comments and layout


def load(path: Path) -> Baseline:
    f = TomlFile(path, "baseline")
    unknown = set(f.data) - {"check"}
    if unknown:
        key = sorted(unknown)[0]
        raise f.error(f"unknown key {key!r}; a baseline holds [[check]] tables only", key=key)
    raw = f.data.get("check")
    if not isinstance(raw, list) or not raw:
        raise f.error("no [[check]] table: a baseline lists at least one check")
    checks = [_check(f, k, entry) for k, entry in enumerate(raw)]
    return Baseline(path, checks, f.text)


def _check(f: TomlFile, k: int, entry: Any) -> Check:
    where = ("check", k)
    if not isinstance(entry, dict):
        raise f.error("each check must be a [[check]] table", where)
    for key in entry:
        if key not in CHECK_KEYS:
            raise f.error(f"unknown key {key!r} in a check; allowed: {', '.join(sorted(CHECK_KEYS))}", where, key)
    if "model" not in entry:
        raise f.error("a check needs the key 'model'", where)
    model = _typed(f, where, entry, "model", str)
    base = f.path.parent  # a model file is named relative to the baseline
    try:
        cls = registry.model_class(model, base)
    except BadInput as e:
        raise f.error(str(e), where, "model")
    engine = entry.get("engine", DEFAULT_ENGINE)
    _typed(f, where, entry, "engine", str)
    if engine not in ENGINES or not ENGINES[engine].capabilities.check:
        raise f.error(f"unknown engine {engine!r}; allowed: {', '.join(able('check'))}", where, "engine")
    symmetry = entry.get("symmetry", False)
    _typed(f, where, entry, "symmetry", bool)
    states = entry.get("states")
    _typed(f, where, entry, "states", int)
    settings = _settings(f, (*where, "settings"), cls, _typed(f, where, entry, "settings", dict) or {})
    expect = _expect(f, (*where, "expect"), _typed(f, where, entry, "expect", dict) or {})
    try:
        built, invariants = registry.build(model, base, **settings)
    except BadInput as e:
        raise f.error(str(e), (*where, "settings"))
    fires = _fires(f, where, entry, model, built.instances())
    names = {i.name for i in invariants}
    for name in expect:
        if name not in names:
            raise f.error(f"unknown invariant {name!r} for model {model}; allowed: {', '.join(sorted(names))}",
                          (*where, "expect"), name)
    limits = _limits(f, where, entry)
    incomplete_ok = bool(_typed(f, where, entry, "incomplete_ok", bool))
    return Check(model, settings, engine, symmetry, states, expect, base, fires, **limits, incomplete_ok=incomplete_ok)


def _limits(f: TomlFile, where: tuple[Any, ...], entry: dict[str, Any]) -> dict[str, Any]:
    """The check's limits: a positive number of seconds, positive counts, a size."""
    out: dict[str, Any] = {}
    seconds = entry.get("time_limit")
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (
                math.isfinite(seconds) and seconds > 0):
            raise f.error(f"key 'time_limit' must be a positive number of seconds (got {seconds!r})", where,
                          "time_limit")
        out["time_limit"] = float(seconds)
    for key in ("max_states", "max_depth"):
        count = _typed(f, where, entry, key, int)
        if count is not None and count < 1:
            raise f.error(f"key {key!r} must be at least 1 (got {count})", where, key)
        out[key] = count
    size = entry.get("memory_limit")
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, (int, str)):
            raise f.error(f"key 'memory_limit' must be bytes or a size such as \"4G\" (got {type_name(size)})",
                          where, "memory_limit")
        try:
            out["memory_limit"] = parse_size(size)
        except ValueError as e:
            raise f.error(f"key 'memory_limit': {e}", where, "memory_limit")
    if entry.get("engine") == "z3" and out.get("max_states") is not None:
        raise f.error("'max_states' is for the explicit engines: the z3 engine counts no states", where, "max_states")
    return out


def _fires(f: TomlFile, where: tuple[Any, ...], entry: dict[str, Any], model: str, instances: list[Any]) -> list[str]:
    raw = entry.get("fires", [])
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise f.error("key 'fires' must be a list of action names", where, "fires")
    families = list(dict.fromkeys(inst.action.name for inst in instances))
    for name in raw:
        if name not in families:
            raise f.error(f"unknown action {name!r} in 'fires' for model {model}; allowed: {', '.join(families)}",
                          where, "fires")
    engine = entry.get("engine", DEFAULT_ENGINE)
    if raw and engine in ENGINES and not ENGINES[engine].capabilities.coverage:
        raise f.error(f"'fires' needs coverage, which the {' and '.join(able('coverage'))} engines collect: "
                      f"drop 'engine'", where, "fires")
    return list(raw)


def _typed(f: TomlFile, where: tuple[Any, ...], entry: dict[str, Any], key: str, kind: type) -> Any:
    value = entry.get(key)
    if value is None:
        return None
    wrong = not isinstance(value, kind) or (kind is int and isinstance(value, bool))
    if wrong:
        want = {str: "a string", int: "an integer", bool: "a boolean", dict: "a table"}[kind]
        raise f.error(f"key {key!r} must be {want} (got {type_name(value)})", where, key)
    return value


def _settings(f: TomlFile, where: tuple[Any, ...], cls: type[Model], raw: dict[str, Any]) -> dict[str, Any]:
    model = cls.name
    options = {o.name: o for o in cls.options}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        if name not in options:
            raise f.error(f"unknown option {key!r} for model {model}; allowed: {', '.join(options)}", where, key)
        try:
            out[name] = options[name].check(value)
        except BadInput as e:
            raise f.error(f"key {key!r}: {e}", where, key)
    return out


def _expect(f: TomlFile, where: tuple[Any, ...], raw: dict[str, Any]) -> dict[str, Expected]:
    out: dict[str, Expected] = {}
    for name, value in raw.items():
        if not isinstance(value, str):
            raise f.error(f"key {name!r} must be a string, \"holds\" or \"violated N\" (got {type_name(value)})",
                          where, name)
        if value == "holds":
            out[name] = Expected(True)
        elif m := _VIOLATED.match(value):
            out[name] = Expected(False, int(m.group(1)))
        else:
            raise f.error(f"key {name!r}: {value!r} is neither \"holds\" nor \"violated N\"", where, name)
    return out


def updated(check: Check, result: CheckResult) -> Check:
    """The check with the expectations `result` shows (with incomplete_ok, "holds" for an
    invariant the limits left undecided: not violated within them)."""
    expect = {}
    for name, verdict in result.invariants.items():
        seen = Expected.of(verdict)
        if seen is None and check.incomplete_ok:
            seen = Expected(True)
        if seen is not None:
            expect[name] = seen
    states = result.distinct_states if counts_exact(result) else check.states
    # every option written out: the baseline pins the configuration even if a default changes
    return Check(check.model, dict(result.settings), check.engine, check.symmetry, states, expect, check.base,
                 check.fires, check.time_limit, check.max_states, check.max_depth, check.memory_limit,
                 check.incomplete_ok)


def counts_exact(result: CheckResult) -> bool:
    """Whether a run's state count is the same every time: a complete run, or one stopped by a
    count (max_states, max_depth), not by the clock or the memory."""
    return result.complete or result.stopped_by in ("max-states", "max-depth")


def dumps(baseline: Baseline) -> str:
    """The baseline's text with each check's states, settings and expectations set to those of
    `baseline.checks`, edited in place (tomlkit): comments, layout, key spellings and every other
    key are kept, and any name is quoted as TOML needs."""
    doc = tomlkit.parse(baseline.text)
    for table, c in zip(doc["check"], baseline.checks):
        if c.states is not None:
            table["states"] = c.states
        elif "states" in table:
            del table["states"]
        _set(table, "settings", c.settings, lambda key: key.replace("-", "_"))
        _set(table, "expect", {name: e.text() for name, e in c.expect.items()}, lambda key: key)
    return tomlkit.dumps(doc)


def _set(check: Any, key: str, values: dict[str, Any], name: Callable[[str], str]) -> None:
    """Make the sub-table `key` of a check hold exactly `values`; a key already written keeps its
    spelling (`max-crashes` for max_crashes) and its place."""
    if key not in check:
        check[key] = tomlkit.inline_table() if isinstance(check, InlineTable) else tomlkit.table()
    table = check[key]
    spelled = {name(k): k for k in table}
    for old, k in spelled.items():
        if old not in values:
            del table[k]
    for n, value in values.items():
        table[spelled.get(n, n)] = value
