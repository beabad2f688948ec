"""Compiled kernels on disk, keyed by a fingerprint of their LLVM IR, and loaded as functions.

A module's IR is a function of the model's code and settings (the traced programs) and of kmc's
code generator, so the fingerprint of the IR (with llvmlite's version and the host CPU the
code is compiled for) is the model's fingerprint: another setting, an edited action or a new
kmc gives another file; the same gives the same object file, loaded without compiling.

Files go to `$XDG_CACHE_HOME/kmc/kernels` (`~/.cache/kmc/kernels` by default), written to a
temporary name and renamed, so that concurrent runs never read half a file.

The functions are called through ctypes, which releases the GIL for the call: kernels run on
several threads at once.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

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


def load(module: ir.Module) -> tuple[Callable[[str, Sequence[Any]], Callable[..., None]], bool]:
    """The module compiled (from the cache when it holds it): a function giving a kernel by
    name and ctypes argument types, and whether it was compiled now."""
    text = str(module)
    with _LOCK:
        machine = _machine()
        folder = cache_dir()
        path = folder / f"{fingerprint(text)}.o"
        compiled = not path.exists()
        if compiled:
            obj = compile_ir(text)
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(obj)
            os.replace(tmp, path)
        else:
            obj = path.read_bytes()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        _ENGINES.append(engine)

    def function(name: str, argtypes: Sequence[Any]) -> Callable[..., None]:
        address = engine.get_function_address(name)
        if not address:
            raise KeyError(f"no kernel {name} in the compiled module")
        return ctypes.CFUNCTYPE(None, *argtypes)(address)

    return function, compiled
