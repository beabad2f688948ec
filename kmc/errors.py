"""The errors kmc reports to users. Everything else escaping is an internal error (exit 1)."""


class BadInput(Exception):
    """Bad usage or bad input: an unknown model, mode or invariant, impossible bounds.

    The message is one line naming what was wrong and what is allowed; the CLI prints it
    and exits 2.
    """


class ReplayError(Exception):
    """A trace does not replay through the model: an engine bug, never a user error."""


class ContractError(BadInput):
    """A model or an invariant breaks the contract of kmc/model/core.py: the message names
    the action or invariant, where it is defined, and what it did."""


class RunFailed(Exception):
    """A run that cannot go on for a reason outside kmc (Spark's JVM died, a simulation
    process was killed, out of memory): the CLI prints the one-line message and exits 1."""
