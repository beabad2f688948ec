"""Every exit code of every `kmc` command, in one place (README.md's table lists them; a
test holds the two together).

A run that decides less than it was asked is not a pass: `check` and `compare` exit
INCOMPLETE when a limit (--time-limit, --max-states, --max-depth, --memory-limit, z3's
--depth) left a checked invariant or property undecided, and `gate` when a check of its
baseline did. `simulate` never decides that an invariant holds, so its exits are OK (no walk
violated one) and VIOLATION, never INCOMPLETE.
"""

from __future__ import annotations

OK = 0  # every checked invariant and property holds; gate: every verdict matches the baseline; explore: stopped by Ctrl-C
INTERNAL = 1  # an internal error (a bug in kmc, or Spark's JVM stopped answering)
DISAGREE = 1  # bench: two engines disagree on a configuration (an engine bug, as INTERNAL)
NO_PATH = 1  # graph --path: no state matches, or no path between the states that match
USAGE = 2  # bad usage or bad input: one line on stderr
STALE = 3  # gate: the baseline is stale (a verdict, a shortest trace or a state count changed)
INCOMPLETE = 4  # a limit stopped the run with an invariant or property undecided (--allow-incomplete: OK)
NOT_PROVED = 10  # prove: not inductive at the largest k tried, or the solver ran out of time
VIOLATION = 12  # an invariant or property is violated (as TLC); gate: a regression; prove: a counterexample
INTERRUPTED = 130  # Ctrl-C: the statistics so far are printed, no output file is written
