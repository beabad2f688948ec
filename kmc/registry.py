"""Where models come from: kmc's own, installed packages, and users' files.

A model is named on the command line (and in baselines, bench configurations and saved
traces) in one of three ways:

- kmc's own models by name: `replication`, `fetch`, `idempotence`, `transactions`, `kraft`;
- a model an installed package registers under the entry-point group `kmc.models`
  (`[project.entry-points."kmc.models"] my-model = "my_pkg.model:MyModel"` in its own
  pyproject.toml), by that name;
- a Python file: `path/to/model.py`, or `path/to/model.py:ClassName` when the file defines
  several models. Loading it runs its code. The file's directory goes at the end of
  `sys.path`, so the file can import its neighbours but no file there hides a module of the
  same name (a `json.py` beside the model is not `json`).

A model's invariants (and the lemmas `kmc prove` may use) are `invariants(model)` and
`lemmas(model)` in the module whose `invariants` names the class by reference,
`@for_model(Cls)`, or in the model's own module; a subclass inherits its parent's
(kmc/invariants/pairing.py, the one resolver, shared with the Spark engine). A file or a
package pairs them by importing its invariants module from the module kmc loads.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from kmc.errors import BadInput
from kmc.invariants import fetch, idempotence, kraft, quorum, replication, transactions  # noqa: F401  each pairs its model
from kmc.invariants import pairing
from kmc.model import declared
from kmc.model.core import Invariant, Model
from kmc.model.temporal import Property

if TYPE_CHECKING:
    from importlib import metadata

ENTRY_POINT_GROUP = "kmc.models"

# kmc's own models: name -> "module:Class"
MODELS: dict[str, str] = {
    "replication": "kmc.model.replication:Replication",
    "fetch": "kmc.model.fetch:Fetch",
    "idempotence": "kmc.model.idempotence:Idempotence",
    "transactions": "kmc.model.transactions:Transactions",
    "kraft": "kmc.model.kraft:Kraft",
    "quorum": "kmc.model.quorum:Quorum",
}


@dataclass(frozen=True)
class Source:
    """A model class and where it came from."""

    spec: str  # how to name it again: "replication", "my-model", or "/abs/path/model.py:Class"
    cls: type[Model]
    origin: str  # "kmc", "package my-pkg 1.0 (my_pkg.model:MyModel)", "file /abs/path/model.py"


def is_path(spec: str) -> bool:
    """Whether a model is named by a file (`x.py`, `x.py:Class`, anything with a slash)."""
    return spec.endswith(".py") or ".py:" in spec or "/" in spec or "\\" in spec


def resolve(spec: str, base: Path | None = None) -> Source:
    """The model `spec` names; a relative file path is taken from `base` (default: the
    current directory). BadInput, one line, when nothing fits."""
    if spec in MODELS:
        return Source(spec, _load_ref(MODELS[spec]), "kmc")
    if is_path(spec):
        return load_file(spec, base)
    for ep in _entry_points():
        if ep.name == spec:
            try:
                cls = ep.load()
            except Exception as e:
                raise BadInput(f"model {spec!r} (entry point {ep.value}): could not be loaded: "
                               f"{type(e).__name__}: {e}") from e
            if not (isinstance(cls, type) and issubclass(cls, Model)):
                raise BadInput(f"model {spec!r}: entry point {ep.value} is not a subclass of kmc.model.core.Model")
            dist = ep.dist
            where = f"package {dist.name} {dist.version}" if dist is not None else "package"
            return Source(spec, cls, f"{where} ({ep.value})")
    raise BadInput(f"unknown model {spec!r}; allowed: {', '.join(names())}, or a path to a model file (FILE.py)")


def is_model(name: str) -> bool:
    """Whether `name` is a model's name: kmc's own, or (looked up only then) an installed package's."""
    return name in MODELS or name in names()


def names() -> list[str]:
    """kmc's own models, then those of installed packages."""
    return [*MODELS, *(ep.name for ep in _entry_points() if ep.name not in MODELS)]


