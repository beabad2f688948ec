"""The Spark engine takes the model, not a name: a model defined in this test module (not in
kmc's catalogue, not importable by the executors) runs on Spark, local[2] and a loopback
standalone cluster, with the results of the vector engine: distinct and generated states,
depth, verdicts, traces state by state.

Executors rebuild it from a ModelFactory (kmc/engines/spark/factory.py): `Tiny` and the
function making its invariants by module and name, its settings, the invariant names. This
module is not on the executors' sys.path (local masters share the driver's files, not its
sys.path), so the engine ships its file; on the cluster it runs as a script (`__main__`),
shipped as a copy under another name; a package that is not installed is shipped as a zip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest

from kmc.engines.result import CheckResult
from kmc.api import check as kmc_check
from kmc.api import Limits, SearchOptions
from kmc.engines.spark.engine import SparkOptions
from kmc.engines.spark.factory import ModelFactory
from kmc.errors import BadInput
from kmc.model.core import Action, Field, Invariant, Model, Option, Param, Schema, State

HERE = Path(__file__).resolve()


class Tiny(Model):
    """A leader's log end offset, two followers' fetched offsets and a high watermark. In
    `unsafe` mode the leader moves the high watermark to its own log end, ahead of what the
    followers have; in `safe` mode to what both have."""

    name = "tiny"
    summary = "a leader, two followers and a high watermark"
    modes = {"safe": "hw = the followers' smallest offset", "unsafe": "hw = the leader's log end"}
    options = (
        Option("mode", "unsafe", "where the leader moves the high watermark", choices=("safe", "unsafe")),
        Option("offsets", 3, "records the leader may append", min=1, max=5),
    )

    def _build(self) -> None:
        n = self.settings["offsets"]
        self.F = range(2)
        self.schema = Schema([
            Field("leo", lo=0, hi=n, doc="the leader's log end offset"),
            Field("fetched", lo=0, hi=n, shape=(2,), doc="each follower's log end offset"),
            Field("hw", lo=0, hi=n, doc="the high watermark"),
        ])

    def initial_states(self) -> list[State]:
        return [self.schema.state(leo=0, fetched=[0, 0], hw=0)]

    def actions(self) -> Sequence[Action]:
        n = self.settings["offsets"]
        follower = Param("follower", tuple(self.F), lambda f: f"f{f + 1}")
        return [
            Action("append", lambda s, X: s.leo < n, lambda s, X: {"leo": s.leo + 1}),
            Action("fetch", lambda s, X, f: s.fetched[f] < s.leo,
                   lambda s, X, f: {"fetched": {f: s.fetched[f] + 1}}, (follower,)),
            Action("advance_hw", self.advance_guard, self.advance_effect),
        ]

    def target(self, s: Any, X: Any) -> Any:
        return s.leo if self.mode == "unsafe" else X.min_(s.fetched[0], s.fetched[1])

    def advance_guard(self, s: Any, X: Any) -> Any:
        return s.hw < self.target(s, X)

    def advance_effect(self, s: Any, X: Any) -> dict[str, Any]:
        return {"hw": self.target(s, X)}


def tiny_invariants(m: Tiny) -> list[Invariant]:
    """hw-replicated is broken in unsafe mode (append, then advance_hw); fetched-within-log
    always holds. Named so that no convention finds it: the tests pass it as the builder."""
    return [
        Invariant("hw-replicated", lambda s, X: X.and_(*[s.hw <= s.fetched[f] for f in m.F]),
                  "every follower has the records below the high watermark"),
        Invariant("fetched-within-log", lambda s, X: X.and_(*[s.fetched[f] <= s.leo for f in m.F]),
                  "no follower is ahead of the leader"),
    ]


def outcome(r: CheckResult) -> dict[str, Any]:
    """Everything a run decides, traces state by state, as JSON (the cluster run prints it)."""
    verdicts = {
        name: [v.holds, v.states,
               None if v.trace is None else [[s.instance.label if s.instance else None, list(s.state)]
                                             for s in v.trace.steps]]
        for name, v in r.invariants.items()
    }
    return json.loads(json.dumps({"distinct": r.distinct_states, "generated": r.generated_states, "depth": r.depth,
                                  "complete": r.complete, "stopped_by": r.stopped_by, "verdicts": verdicts}))


def spark_options(master: str, model: Tiny, invariants: list[Invariant]) -> SparkOptions:
    return SparkOptions(master=master, partitions=2, threshold=0,
                        factory=ModelFactory.of(model, invariants, builder=tiny_invariants))


def executors_import(sc: Any, module: str) -> list[tuple[str, bool]]:
    """Where the executors import `module` from, and whether this file's directory is on
    their sys.path."""
    def where(_: Any) -> tuple[str, bool]:
        import importlib
        import sys as sys_

        return importlib.import_module(module).__file__ or "", str(HERE.parent) in sys_.path

    return sorted(set(sc.parallelize(range(4), 2).map(where).collect()))


CASES = [  # mode, limits, the verdicts (None: not decided, the run stopped first)
    ("unsafe", dict(limits=Limits()), {"hw-replicated": False, "fetched-within-log": None}),
    ("unsafe", dict(limits=Limits(), search=SearchOptions(keep_going=True)), {"hw-replicated": False, "fetched-within-log": True}),
    ("safe", dict(limits=Limits()), {"hw-replicated": True, "fetched-within-log": True}),
    ("safe", dict(limits=Limits(max_states=20)), {"hw-replicated": None, "fetched-within-log": None}),
]


@pytest.mark.parametrize("mode,limits,verdicts", CASES, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(CASES)])
def test_a_model_defined_in_a_test_runs_on_spark_as_on_vector(spark_session: Any, mode: str, limits: dict[str, Any],
                                                              verdicts: dict[str, bool | None]) -> None:
    model = Tiny(mode=mode)
    invariants = tiny_invariants(model)
    vector = kmc_check(model, invariants, engine="vector", **limits)
    spark = kmc_check(model, invariants, engine="spark", **limits,
                      options=spark_options("local[2]", model, invariants))
    assert outcome(spark) == outcome(vector)
    assert {n: v.holds for n, v in spark.invariants.items()} == verdicts
    assert spark.engine_stats["levels"] > 1


def test_local_executors_import_this_module_from_the_shipped_file(spark_session: Any) -> None:
    """Local executors read the driver's files but have their own sys.path: this directory is
    not on it, and they import this module from the copy Spark made of the shipped file."""
    model = Tiny(mode="unsafe")
    invariants = tiny_invariants(model)
    kmc_check(model, invariants, engine="spark", options=spark_options("local[2]", model, invariants))
    places = executors_import(spark_session.sparkContext, __name__)
    assert places and all(not on_path and Path(f).name == HERE.name and Path(f) != HERE for f, on_path in places)


def test_the_factory_names_the_model_and_its_invariant_builder() -> None:
    model = Tiny(mode="safe", offsets=2)
    invariants = tiny_invariants(model)[1:]
    f = ModelFactory.of(model, invariants, builder=tiny_invariants)
    assert (f.model, f.invariants, f.settings, f.names) == (
        f"{__name__}:Tiny", f"{__name__}:tiny_invariants", (("mode", "safe"), ("offsets", 2)), ("fetched-within-log",))
    assert [s.name for s in f.sources] == [__name__] and f.aliases == ()
    rebuilt, selected = f.build(executor=False)
    assert type(rebuilt) is Tiny and rebuilt.settings == model.settings and [i.name for i in selected] == list(f.names)
    assert f.identity()["model"] == f"{__name__}:Tiny"


def test_without_a_builder_the_engine_says_how_to_pass_one() -> None:
    """This module has no function named `invariants`, so the factory cannot be found by
    convention: bad input (exit 2), before Spark starts."""
    model = Tiny()
    with pytest.raises(BadInput, match=r"builder=<function>"):
        kmc_check(model, tiny_invariants(model), engine="spark", options=SparkOptions(master="local[2]", threshold=0))


def test_a_model_class_defined_in_a_function_is_refused() -> None:
    class Local(Tiny):
        pass

    model = Local()
    with pytest.raises(BadInput, match="top level of a module"):
        ModelFactory.of(model, tiny_invariants(model), builder=tiny_invariants)


def test_an_invariant_the_builder_does_not_make_is_refused() -> None:
    model = Tiny()
    other = Invariant("hw-replicated", lambda s, X: s.hw <= s.leo, "not the builder's")
    with pytest.raises(BadInput, match="is not the one"):
        ModelFactory.of(model, [other], builder=tiny_invariants)


def test_resume_refuses_a_run_of_another_model_or_settings(tmp_path: Path) -> None:
    """The checkpoint manifest names the run by its factory: another class, builder, settings
    or invariant selection is another run (exit 2)."""
    from kmc.engines.spark import store
    from kmc.model.idempotence import Idempotence

    def identity(model: Model, invariants: list[Invariant], builder: Any = None) -> dict[str, Any]:
        return ModelFactory.of(model, invariants, builder).identity()

    unsafe = Tiny(mode="unsafe")
    kept = identity(unsafe, tiny_invariants(unsafe), tiny_invariants)  # what a manifest of this run holds
    store.same_run(tmp_path, kept, identity(unsafe, tiny_invariants(unsafe), tiny_invariants))
    safe = Tiny(mode="safe")
    idem = Idempotence()
    from kmc.invariants.idempotence import invariants as idempotence_invariants

    for other in (identity(safe, tiny_invariants(safe), tiny_invariants),
                  identity(unsafe, tiny_invariants(unsafe)[:1], tiny_invariants),
                  identity(idem, idempotence_invariants(idem))):
        with pytest.raises(BadInput, match="resume with the same settings"):
            store.same_run(tmp_path, kept, other)


_PACKAGE = {
    "__init__.py": "",
    "bounds.py": "OFFSETS = 2\n",
    "models.py": (
        "from test_spark_model_factory import Tiny, tiny_invariants\n"
        "from .bounds import OFFSETS\n\n\n"
        "class Packaged(Tiny):\n"
        "    def _build(self):\n"
        "        assert self.settings['offsets'] <= OFFSETS\n"
        "        super()._build()\n\n\n"
        "def invariants(m):\n"
        "    return tiny_invariants(m)\n"
    ),
}


def test_a_model_in_a_package_that_is_not_installed(spark_session: Any, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A package on the driver's sys.path only, whose module imports a sibling relatively: the
    package goes to the executors as a zip; its invariant builder is found by convention (a
    function named `invariants` in the model's module)."""
    package = tmp_path / "kmc_test_tinypkg"
    package.mkdir()
    for name, text in _PACKAGE.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        from kmc_test_tinypkg.models import Packaged, invariants as packaged_invariants

        model = Packaged(mode="unsafe", offsets=2)
        invariants = packaged_invariants(model)
        factory = ModelFactory.of(model, invariants)
        assert factory.invariants == "kmc_test_tinypkg.models:invariants"
        assert sorted((s.kind, s.name) for s in factory.sources) == [("file", __name__),
                                                                      ("package", "kmc_test_tinypkg")]
        spark = kmc_check(model, invariants, engine="spark",
                          options=SparkOptions(master="local[2]", partitions=2, threshold=0))
        assert outcome(spark) == outcome(kmc_check(model, invariants, engine="vector"))
        places = executors_import(spark_session.sparkContext, "kmc_test_tinypkg.models")
        assert places and all(".zip" in f and not on_path for f, on_path in places), places
    finally:
        for name in [m for m in sys.modules if m.partition(".")[0] == "kmc_test_tinypkg"]:
            del sys.modules[name]


