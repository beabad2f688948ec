"""How Spark executors get the model of a run: a `ModelFactory`, plain picklable data that
rebuilds the very model and invariants the driver checks, never a pickled model or closure.

A factory names the model's class and the function that makes its invariants by module and
qualified name ("package.module:Class", "package.module:function"), and carries the model's
settings and the names of the invariants checked, in order. An executor imports the two,
builds `Class(**settings)` and selects the named invariants from `function(model)`.

`ModelFactory.of(model, invariants, builder)` makes one on the driver. Without `builder` it
takes the model's `invariants(model)` as every route finds it (kmc/invariants/pairing.py:
declared by `@for_model`, or in the model's own module). The factory is then checked on the
driver: rebuilding it must give the same class, settings, schema, action instances (in the
same order), initial states and invariants (the same predicate code). Executors check the
same `fingerprint` after building: a node with another version of a model file, or a model
whose instance order depends on the hash seed, fails loudly instead of exploring another
state space.

Modules the executors cannot import by name are shipped with `SparkContext.addPyFile` (Spark's
local masters too: their Python workers share the driver's files but not its sys.path): a
top-level module's file (a test module, a user's file outside any package), the whole
top-level package as a zip for a module in a package that is not installed (so its relative
imports work), and a script run as `__main__` as a copy named `kmc_main_<digest>.py`, imported
under that name (its `if __name__ == "__main__"` block does not run). What counts as
importable: kmc itself (kmc ships its own sources to non-local masters, spark/session.py),
the standard library and site-packages. The not-importable modules those modules refer to
(by their globals: `from conftest import build`) are shipped too.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import shutil
import site
import sys
import sysconfig
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Sequence

from kmc.engines.checkpoints import fingerprint
from kmc.engines.spark.session import ship_dir
from kmc.errors import BadInput
from kmc.invariants import pairing
from kmc.model.core import Invariant, Model

Builder = Callable[[Any], Sequence[Invariant]]


@dataclass(frozen=True)
class Shipped:
    """Something to ship to executors: a top-level module's file ("file", imported as `name`)
    or a top-level package's directories ("package", zipped)."""

    kind: str  # "file" or "package"
    name: str  # the name executors import: the module's, or kmc_main_<digest> for __main__
    paths: tuple[str, ...]  # the file, or the package's directories


@dataclass(frozen=True)
class ModelFactory:
    model: str  # "module:qualname" of the Model subclass
    settings: tuple[tuple[str, Any], ...]
    invariants: str  # "module:qualname" of a function model -> list of Invariant
    names: tuple[str, ...]  # the invariants checked, in this order
    fingerprint: str = ""  # of what the driver checks (schema, instances, initial states, invariants)
    aliases: tuple[tuple[str, str], ...] = ()  # (module on the driver, name executors import it under)
    sources: tuple[Shipped, ...] = ()  # shipped by `ship`

    @classmethod
    def of(cls, model: Model, invariants: Sequence[Invariant], builder: Builder | None = None) -> ModelFactory:
        """The factory of this model and these invariants, checked by rebuilding it here;
        BadInput when it cannot be made or does not rebuild them."""
        invariants = list(invariants)
        if builder is None:
            builder = _builder(model)
        made = cls(_ref(type(model), "model class"), tuple(sorted(model.settings.items())),
                   _ref(builder, "invariant builder"), tuple(i.name for i in invariants),
                   fingerprint(model, invariants))
        sources, aliases = _sources([made.model.partition(":")[0], made.invariants.partition(":")[0]])
        made = replace(made, aliases=tuple(sorted(aliases.items())), sources=tuple(sources))
        made.check(model, invariants)
        return made

    def identity(self) -> dict[str, Any]:
        """What names the run in a checkpoint manifest."""
        return {"model": self.model, "settings": dict(self.settings), "invariants_from": self.invariants,
                "invariants": list(self.names), "model_fingerprint": self.fingerprint}

    def build(self, executor: bool = True) -> tuple[Model, list[Invariant]]:
        """The model and the invariants checked; on an executor, modules shipped under another
        name are imported under it."""
        aliases = dict(self.aliases) if executor else {}
        cls = _resolve(self.model, aliases)
        fn = _resolve(self.invariants, aliases)
        model = cls(**dict(self.settings))
        known = list(fn(model))
        by_name = {i.name: i for i in known}
        missing = [n for n in self.names if n not in by_name]
        if missing:
            raise BadInput(f"{self.invariants} does not make the invariants {', '.join(missing)} "
                           f"(it makes: {', '.join(by_name) or 'none'})")
        return model, [by_name[n] for n in self.names]

    def check(self, model: Model, invariants: Sequence[Invariant]) -> None:
        """BadInput unless rebuilding gives this very model and these invariants."""
        what = f"{self.model} with {self.invariants}"
        try:
            again, made = self.build(executor=False)
        except BadInput:
            raise
        except Exception as e:  # an import, a model that refuses its own settings
            raise BadInput(f"the Spark engine rebuilds the model in executors; {what} fails here: "
                           f"{type(e).__name__}: {e}") from e
        if type(again) is not type(model) or again.settings != model.settings:
            raise BadInput(f"{what} does not rebuild a {type(model).__qualname__} with settings {model.settings}")
        for given, rebuilt in zip(invariants, made):
            if (_code(given.predicate), given.report) != (_code(rebuilt.predicate), rebuilt.report):
                raise BadInput(f"the invariant {given.name!r} is not the one {self.invariants} makes")
        if fingerprint(again, made) != fingerprint(model, invariants):
            raise BadInput(f"{what} rebuilds a different model (schema, action instances or their order, "
                           "initial states): the model must depend on its settings only")

    def check_rebuilt(self, model: Model, invariants: Sequence[Invariant]) -> None:
        """On an executor: what it built is what the driver checks."""
        if self.fingerprint and fingerprint(model, invariants) != self.fingerprint:
            raise RuntimeError(f"kmc spark engine: this executor built {self.model} differently from the driver "
                               "(schema, action instances or their order, initial states): is the same version "
                               "of the model's sources on every node, and does the model depend on its settings only "
                               "(not on hash order)?")

    def ship(self, sc: Any) -> None:
        """Hand the executors the sources they cannot import (SparkContext.addPyFile)."""
        for source in self.sources:
            sc.addPyFile(str(_shippable(source)))