def sources() -> list[Source]:
    return [resolve(n) for n in names()]


def _entry_points() -> list[metadata.EntryPoint]:
    from importlib import metadata  # 18 ms to import: only a model kmc does not have looks

    return sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def _load_ref(ref: str) -> Any:
    module, _, qualname = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


# -- model files ---------------------------------------------------------------------------


def load_file(spec: str, base: Path | None = None) -> Source:
    """The model a file defines (the named class, or its only model)."""
    text, _, class_name = spec.rpartition(":") if ".py:" in spec else (spec, "", "")
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    path = path.resolve()
    if not path.is_file():
        raise BadInput(f"{text}: no such model file")
    if path.suffix != ".py":
        raise BadInput(f"{text}: a model file is a Python file (FILE.py)")
    module = import_file(path)
    found = [c for _, c in inspect.getmembers(module, inspect.isclass)
             if issubclass(c, Model) and c.__module__ == module.__name__ and "name" in vars(c)]
    if class_name:
        chosen = [c for c in found if c.__name__ == class_name]
        if not chosen:
            listed = ", ".join(c.__name__ for c in found) or "none"
            raise BadInput(f"{text}: no model class {class_name!r} (models in it: {listed})")
        cls = chosen[0]
    elif not found:
        raise BadInput(f"{text}: no model in it: define a subclass of kmc.model.core.Model with a name")
    elif len(found) > 1:
        listed = ", ".join(c.__name__ for c in found)
        raise BadInput(f"{text} defines {len(found)} models ({listed}): name one, as {text}:{found[0].__name__}")
    else:
        cls = found[0]
    return Source(f"{path}:{cls.__name__}", cls, f"file {path}")


