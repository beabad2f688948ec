"""The contract check: a model and its invariants run under the tracing interpretation
(traced.py: no data-dependent Python `if`, every action listed, effects inside ranges), and
differentially on drawn states under the scalar, vector and z3 interpretations
(differential.py, outcomes.py), over the option combinations a model class offers
(settings.py); where.py and replacement.py make the messages point at the model's own line
and name the fix."""
