"""Starting (or reusing) the Spark session the Spark engine runs in.

The settings come from what was measured to matter for this engine: Python workers run the
driver's interpreter (so they import the same kmc) with a fixed PYTHONHASHSEED and talk to
their JVM over Unix domain sockets (over TCP, each task's input arrived ~40 ms late); the JVMs
compile with C1 only (C2's compiling took CPU the Python workers needed); on a
local or loopback master the driver binds to 127.0.0.1; adaptive execution and auto-broadcast are off
and the shuffle partition count is fixed; the UI is off; the JVM logs only errors (a log4j2
file written for the session). `--conf key=value` overrides any of them.

What kmc writes for Spark lives in one directory of its own (`run_dir`: tempfile.mkdtemp,
mode 0700, a fresh name), removed when the process exits: the configuration directory
(SPARK_CONF_DIR, holding only that log4j2 file), the Unix sockets, the files shipped to
executors. Nothing is read from a directory kmc did not just make.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import socket
import subprocess
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


_MASTERS = "local, local[N], local[*], local[N,F], local-cluster[N,C,M], spark://HOST:PORT, yarn, k8s://URL"
_HOST_PORT = r"(\[[0-9A-Fa-f:.]+\]|[^\s:/,\[\]]+):\d+"
_MASTER = re.compile(r"local|local\[(\*|[1-9]\d*)(,[1-9]\d*)?\]|local-cluster\[[1-9]\d*,[1-9]\d*,[1-9]\d*\]"
                     rf"|spark://{_HOST_PORT}(,{_HOST_PORT})*|yarn|k8s://\S+")
_SIZE = re.compile(r"[0-9]+[kmgtp]?b?", re.IGNORECASE)  # the JVM's and Spark's sizes: 512m, 4g, 4gb


def check_master(master: str) -> str:
    """A Spark master URL, or bad input saying which forms are allowed."""
    if not _MASTER.fullmatch(master):
        raise BadInput(f"--master {master!r}: not a Spark master URL; allowed: {_MASTERS}")
    return master


def parse_conf(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """`key=value` strings as a dict; a malformed one (not key=value, a key Spark would ignore,
    a memory size that is not a size) is bad input."""
    conf: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise BadInput(f"--conf {item!r}: expected key=value, e.g. spark.executor.memory=4g")
        if not key.startswith("spark."):
            raise BadInput(f"--conf {item!r}: not a Spark setting (Spark ignores it); allowed: keys starting "
                           "with spark., e.g. spark.executor.memory=4g")
        if (key.endswith(".memory") or key.endswith(".memoryOverhead")) and not _SIZE.fullmatch(value.strip()):
            raise BadInput(f"--conf {item!r}: {key} is a size; allowed: a number with a unit, e.g. 4g or 512m")
        conf[key] = value
    return conf


def is_loopback(master: str) -> bool:
    return master.startswith("local") or master.startswith("spark://127.0.0.1") or master.startswith("spark://localhost")


def settings(master: str, partitions: int | None, conf: dict[str, str]) -> dict[str, str]:
    """The Spark configuration kmc starts a session with (user settings last, so they win)."""
    out = {
        "spark.app.name": "kmc",
        "spark.python.unix.domain.socket.dir": str(_socket_dir()),  # not the JVM's temporary directory
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
    check_master(master)
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
        raise BadInput(_not_started(master, conf or {}, e)) from e
    session.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        session.sparkContext.addPyFile(str(_package_zip()))
    return Started(session, time.perf_counter() - began)


def _not_started(master: str, conf: dict[str, str], e: Exception) -> str:
    """Why Spark did not start, in one line: no Java 17, or what Spark said of the settings."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    java = _java_version()
    if java is None or java < 17:
        found = "no Java found" if java is None else f"found Java {java}"
        return (f"--master {master}: could not start Spark: it needs Java 17 or later, {found} "
                "(apt-get install -y openjdk-17-jre-headless, or set JAVA_HOME)")
    given = "".join(f" --conf {k}={v}" for k, v in conf.items())
    return (f"--master {master}{given}: Spark refused to start ({first}); Spark's own message above "
            "names the setting")


def _java_version() -> int | None:
    """The major version of the Java Spark would start (JAVA_HOME's, else the PATH's), or None."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if java is None:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if m is None:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


@functools.cache
def run_dir() -> Path:
    """This process's own directory for what kmc writes for Spark: made by tempfile.mkdtemp
    (mode 0700, a name no one could plant beforehand), removed at exit (the test session's
    shared Spark session lives as long as the process)."""
    return _private(tempfile.mkdtemp(prefix="kmc-spark-"))


def _private(made: str) -> Path:
    """A directory mkdtemp just made, removed when this process exits."""
    d, owner = Path(made), os.getpid()
    atexit.register(lambda: shutil.rmtree(d, ignore_errors=True) if os.getpid() == owner else None)
    return d


def _made(name: str) -> Path:
    d = run_dir() / name
    d.mkdir(mode=0o700, exist_ok=True)  # inside run_dir: only this process makes it
    return d


def _conf_dir() -> Path:
    """A Spark configuration directory holding only kmc's quiet log4j2 settings."""
    d = _made("conf")
    f = d / "log4j2.properties"
    if not f.exists():
        f.write_text(_LOG4J2)
    return d


_SOCKET_PATH = 100  # bytes a Unix socket's path may take (108 on Linux, 104 on macOS, with the NUL)


@functools.cache
def _socket_dir() -> Path:
    """Where the driver and the JVM's Python workers put their Unix sockets (`.<uuid4>.sock`,
    42 bytes): in run_dir, or where the temporary directory's path is too long for them, in a
    directory mkdtemp makes under /tmp."""
    d = _made("sockets")
    if len(str(d)) + 1 + 42 <= _SOCKET_PATH:
        return d
    return _private(tempfile.mkdtemp(prefix="kmc-", dir="/tmp"))


def ship_dir() -> Path:
    """Where files shipped to executors (SparkContext.addPyFile) are made."""
    return _made("ship")


def _package_zip() -> Path:
    """kmc's own sources as a zip for executors on other machines (they still need numpy and
    the other dependencies installed)."""
    root = Path(__file__).resolve().parents[2]  # kmc/engines/spark/session.py -> kmc
    out = ship_dir() / "kmc.zip"
    if not out.exists():  # made once a process: Spark may be serving it already
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
