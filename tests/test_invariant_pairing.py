"""Models hold their invariants by reference (kmc/invariants/pairing.py): `@for_model(Cls)`
on `invariants(model)` names the model class, no dotted string names a module, and the one
resolver finds them by every route a model comes by (kmc's name, a name in the catalogue, a
file, an installed package's entry point, the Spark engine's factory, rebuilt in-process
without Spark). An error in a user's invariants is raised, never taken for "not found"."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

import kmc.invariants.replication
from kmc import registry
from kmc.engines.spark.factory import ModelFactory
from kmc.errors import BadInput
from kmc.invariants import pairing
from kmc.model.replication import Replication

PACKAGE = "kmc_test_pairpkg"

MODEL = '''\
from kmc.model.core import Action, Field, Model, Option, Schema


class Counter(Model):
    """x counts up to 2."""

    name = "pair-counter"
    summary = "test only"
    modes = {"plain": "counts"}
    options = (Option("mode", "plain", "mode", choices=("plain",)),)

    def _build(self):
        self.schema = Schema([Field("x", lo=0, hi=2)])

    def initial_states(self):
        return [(0,)]

    def actions(self):
        return [Action("bump", lambda s, X: s.x < 2, lambda s, X: {"x": s.x + 1})]


IMPORT_CHECKS  # noqa: E402,F401  last: the invariants import this module
'''

CHECKS = '''\
from kmc.invariants.pairing import for_model
from kmc.model.core import Invariant
from {model} import Counter

{broken}

@for_model(Counter)
def invariants(m):
    {inside}
    return [Invariant("small", lambda s, X: s.x <= 1, "x at most 1"),
            Invariant("bounded", lambda s, X: s.x <= 2, "x at most 2")]


def lemmas(m):
    return [Invariant("non-negative", lambda s, X: s.x >= 0, "x not below 0")]
'''


def write_package(root: Path, broken: str = "", inside: str = "pass") -> None:
    package = root / PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(MODEL.replace("IMPORT_CHECKS", f"from {PACKAGE} import checks"))
    (package / "checks.py").write_text(CHECKS.format(model=f"{PACKAGE}.model", broken=broken, inside=inside))


def write_files(folder: Path, broken: str = "", inside: str = "pass") -> Path:
    """A model file and its invariants file beside it, as a user writes them."""
    folder.mkdir(parents=True)
    (folder / "pair_counter.py").write_text(MODEL.replace("IMPORT_CHECKS", "import pair_counter_checks"))
    (folder / "pair_counter_checks.py").write_text(CHECKS.format(model="pair_counter", broken=broken, inside=inside))
    return folder / "pair_counter.py"


@pytest.fixture(autouse=True)
def clean_modules() -> Iterator[None]:
    yield
    for name in [m for m in sys.modules if m.partition(".")[0] in (PACKAGE, "pair_counter", "pair_counter_checks")]:
        del sys.modules[name]


def names(spec: str) -> tuple[list[str], list[str]]:
    model, invariants = registry.build(spec)
    return [i.name for i in invariants], [i.name for i in registry.lemmas(spec, model)]


EXPECTED = (["small", "bounded"], ["non-negative"])  # as CHECKS above writes them


def test_kmc_models_are_paired_by_their_invariants_modules() -> None:
    assert pairing.home(Replication) is kmc.invariants.replication
    assert registry.invariants_of(Replication())[0].name == kmc.invariants.replication.invariants(Replication())[0].name


def test_a_subclass_in_a_file_inherits_its_parents_invariants() -> None:
    model, invariants = registry.build(str(Path(__file__).parent / "models" / "stuck_isr.py"))
    assert isinstance(model, Replication)
    assert [i.name for i in invariants] == [i.name for i in kmc.invariants.replication.invariants(model)]


def test_by_name_in_the_catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.MODELS, "pair-counter", f"{PACKAGE}.model:Counter")
    assert names("pair-counter") == EXPECTED


def test_by_file(tmp_path: Path) -> None:
    path = write_files(tmp_path / "user")
    try:
        assert names(str(path)) == EXPECTED
    finally:
        sys.path.remove(str(path.parent))


def test_by_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_package(tmp_path)
    dist = tmp_path / "kmc_test_pairpkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kmc-test-pairpkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[kmc.models]\npair-counter = {PACKAGE}.model:Counter\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "pair-counter" in registry.names()
    assert registry.resolve("pair-counter").origin == f"package kmc-test-pairpkg 1.0 ({PACKAGE}.model:Counter)"
    assert names("pair-counter") == EXPECTED


def test_by_the_spark_factory_rebuilt_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.MODELS, "pair-counter", f"{PACKAGE}.model:Counter")
    model, invariants = registry.build("pair-counter")
    factory = ModelFactory.of(model, invariants[1:])  # no builder given: the pairing names it
    assert factory.invariants == f"{PACKAGE}.checks:invariants"
    rebuilt, made = factory.build()
    factory.check_rebuilt(rebuilt, made)
    assert type(rebuilt) is type(model) and [i.name for i in made] == ["bounded"]


def test_an_error_importing_a_files_invariants_is_raised(tmp_path: Path) -> None:
    path = write_files(tmp_path / "user", broken="raise RuntimeError('the invariants are broken')")
    try:
        with pytest.raises(BadInput, match=r"pair_counter\.py:\d+: RuntimeError: the invariants are broken"):
            registry.build(str(path))
    finally:
        sys.path.remove(str(path.parent))


def test_an_error_inside_invariants_is_raised_by_every_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_package(tmp_path, inside="raise ZeroDivisionError('inside invariants(model)')")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.MODELS, "pair-counter", f"{PACKAGE}.model:Counter")
    with pytest.raises(BadInput, match=r"checks.py:\d+: in invariants\(model\), .*ZeroDivisionError: inside "
                                       r"invariants\(model\)") as raised:
        registry.build("pair-counter")
    assert isinstance(raised.value.__cause__, ZeroDivisionError)  # the user's error, with its traceback
    model = registry.model_class("pair-counter")()
    with pytest.raises(BadInput, match=r"fails here: ZeroDivisionError: inside invariants\(model\)"):
        ModelFactory.of(model, [])


def test_an_error_importing_a_packages_invariants_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_package(tmp_path, broken="raise RuntimeError('the invariants are broken')")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.MODELS, "pair-counter", f"{PACKAGE}.model:Counter")
    with pytest.raises(RuntimeError, match="the invariants are broken"):
        registry.build("pair-counter")


def test_a_model_without_invariants_says_how_to_pair_them(tmp_path: Path) -> None:
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "pair_counter.py").write_text(MODEL.replace("IMPORT_CHECKS  # noqa: E402,F401  last: the invariants import this module", ""))
    try:
        with pytest.raises(BadInput, match=r"model pair-counter: no invariants: .*@for_model\(Counter\)"):
            registry.build(str(folder / "pair_counter.py"))
    finally:
        sys.path.remove(str(folder))


def test_two_model_files_with_same_named_invariants_files_each_get_their_own(tmp_path: Path) -> None:
    """A model file imports its neighbour `import pair_counter_checks`; another folder's file of
    that name, loaded before, does not stand in for it."""
    first, second = write_files(tmp_path / "first"), write_files(tmp_path / "second")
    try:
        one, _ = registry.build(str(first))
        two, invariants = registry.build(str(second))
        assert type(one) is not type(two)
        assert pairing.home(type(two)).__file__ == str(second.parent / "pair_counter_checks.py")  # type: ignore[union-attr]
        assert [i.name for i in invariants] == EXPECTED[0]
    finally:
        for folder in (first.parent, second.parent):
            sys.path.remove(str(folder))
