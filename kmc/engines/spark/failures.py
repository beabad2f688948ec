"""A Spark run that failed outside kmc's own code, told in one line: what usually causes it and
what to do (`RunFailed`, exit 1). Py4J's exceptions are recognised by name: the module imports
neither py4j nor pyspark."""

from __future__ import annotations

from kmc.errors import RunFailed


def explained(e: Exception, checkpointed: bool) -> RunFailed | None:
    """The one-line failure `e` stands for, or None when it is not Spark's (a bug of kmc's
    own: it goes up as it is). `checkpointed`: the run wrote its levels (--checkpoint-dir)."""
    resume = " (--resume goes on from the last level written)" if checkpointed else ""
    if _worker_died(e):
        return RunFailed("a Spark executor's Python worker died (Python worker exited unexpectedly), most often "
                         "killed by the system for memory: more --partitions makes each worker hold less, or "
                         f"give it more memory{resume}")
    if _jvm_gone(e):  # the driver's JVM is gone, most often out of heap
        return RunFailed(f"the Spark JVM stopped answering ({type(e).__name__}): its log above says why; "
                         f"java.lang.OutOfMemoryError: Java heap space means more --conf spark.driver.memory "
                         f"(local masters run the executors in the driver's JVM) or spark.executor.memory{resume}")
    return None


def _worker_died(e: Exception) -> bool:
    """Whether a Spark job failed because a Python worker process ended in the middle of a task
    (the kernel's OOM killer, a segfault): Spark reports it in a Py4JJavaError's text."""
    if type(e).__name__ != "Py4JJavaError":
        return False
    try:
        return "Python worker exited unexpectedly" in str(e)
    except Exception:  # the JVM is gone too: _jvm_gone says so
        return False


def _jvm_gone(e: Exception) -> bool:
    """Whether py4j failed because the JVM is no longer there: a refused or broken connection,
    or a Java error whose text cannot be read back from the JVM any more (one that died out of
    heap in the middle of a call, writing a checkpoint's Parquet for instance)."""
    if isinstance(e, ConnectionError) or type(e).__name__ == "Py4JNetworkError":
        return True
    if type(e).__name__ == "Py4JJavaError":
        try:
            str(e)
        except Exception:
            return True
    return False
