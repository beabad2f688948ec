"""`kmc simulate`: swarms of random walks over numpy columns (swarm.py), in one process or
forked worker processes (workers.py) or on Spark partitions (on_spark.py), and the coverage a run
collects (coverage.py, shared with the vector engine's breadth-first search)."""
