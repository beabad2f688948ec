"""Compiled kernels on disk, keyed by fingerprints, and loaded as functions.

Two files per model: the object code, keyed by a fingerprint of its LLVM IR (with llvmlite's
version and the host CPU it is compiled for), and what a run needs besides it (the kernels'
names and tables), keyed by a fingerprint of the model: its class, settings and invariants'
names, and the source of every file in the folders its code comes from (the model class and
its bases, the invariants' functions) and of this code generator. A cached run reads both and
traces nothing; an edited model, another setting or another kmc gives other files.

Files go to `$XDG_CACHE_HOME/kmc/kernels` (`~/.cache/kmc/kernels` by default), written to a
temporary name and renamed, so that concurrent runs never read half a file.

The functions are called through ctypes, which releases the GIL for the call: kernels run on
several threads at once.
"""

from __future__ import annotations

import ctypes
import hashlib
import inspect
import os
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

import llvmlite
import llvmlite.binding as llvm
from llvmlite import ir

_LOCK = threading.Lock()
_ENGINES: list[Any] = []  # every loaded engine, kept: its functions' code lives as long as it does
_TARGET: list[Any] = []


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kmc" / "kernels"


def _machine() -> Any:
    if not _TARGET:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        _TARGET.append(target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                                    features=llvm.get_host_cpu_features().flatten(),
                                                    opt=2, codemodel="jitdefault", jit=True))
    return _TARGET[0]


def new_module(name: str) -> ir.Module:
    module = ir.Module(name)
    module.triple = llvm.get_process_triple()
    return module


def fingerprint(text: str) -> str:
    host = f"llvmlite {llvmlite.__version__} {llvm.get_process_triple()} {llvm.get_host_cpu_name()} " \
           f"{llvm.get_host_cpu_features().flatten()}"
    return hashlib.sha256(f"{host}\n{text}".encode()).hexdigest()[:24]


def compile_ir(text: str) -> bytes:
    """Object code of a module's IR, optimised (LLVM's -O2 pipeline)."""
    machine = _machine()
    module = llvm.parse_assembly(text)
    module.verify()
    builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=2))
    builder.getModulePassManager().run(module, builder)
    return bytes(machine.emit_object(module))


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


Function = Callable[[str, Sequence[Any]], Callable[..., None]]


def load(text: str) -> tuple[Function, str, bool]:
    """A module's IR compiled (from the cache when it holds it): a function giving a kernel by
    name and ctypes argument types, the object file's fingerprint, and whether it was compiled now."""
    code = fingerprint(text)
    path = cache_dir() / f"{code}.o"
    with _LOCK:
        compiled = not path.exists()
        if compiled:
            _write(path, compile_ir(text))
    return load_object(code), code, compiled


def load_object(code: str) -> Function:
    """The compiled module with fingerprint `code` (KeyError when the cache does not hold it)."""
    path = cache_dir() / f"{code}.o"
    if not path.exists():
        raise KeyError(code)
    with _LOCK:
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(path.read_bytes()))
        engine.finalize_object()
        _ENGINES.append(engine)

    def function(name: str, argtypes: Sequence[Any]) -> Callable[..., None]:
        address = engine.get_function_address(name)
        if not address:
            raise KeyError(f"no kernel {name} in the compiled module")
        return ctypes.CFUNCTYPE(None, *argtypes)(address)

    return function


# -- a model's fingerprint -------------------------------------------------------------------------


def model_fingerprint(model: Any, names: Sequence[str], functions: Iterable[Any]) -> str:
    """The model's class and settings, `names` (its invariants'), and the source of every file
    in the folders of the model class, its bases, `functions` (and the functions they close
    over), and this package."""
    folders = {Path(__file__).parent}
    for cls in type(model).__mro__[:-1]:
        _add_folder(folders, sys.modules.get(cls.__module__))
    for fn in functions:
        for f in [fn, *(c.cell_contents for c in (getattr(fn, "__closure__", None) or ()) if _has_contents(c))]:
            if inspect.isfunction(f) or inspect.ismethod(f):
                _add_folder(folders, sys.modules.get(f.__module__))
    h = hashlib.sha256()
    h.update(f"{type(model).__module__}.{type(model).__qualname__}\n{sorted(model.settings.items())!r}\n"
             f"{list(names)!r}\n".encode())
    for folder in sorted(folders):
        h.update(f"{folder.name}\n".encode())
        for name, source in _sources(folder):
            h.update(f"{name}\n".encode())
            h.update(source)
    return h.hexdigest()[:24]


def _sources(folder: Path) -> list[tuple[str, bytes]]:
    """The name and content of each .py file directly in `folder`, which may be inside a zip
    archive (Spark's executors import kmc from one): files listed by name, not read, would key
    every version of the code alike there."""
    if folder.is_dir():
        return [(path.name, path.read_bytes()) for path in sorted(folder.glob("*.py"))]
    for archive in folder.parents:
        if archive.is_file() and zipfile.is_zipfile(archive):
            inner = folder.relative_to(archive).as_posix() + "/"
            with zipfile.ZipFile(archive) as z:
                return [(name[len(inner):], z.read(name)) for name in sorted(z.namelist())
                        if name.startswith(inner) and name.endswith(".py") and "/" not in name[len(inner):]]
    return []


def generated_fingerprint(*parts: Any) -> str:
    """A key for code generated from `parts` alone (their reprs) by this package."""
    h = hashlib.sha256(repr(parts).encode())
    for _, source in _sources(Path(__file__).parent):
        h.update(source)
    return h.hexdigest()[:24]


def cached(key: str, ir_text: Callable[[], str]) -> Function:
    """The module of IR `ir_text()` gives, compiled, from the cache under `key` when it is there
    (the IR is then not built)."""
    saved = recall(key)
    if saved is not None:
        try:
            return load_object(saved[0])
        except KeyError:
            pass
    function, code, _ = load(ir_text())
    remember(key, code, [], [])
    return function


def _has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _add_folder(folders: set[Path], module: Any) -> None:
    file = getattr(module, "__file__", None)
    if file:
        folders.add(Path(file).resolve().parent)


def remember(key: str, code: str, names: Sequence[str], tables: Sequence[np.ndarray]) -> None:
    """Store what a run needs besides the object code `code`, under the model's fingerprint."""
    arrays: dict[str, Any] = {f"table{k}": t for k, t in enumerate(tables)}
    folder = cache_dir()
    tmp = folder / f"{key}.npz.tmp{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as f:
        np.savez(f, code=np.array(code), names=np.array(list(names), dtype=str), **arrays)
    os.replace(tmp, folder / f"{key}.npz")


def recall(key: str) -> tuple[str, list[str], list[np.ndarray]] | None:
    """(object code fingerprint, kernel names, tables) stored under the model's fingerprint."""
    path = cache_dir() / f"{key}.npz"
    if not path.exists():
        return None
    with np.load(path) as f:
        names = [str(n) for n in f["names"]]
        return str(f["code"]), names, [f[f"table{k}"] for k in range(len(names))]