def test_a_model_in_a_script_runs_on_the_cluster_as_on_vector(cluster: Any) -> None:
    """This file run as a script (its model in `__main__`) against the loopback cluster: the
    executors import it from a shipped copy under another name; the results equal the vector
    engine's, run here."""
    p = subprocess.run([sys.executable, str(HERE), cluster.url], env=cluster.env, cwd=HERE.parents[1],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{p.stderr[-3000:]}\n{cluster.log_tail()}"
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["master"] == cluster.url and got["partitions"] == 2
    assert got["places"] and all(Path(f).name.startswith("kmc_main_") and not on_path for f, on_path in got["places"])
    for mode, keep_going in (("unsafe", False), ("unsafe", True)):
        model = Tiny(mode=mode)
        vector = kmc_check(model, tiny_invariants(model), engine="vector", limits=Limits(), search=SearchOptions(keep_going=keep_going))
        assert got["outcomes"][f"{mode}-{keep_going}"] == outcome(vector)


def _main(master: str) -> None:
    """Run as a script: the Spark engine on `master`, the outcomes as one JSON line."""
    outcomes, stats = {}, {}
    for mode, keep_going in (("unsafe", False), ("unsafe", True)):
        model = Tiny(mode=mode)
        invariants = tiny_invariants(model)
        r = kmc_check(model, invariants, engine="spark", limits=Limits(), search=SearchOptions(keep_going=keep_going),
                      options=spark_options(master, model, invariants))
        outcomes[f"{mode}-{keep_going}"], stats = outcome(r), r.engine_stats
    from pyspark.sql import SparkSession

    aliases = dict(ModelFactory.of(Tiny(), tiny_invariants(Tiny()), builder=tiny_invariants).aliases)
    places = executors_import(SparkSession.getActiveSession().sparkContext, aliases["__main__"])
    print(json.dumps({"outcomes": outcomes, "master": stats["master"], "partitions": stats["partitions"],
                      "places": places}))


if __name__ == "__main__":
    _main(sys.argv[1])