# -- naming and finding --------------------------------------------------------------------

def _ref(obj: Any, what: str) -> str:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        raise BadInput(f"the Spark engine rebuilds the model in executors by name: the {what} {obj!r} must be "
                       "defined at the top level of a module (not in a function, not a lambda)")
    return f"{module}:{qualname}"


def _resolve(ref: str, aliases: dict[str, str]) -> Any:
    module, _, qualname = ref.partition(":")
    name = aliases.get(module, module)
    mod = sys.modules.get(name) if name == "__main__" else importlib.import_module(name)
    return functools.reduce(getattr, qualname.split("."), mod)


def _code(fn: Any) -> Any:
    return getattr(fn, "__code__", None) or (getattr(fn, "__module__", None), getattr(fn, "__qualname__", None))


def _builder(model: Model) -> Builder:
    """The function `invariants` the model is paired with (kmc/invariants/pairing.py)."""
    fn = pairing.function(type(model), "invariants")
    if fn is None:
        raise BadInput(f"the Spark engine rebuilds the invariants in executors from the function that makes them, "
                       f"and {type(model).__qualname__} has none (no @for_model({type(model).__name__}) "
                       f"on an invariants(model), none in {type(model).__module__}): pass it, "
                       "SparkOptions(factory=ModelFactory.of(model, invariants, builder=<function>))")
    return fn


# -- shipping ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    roots.add(site.getusersitepackages())
    return tuple(sorted({os.path.realpath(r) + os.sep for r in roots}))


def _importable(mod: ModuleType) -> bool:
    """Whether executors import `mod` by name without help: kmc, built-in, installed, or
    loaded from something other than a plain file (a zip Spark already ships)."""
    if mod.__name__ != "__main__" and mod.__name__.partition(".")[0] == "kmc":
        return True
    file = getattr(mod, "__file__", None)
    if not file or not os.path.isfile(file):
        return mod.__name__ != "__main__"
    return os.path.realpath(file).startswith(_installed_roots())


def _sources(modules: list[str]) -> tuple[list[Shipped], dict[str, str]]:
    """What to ship for these modules and the not-importable modules they refer to."""
    sources: dict[tuple[str, str], Shipped] = {}
    aliases: dict[str, str] = {}
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        mod = sys.modules.get(name)
        if mod is None or _importable(mod):
            continue
        file = getattr(mod, "__file__", None)
        if name == "__main__":
            if not file or not os.path.isfile(file):
                raise BadInput("the model is defined in __main__ without a source file (an interactive session): "
                               "the Spark engine imports it in executors, so define it in a file")
            alias = "kmc_main_" + hashlib.sha256(Path(file).read_bytes()).hexdigest()[:16]
            aliases[name] = alias
            sources[("file", alias)] = Shipped("file", alias, (os.path.realpath(file),))
        elif "." in name or hasattr(mod, "__path__"):
            top = name.partition(".")[0]
            package = sys.modules.get(top)
            dirs = tuple(os.path.realpath(p) for p in getattr(package, "__path__", ()))
            if not dirs:
                raise BadInput(f"the Spark engine ships the model's module {name} to executors, but cannot find "
                               f"the directory of its package {top}")
            sources[("package", top)] = Shipped("package", top, dirs)
        else:
            if not file or not file.endswith(".py"):
                raise BadInput(f"the Spark engine ships the model's module {name} to executors, and needs its "
                               f"source file (it has {file!r})")
            sources[("file", name)] = Shipped("file", name, (os.path.realpath(file),))
        for value in list(vars(mod).values()):  # the modules it imports from
            try:
                ref = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
            except Exception:
                continue
            if isinstance(ref, str) and ref not in seen and ref != "__main__":
                todo.append(ref)
    return list(sources.values()), aliases


def _shippable(source: Shipped) -> Path:
    """The file addPyFile takes for a source: the module's own file when its name is the
    module's, else a copy named after the content (Spark refuses a second file of the same
    name with other content)."""
    if source.kind == "file":
        [path] = source.paths
        if Path(path).stem == source.name:
            return Path(path)
        out = ship_dir() / f"{source.name}.py"
        if not out.exists():
            tmp = out.with_suffix(f".{os.getpid()}.tmp")
            shutil.copyfile(path, tmp)
            os.replace(tmp, out)
        return out
    files = sorted({(str(Path(source.name) / f.relative_to(d)), str(f))
                    for d in map(Path, source.paths) for f in d.rglob("*.py")})
    digest = hashlib.sha256()
    for arc, f in files:
        digest.update(arc.encode() + b"\0" + Path(f).read_bytes() + b"\0")
    out = ship_dir() / f"{source.name}-{digest.hexdigest()[:16]}.zip"
    if not out.exists():
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(tmp, "w") as z:
            for arc, f in files:
                z.write(f, arc)
        os.replace(tmp, out)
    return out
