"""The z3 engine's defaults, shared by its flags' help and bounded model checking."""

DEFAULT_STEPS = 10  # traces of up to 10 steps when no --depth is given
