"""The compiled interpretation: model code traced into programs (programs.py), built as LLVM IR
kernels (emit.py), compiled and cached on disk by fingerprint (cache.py), run on chunks of
states (kernels.py)."""
