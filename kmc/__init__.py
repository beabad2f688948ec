"""kmc: a model checker for Apache Kafka's replication and transaction protocols.

The public surface (docs/api.md): `check` runs a model with an engine and returns a
`CheckResult` whose every counterexample has been replayed; `simulate` walks it at random;
`prove` proves an invariant for every depth; `build` gives a catalogued model and its
invariants by name; `Limits` bounds a run and `SearchOptions` says how it searches.
"""

from kmc import simd

simd.prefer_avx2_sort()  # before anything imports numpy (kmc/simd.py)

from kmc.api import ENGINES, Limits, SearchOptions, check, prove, simulate
from kmc.engines.result import CheckResult, Verdict
from kmc.errors import BadInput, ContractError, ReplayError
from kmc.registry import build

__version__ = "0.1.0"
__all__ = ["BadInput", "CheckResult", "ContractError", "ENGINES", "Limits", "ReplayError", "SearchOptions", "Verdict",
           "build", "check", "prove", "simulate"]
