"""Starting (or reusing) the Spark session the Spark engine runs in.

The settings come from what was measured to matter for this engine: Python workers run the
driver's interpreter (so they import the same kmc) with a fixed PYTHONHASHSEED and talk to
their JVM over Unix domain sockets (over TCP, each task's input arrived ~40 ms late); the JVMs
compile with C1 only (C2's compiling took CPU the Python workers needed); on a
local or loopback master the driver binds to 127.0.0.1; adaptive execution and auto-broadcast are off
and the shuffle partition count is fixed; the UI is off; the JVM logs only errors (a log4j2
file written for the session). `--conf key=value` overrides any of them.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kmc.engines.spark.defaults import DEFAULT_MASTER
from kmc.errors import BadInput

NEEDS_PYSPARK = "--engine spark needs PySpark and PyArrow, which the spark extra installs: pip install 'kmc[spark]' (and Java 17)"

# Root at warn (Spark prints a banner when the root level differs from the shell's default,
# warn), the loggers that warn at every start at error; setLogLevel("ERROR") follows.
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
"""


@dataclass
class Started:
    session: Any  # pyspark.sql.SparkSession
    seconds: float  # how long starting it took (0 when an active session was reused)


def parse_conf(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """`key=value` strings as a dict; a malformed one is bad input."""
    conf: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise BadInput(f"--conf {item!r}: expected key=value, e.g. spark.executor.memory=4g")
        conf[key.strip()] = value
    return conf


def is_loopback(master: str) -> bool:
    return master.startswith("local") or master.startswith("spark://127.0.0.1") or master.startswith("spark://localhost")


def settings(master: str, partitions: int | None, conf: dict[str, str]) -> dict[str, str]:
    """The Spark configuration kmc starts a session with (user settings last, so they win)."""
    out = {
        "spark.app.name": "kmc",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.python.worker.reuse": "true",
        "spark.executorEnv.PYTHONHASHSEED": "0",
    }
    if hasattr(socket, "AF_UNIX"):  # TCP between the JVM and its Python workers waited ~40 ms a task (docs/spark.md)
        out["spark.python.unix.domain.socket.enabled"] = "true"
    if partitions is not None:
        out["spark.sql.shuffle.partitions"] = str(partitions)
        out["spark.default.parallelism"] = str(partitions)
    if is_loopback(master):
        out["spark.driver.host"] = "127.0.0.1"
        out["spark.driver.bindAddress"] = "127.0.0.1"
    # C1 only: the JVMs only move bytes for kmc, and C2 compiling Spark's code cost each JVM ~10 s
    # of CPU the Python workers needed (docs/spark.md, "The JVMs' JIT compiler").
    java_opts = f"-Dlog4j2.configurationFile=file:{_conf_dir() / 'log4j2.properties'} -XX:TieredStopAtLevel=1"
    out["spark.driver.extraJavaOptions"] = java_opts
    out["spark.executor.extraJavaOptions"] = java_opts
    out.update(conf)
    return out


def start(master: str = DEFAULT_MASTER, partitions: int | None = None, conf: dict[str, str] | None = None) -> Started:
    """The active Spark session if there is one (tests share one), else a new one."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ.setdefault("SPARK_CONF_DIR", str(_conf_dir()))  # the driver JVM logs only errors from its start
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:  # configure() checked it before the run
        raise BadInput(NEEDS_PYSPARK) from e
    active = SparkSession.getActiveSession()
    if active is not None:
        return Started(active, 0.0)
    began = time.perf_counter()
    builder = SparkSession.builder.master(master)
    for key, value in settings(master, partitions, conf or {}).items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise BadInput(f"--master {master}: could not start Spark ({first}); Spark needs Java 17 "
                       "(apt-get install -y openjdk-17-jre-headless)") from e
    session.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        session.sparkContext.addPyFile(str(_package_zip()))
    return Started(session, time.perf_counter() - began)


def _conf_dir() -> Path:
    """A Spark configuration directory holding only kmc's quiet log4j2 settings."""
    d = Path(tempfile.gettempdir()) / f"kmc-spark-conf-{os.getuid()}"
    d.mkdir(exist_ok=True)
    f = d / "log4j2.properties"
    if not f.exists() or f.read_text() != _LOG4J2:
        f.write_text(_LOG4J2)
    return d


def _package_zip() -> Path:
    """kmc's own sources as a zip for executors on other machines (they still need numpy and
    the other dependencies installed)."""
    root = Path(__file__).resolve().parents[2]  # kmc/engines/spark/session.py -> kmc
    out = Path(tempfile.mkdtemp(prefix="kmc-pyfiles-")) / "kmc.zip"
    with zipfile.ZipFile(out, "w") as z:
        for f in sorted(root.rglob("*.py")):
            z.write(f, f.relative_to(root.parent))
    return out


def zip_single(a: Any, b: Any) -> Any:
    """Two RDDs of one element per partition, zipped in the JVM as they are: RDD.zip would
    re-serialize both sides first (an extra Python pass over the visited set every level)."""
    from pyspark import RDD
    from pyspark.serializers import PairDeserializer

    return RDD(a._jrdd.zip(b._jrdd), a.ctx, PairDeserializer(a._jrdd_deserializer, b._jrdd_deserializer))
