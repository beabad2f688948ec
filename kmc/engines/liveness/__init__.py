"""Liveness on the explored state graph: edges as arrays, fair strongly connected components,
lasso counterexamples (docs/liveness.md)."""
