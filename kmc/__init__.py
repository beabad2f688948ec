"""kmc: a model checker for Apache Kafka's replication and transaction protocols."""

__version__ = "0.1.0"
