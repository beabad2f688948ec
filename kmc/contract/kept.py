"""Contract checks that passed, remembered on disk: a command run again on an unchanged model
skips the check.

`kmc check`, `kmc compare` and `kmc simulate` check a model's contract before they run it
(kmc/api.py:check_contract): every action is traced, and a model from outside kmc is also
checked differentially on random states. That takes 0.07-0.1 s on kraft and 0.3 s on the
two-phase commit example (z3 is loaded for it), on every run. The commands build the model and
its invariants from code alone (kmc/registry.py:build), so the code and what the command asked
for decide the outcome. A check that passed leaves an empty file named by a fingerprint of:
the model's spec, class and settings, the names of the invariants checked, Python's and NumPy's
versions, and the source of every module of kmc and of every other module loaded from outside
the Python installation (the model's file and what it imports) or from the model's own
package. A later run with the same fingerprint skips the check. An edit to any of that code
gives another fingerprint. A check that fails leaves nothing.

What the fingerprint does not see is a model whose code reads something else as it is built (a
data file, an environment variable): such a model is checked again only when its code, its
settings or kmc change. Deleting the folder checks every model again.

The files go to `$XDG_CACHE_HOME/kmc/contract` (`~/.cache/kmc/contract` by default). If the
cache cannot be written, it is passed over and the check runs every time.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from kmc.model.core import Invariant, Model


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kmc" / "contract"


def fingerprint(spec: str, model: Model, invariants: Sequence[Invariant]) -> str:
    """The key of a contract check of `model` (built from `spec` by kmc/registry.py) and `invariants`."""
    h = hashlib.sha256()
    h.update(f"{spec}\n{type(model).__module__}.{type(model).__qualname__}\n{sorted(model.settings.items())!r}\n"
             f"{[i.name for i in invariants]!r}\n{sys.version}\n{np.__version__}\n".encode())
    for name, path in _code(model):
        h.update(f"{name}\n".encode())
        try:
            h.update(Path(path).read_bytes())
        except OSError:
            h.update(b"(unreadable)")
    return h.hexdigest()[:32]


def passed(key: str) -> bool:
    """Whether a check with fingerprint `key` passed before."""
    return (folder() / key).is_file()


def remember(key: str) -> None:
    """Record that the check with fingerprint `key` passed (nothing, when the cache cannot be written)."""
    target = folder() / key
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{key}.tmp{os.getpid()}")
        tmp.write_bytes(b"")
        os.replace(tmp, target)
    except OSError:
        pass


def _code(model: Model) -> list[tuple[str, str]]:
    """(name, source file) of every module of kmc, loaded or not, and of every other module loaded
    from outside the Python installation or from the model's own package."""
    kmc = Path(__file__).resolve().parents[1]
    out = [(f"kmc/{path.relative_to(kmc).as_posix()}", str(path)) for path in sorted(kmc.rglob("*.py"))]
    installed = tuple({os.path.join(os.path.realpath(p), "") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
                      | {os.path.join(p, "") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    package = type(model).__module__.split(".")[0]
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if name.split(".")[0] == "kmc" or not isinstance(file, str) or not file.endswith(".py"):
            continue
        if name.split(".")[0] == package or not file.startswith(installed):
            out.append((name, file))
    return out