def import_file(path: Path) -> ModuleType:
    """Import a file (a model file, or the neighbour holding its invariants). Its module is named
    after the file (`model.py` is `model`, so that its neighbours import the same module), unless
    another module answers to that name (`json.py` and the standard library's json, an installed
    package, a module already imported): then it gets a name of its own. A model file loaded
    before under the same name is replaced. The file's directory goes at the end of sys.path.
    Errors in the file are BadInput naming the file and line."""
    name = _module_name(path)
    _search_first_among_model_folders(path.parent)
    old = sys.modules.get(name)
    if old is not None and _is_file(old, path):
        return old
    _forget_other_neighbours(path.parent)
    _FOLDERS.add(path.parent)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise BadInput(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _FROM_FILES.add(name)
    try:
        spec.loader.exec_module(module)
    except BadInput:
        raise
    except SyntaxError as e:
        sys.modules.pop(name, None)
        raise BadInput(f"{e.filename or path}:{e.lineno}: SyntaxError: {e.msg}") from e
    except Exception as e:
        sys.modules.pop(name, None)
        raise BadInput(f"{path}:{_line_in(e, path)}: {type(e).__name__}: {e}") from e
    return module


_FROM_FILES: set[str] = set()  # the modules import_file made


def _module_name(path: Path) -> str:
    """The file's stem when no other module answers to it, else `kmc_file_<digest>_<stem>`."""
    stem = path.stem
    if stem.isidentifier():
        held = sys.modules.get(stem)
        if held is not None:
            if stem in _FROM_FILES or _is_file(held, path) or _from_model_folder(held):
                return stem  # another model file's module (or its neighbour's): this file takes the name
        else:
            try:
                spec = importlib.util.find_spec(stem)  # finds, runs nothing (a top-level name)
            except (ImportError, ValueError):
                spec = None
            if spec is None or (spec.origin is not None and _same_file(spec.origin, path)):
                return stem
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    return f"kmc_file_{digest}_" + re.sub(r"\W", "_", stem)


def _from_model_folder(module: ModuleType) -> bool:
    file = getattr(module, "__file__", None)
    return isinstance(file, str) and Path(file).resolve().parent in _FOLDERS


def _is_file(module: ModuleType, path: Path) -> bool:
    file = getattr(module, "__file__", None)
    return isinstance(file, str) and _same_file(file, path)


def _same_file(file: str, path: Path) -> bool:
    return Path(file).resolve() == path

_FOLDERS: set[Path] = set()  # the folders of the model files imported


def _search_first_among_model_folders(folder: Path) -> None:
    """Put the file's folder on sys.path after the standard library and site-packages (it
    shadows none of them) but before the other model files' folders (its own neighbours are the
    ones it imports)."""
    entry = str(folder)
    if entry in sys.path:
        sys.path.remove(entry)
    others = [i for i, p in enumerate(sys.path) if Path(p) in _FOLDERS and Path(p) != folder]
    sys.path.insert(others[0] if others else len(sys.path), entry)


def _forget_other_neighbours(folder: Path) -> None:
    """Forget the modules that another model file's folder gave the names of this folder's
    files (two models' `invariants.py`), so that a file imports its own neighbours."""
    for sibling in folder.glob("*.py"):
        file = getattr(sys.modules.get(sibling.stem), "__file__", None)
        if file and Path(file).resolve().parent in _FOLDERS - {folder}:
            del sys.modules[sibling.stem]


def _line_in(e: BaseException, path: Path) -> int | str:
    """The line of `path` the exception passed through last (or '?')."""
    line: int | str = "?"
    tb = e.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


# -- invariants and lemmas -------------------------------------------------------------------


def model_class(spec: str, base: Path | None = None) -> type[Model]:
    return resolve(spec, base).cls


def build(spec: str, base: Path | None = None, **settings: Any) -> tuple[Model, list[Invariant]]:
    """The model `spec` names, with the given settings, and all of its invariants."""
    cls = model_class(spec, base)
    model = cls(**settings)
    return model, invariants_of(model)


def invariants_of(model: Model) -> list[Invariant]:
    make = pairing.function(type(model), "invariants")
    if make is None:
        raise BadInput(f"model {model.name}: no invariants: define invariants(model) in {type(model).__module__}, "
                       f"or decorate it with @for_model({type(model).__name__}) (kmc.invariants.pairing) "
                       "in a module imported with the model")
    return declared.check_invariants(declared.call_listing(make, model, "invariants(model)"), make, Invariant,
                                     "invariants(model)")


def lemmas(spec: str, model: Model) -> list[Invariant]:
    """The model's strengthening lemmas (invariants that help k-induction, documented with
    the model's invariants); `kmc check` checks them only when named (`select_invariants`):
    they are proof aids, and some are true only in the modes whose proofs use them."""
    make = pairing.function(type(model), "lemmas")
    if make is None:
        return []
    return declared.check_invariants(declared.call_listing(make, model, "lemmas(model)"), make, Invariant,
                                     "lemmas(model)")


def properties_of(model: Model) -> list[Property]:
    """The model's liveness properties: `properties(model)` beside `invariants(model)`, if any."""
    make = pairing.function(type(model), "properties")
    if make is None:
        return []
    return declared.check_invariants(declared.call_listing(make, model, "properties(model)"), make, Property,
                                     "properties(model)")


N = TypeVar("N", Invariant, Property)


def select_invariants(spec: str, model: Model, invariants: list[Invariant], names: list[str] | None) -> list[Invariant]:
    """The named invariants or lemmas, in the order given; None means all the invariants (no lemma)."""
    if names is None:
        return invariants
    return select([*invariants, *lemmas(spec, model)], names)


def select(invariants: list[N], names: list[str] | None, what: str = "invariant") -> list[N]:
    """The named invariants (or properties), in the order given; None means all of them."""
    if names is None:
        return invariants
    by_name = {i.name: i for i in invariants}
    for n in names:
        if n not in by_name:
            raise BadInput(f"unknown {what} {n!r}; allowed: {', '.join(by_name) or 'none'}")
    return [by_name[n] for n in dict.fromkeys(names)]
