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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import tomlkit
from tomlkit.items import InlineTable

from kmc import registry
from kmc.engines import run as engines
from kmc.engines.result import CheckResult, Verdict
from kmc.tomlfile import TomlFile, type_name
from kmc.errors import BadInput
from kmc.model.core import Model

CHECK_KEYS = {"model", "engine", "symmetry", "states", "settings", "expect", "fires"}
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
    engine: str = "vector"
    symmetry: bool = False
    states: int | None = None
    expect: dict[str, Expected] = field(default_factory=dict)
    base: Path | None = None  # where a model file's relative path starts: the baseline's folder
    fires: list[str] = field(default_factory=list)  # action families that must fire


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
    engine = entry.get("engine", "vector")
    _typed(f, where, entry, "engine", str)
    if engine not in engines.ENGINES:
        raise f.error(f"unknown engine {engine!r}; allowed: {', '.join(engines.ENGINES)}", where, "engine")
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
    return Check(model, settings, engine, symmetry, states, expect, base, fires)


def _fires(f: TomlFile, where: tuple[Any, ...], entry: dict[str, Any], model: str, instances: list[Any]) -> list[str]:
    raw = entry.get("fires", [])
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise f.error("key 'fires' must be a list of action names", where, "fires")
    families = list(dict.fromkeys(inst.action.name for inst in instances))
    for name in raw:
        if name not in families:
            raise f.error(f"unknown action {name!r} in 'fires' for model {model}; allowed: {', '.join(families)}",
                          where, "fires")
    if "engine" in entry and entry["engine"] != "vector" and raw:
        raise f.error("'fires' needs coverage, which the vector engine collects: drop 'engine'", where, "fires")
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
    """The check with the expectations `result` shows."""
    expect = {}
    for name, verdict in result.invariants.items():
        seen = Expected.of(verdict)
        if seen is not None:
            expect[name] = seen
    states = result.distinct_states if result.complete or check.states is not None else None
    # every option written out: the baseline pins the configuration even if a default changes
    return Check(check.model, dict(result.settings), check.engine, check.symmetry, states, expect, check.base,
                 check.fires)


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
