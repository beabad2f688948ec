"""kmc: a model checker for Apache Kafka's replication and transaction protocols.

The public surface (docs/api.md): `check` runs a model with an engine and returns a
`CheckResult` whose every counterexample has been replayed; `build` gives a catalogued model
and its invariants by name; `Limits` bounds a run.
"""

from kmc import simd

simd.prefer_avx2_sort()  # before anything imports numpy (kmc/simd.py)

from kmc.engines.result import CheckResult, Verdict
from kmc.engines.run import ENGINES, check
from kmc.engines.search import Limits
from kmc.errors import BadInput, ContractError, ReplayError
from kmc.registry import build

__version__ = "0.1.0"
__all__ = ["BadInput", "CheckResult", "ContractError", "ENGINES", "Limits", "ReplayError", "Verdict", "build", "check"]
