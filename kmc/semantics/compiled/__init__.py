"""The compiled interpretation: model code traced into programs, printed as numba kernels,
cached on disk by fingerprint (programs.py, source.py, cache.py, kernels.py)."""
