"""The benchmark harness behind `kmc bench`: fixed configurations (benchmarks/configs.toml), each
run by the vector engine and by the scalar reference engine in one process, and by the Spark
engine for those marked `spark = true`; a `Row` per configuration holds the results, their
states/s ratios and whether the engines agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from contextlib import nullcontext
from typing import Any, Callable, ContextManager

from kmc import registry
from kmc.api import CheckResult, Limits, ProgressHook, SearchOptions, check as kmc_check
from kmc.engines.vector.packing import Packing
from kmc.errors import BadInput
from kmc.tomlfile import TomlFile, type_name

DEFAULT_CONFIGS = Path(__file__).resolve().parents[1] / "benchmarks" / "configs.toml"


@dataclass(frozen=True)
class Config:
    name: str
    model: str
    settings: dict[str, Any] = field(default_factory=dict)
    symmetry: bool = False
    spark: bool = False  # also run the Spark engine
    base: Path | None = None  # where a model file's relative path starts: the configurations' folder


def load(path: Path) -> list[Config]:
    """The configurations of a TOML file: [[config]] tables with name, model, settings, symmetry, spark."""
    if not path.is_file():
        raise BadInput(f"no benchmark configurations at {path}; pass --configs FILE")
    f = TomlFile(path, "benchmark configurations file")
    entries = f.data.get("config", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise f.error(f"'config' must be [[config]] tables (got {type_name(entries)})", key="config")
    configs = []
    for k, entry in enumerate(entries):
        unknown = set(entry) - {"name", "model", "settings", "symmetry", "spark"}
        if unknown or "name" not in entry or "model" not in entry:
            raise f.error(f"configuration {k + 1} needs name and model, and may have settings, "
                          f"symmetry and spark (unknown: {', '.join(sorted(unknown)) or 'none'})", ("config", k))
        for key, kind, what in (("name", str, "a string"), ("model", str, "a string"), ("settings", dict, "a table"),
                                ("symmetry", bool, "a boolean"), ("spark", bool, "a boolean")):
            if key in entry and not isinstance(entry[key], kind):
                raise f.error(f"configuration {k + 1}: {key!r} must be {what} (got {type_name(entry[key])})",
                              ("config", k), key)
        configs.append(Config(entry["name"], entry["model"], dict(entry.get("settings", {})),
                              bool(entry.get("symmetry", False)), bool(entry.get("spark", False)), path.parent))
    if not configs:
        raise BadInput(f"{path}: no [[config]] tables")
    return configs


@dataclass
class Row:
    config: Config
    key: str  # the packed key: words and bits
    vector: CheckResult
    scalar: CheckResult | None
    agree: str
    spark: CheckResult | None = None
    spark_agree: str = "not run"

    @property
    def ratio(self) -> float | None:
        if self.scalar is None or self.scalar.states_per_second <= 0:
            return None
        return self.vector.states_per_second / self.scalar.states_per_second

    @property
    def spark_states_per_second(self) -> float | None:
        """Distinct states per second over the levels, the session start left out (it is paid
        once per run, whatever the size, and reported on its own)."""
        if self.spark is None:
            return None
        levels = self.spark.seconds - float(self.spark.engine_stats.get("session_start_seconds") or 0.0)
        return self.spark.distinct_states / levels if levels > 0 else None

    @property
    def spark_ratio(self) -> float | None:
        """Spark states/s over vector states/s (the goal for configurations over 1M states: 0.5)."""
        if self.spark_states_per_second is None or self.vector.states_per_second <= 0:
            return None
        return self.spark_states_per_second / self.vector.states_per_second

    def to_json(self) -> dict[str, Any]:
        def part(r: CheckResult | None) -> dict[str, Any] | None:
            if r is None:
                return None
            return {"distinct_states": r.distinct_states, "seconds": round(r.seconds, 3),
                    "states_per_second": round(r.states_per_second), "complete": r.complete,
                    "bytes_per_state": None if r.bytes_per_state is None else round(r.bytes_per_state, 1)}

        spark = part(self.spark)
        if spark is not None and self.spark is not None:
            stats = self.spark.engine_stats
            sps = self.spark_states_per_second
            spark.update({"level_states_per_second": None if sps is None else round(sps),
                          "ratio_to_vector": None if self.spark_ratio is None else round(self.spark_ratio, 3),
                          **{k: stats.get(k) for k in ("master", "partitions", "session_start_seconds", "levels",
                                                       "median_level_seconds", "median_level_arrow_seconds",
                                                       "shuffle_bytes")},
                          "agree": self.spark_agree})
        return {"name": self.config.name, "model": self.config.model, "settings": self.config.settings,
                "symmetry": self.config.symmetry, "key": self.key,
                "vector": part(self.vector), "scalar": part(self.scalar),
                "ratio": None if self.ratio is None else round(self.ratio, 1), "agree": self.agree,
                "spark": spark}


def outcome(r: CheckResult) -> tuple[Any, ...]:
    verdicts = tuple((n, v.holds, None if v.trace is None else v.trace.length) for n, v in r.invariants.items())
    return r.distinct_states, r.generated_states, r.depth, r.stopped_by, verdicts


def run_one(cfg: Config, scalar_max_states: int, spark: Any = None,
            progress: Callable[[str], ContextManager[ProgressHook | None]] = lambda _: nullcontext(None)) -> Row:
    """One configuration run by the vector engine, the scalar engine (up to `scalar_max_states`;
    -1: not at all) and, when `spark` (the Spark engine's options) is given and the
    configuration asks for it, the Spark engine. `progress(label)` gives each run's progress hook."""
    options = {"spark": spark}  # each engine's own options, by engine
    model, invariants = registry.build(cfg.model, cfg.base, **cfg.settings)
    packing = Packing.for_schema(model.schema)
    key = f"{packing.bits:.1f} bits: {'+'.join(map(str, packing.word_bits))}"

    def run(engine: str, max_states: int | None) -> CheckResult:
        with progress(f"{cfg.name} {engine}") as hook:
            return kmc_check(model, invariants, engine=engine, progress=hook, limits=Limits(max_states=max_states),
                             search=SearchOptions(keep_going=True, symmetry=cfg.symmetry), options=options.get(engine))

    vector = run("vector", None)
    row = Row(cfg, key, vector, None, "not run")
    if spark is not None and cfg.spark:
        row.spark = run("spark", None)
        row.spark_agree = "yes" if outcome(row.spark) == outcome(vector) else "NO"
    if scalar_max_states < 0:
        return row
    cap = scalar_max_states if 0 < scalar_max_states < vector.distinct_states else None
    row.scalar = run("scalar", cap)
    if cap is None:
        row.agree = "yes" if outcome(row.scalar) == outcome(vector) else "NO"
    else:
        same = outcome(row.scalar) == outcome(run("vector", cap))
        row.agree = f"yes (first {cap:,} states)" if same else f"NO (first {cap:,} states)"
    return row
