"""The Spark engine's defaults, shared by its flags' help and its driver."""

DEFAULT_MASTER = "local[*]"  # embedded: needs only Java 17
DEFAULT_THRESHOLD = 4_000_000  # a Spark level pays on local[2] only above ~1M states (docs/spark.md: the rule)
