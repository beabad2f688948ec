"""Completed levels of a Spark run on disk, so that a run whose driver died can be resumed.

`--checkpoint-dir DIR` writes, after each completed level L, one Parquet dataset
DIR/level-LLLL/ with a row per (kind, partition, chunk): the level's new visited keys per
owner partition (kind=keys) and the level's states with their path ranks per owner
(kind=frontier, kept for the last level only). Each row's payload is the partition's numpy
arrays in NumPy's .npz format (arrays, not pickles: any numpy reads them).
Then DIR/manifest.json is replaced atomically: what the driver knows (the run's identity, level
sizes, counts, the violations found), the last level written, and per level its key count and
every file's path, size and SHA-256, the whole under a SHA-256 of its canonical JSON (`digest`;
kmc/engines/checkpoints.py, shared with the vector engine). A level is part of the run only once
the manifest names it, so a driver that dies while writing loses at most that level.

`--resume` first proves the directory holds what the manifest says: the manifest's digest,
then in every level of the run exactly the files it lists (none missing, none extra; the
frontier of an older level, dropped once a newer one is written, may be there or not), each
of its size and SHA-256; anything else is refused, one line naming the file. It checks that
it is the same run (the model factory's identity: model class and invariant builder by
module and name, settings, invariant names and the model's fingerprint; then symmetry,
--continue, partitions), rebuilds every owner's visited part from the keys of all levels and
its share of the last level from that level's states, checks their counts against the
manifest's, and the search goes on from there: the results are those of an uninterrupted
run. DIR must be reachable by the driver and every executor at the same path (local disk for
a local master, a shared mount on a cluster).
"""

from __future__ import annotations

import io
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from kmc.engines import checkpoints
from kmc.engines.checkpoints import Layout, level_dir
from kmc.engines.spark import tasks
from kmc.engines.spark.visited import VisitedRuns
from kmc.engines.spark.wire import Packed
from kmc.engines.spark.session import zip_single
from kmc.errors import BadInput

# 2: the run is named by its model factory (kmc/engines/spark/factory.py), not a model name; 3: levels
# stored packed, not as rows; 4: the manifest lists every level's files with their SHA-256, under a digest
LAYOUT = Layout("spark", 4, "kind=frontier/")
_CHUNK = 256 * 2**20  # bytes per Parquet value, well below the 2 GiB limit of a binary column


# -- arrays <-> Parquet rows -------------------------------------------------------------------

def _encode(job: tasks.Job, kind: str, arrays_of: Any, index: int, it: Iterable[tasks.Held]
            ) -> Iterator[tuple[str, int, int, bytearray]]:
    buf = io.BytesIO()
    np.savez(buf, **arrays_of(tasks.unpark(job, tasks.one(it))))
    data = buf.getvalue()
    for c, start in enumerate(range(0, max(len(data), 1), _CHUNK)):
        yield kind, index, c, bytearray(data[start:start + _CHUNK])


def _keys_arrays(owned: tasks.Owned) -> dict[str, np.ndarray]:
    b = owned.new
    return {"sort_key": b.sort_key, **{f"extra{w}": e for w, e in enumerate(b.extras)}}


def _frontier_arrays(owned: tasks.Owned) -> dict[str, np.ndarray]:
    return owned.new.arrays()


def _decode(it: Iterable[tuple[int, tuple[int, int, bytes]]]) -> list[list[dict[str, np.ndarray]]]:
    """A partition's arrays back from its rows: one dict of arrays per level stored, in level
    order (a level's value may span several chunks)."""
    rows = sorted(payload for _, payload in it)
    out: list[dict[str, np.ndarray]] = []
    for level in sorted({lv for lv, _, _ in rows}):
        data = b"".join(bytes(d) for lv, _, d in rows if lv == level)
        with np.load(io.BytesIO(data)) as z:
            out.append({k: z[k] for k in z.files})
    return [out]


# -- writing -------------------------------------------------------------------------------

def write_level(session: Any, root: Path, level: int, owned: Any, job: tasks.Job) -> None:
    """One Parquet dataset for a completed level: its new keys and its states, per owner."""
    from pyspark.sql.types import BinaryType, IntegerType, StringType, StructField, StructType

    parts = [owned.mapPartitionsWithIndex(partial(_encode, job, "keys", _keys_arrays)),
             owned.mapPartitionsWithIndex(partial(_encode, job, "frontier", _frontier_arrays))]
    schema = StructType([StructField("kind", StringType(), False), StructField("partition", IntegerType(), False),
                         StructField("chunk", IntegerType(), False), StructField("data", BinaryType(), False)])
    frame = session.createDataFrame(session.sparkContext.union(parts), schema)
    frame.write.mode("overwrite").partitionBy("kind").parquet(str(level_dir(root, level)))


def write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    checkpoints.write_manifest(root, manifest, LAYOUT)


def proved(root: Path) -> dict[str, Any]:
    """The manifest of the run kept in `root`, once it and every file it lists are proved
    (kmc/engines/checkpoints.py). Needs no Spark."""
    return checkpoints.proved(root, LAYOUT)


check_fresh, same_run = checkpoints.check_fresh, checkpoints.same_run


def _load(session: Any, root: Path, levels: list[int], kind: str, partitions: int) -> Any:
    """An RDD with one element per partition: the list of the arrays of `kind` stored for
    each of `levels` in that partition."""
    rows = []
    for level in levels:
        frame = session.read.parquet(str(level_dir(root, level))).where(f"kind = '{kind}'")
        rows.append(frame.rdd.map(lambda r, lv=level: (r["partition"], (lv, r["chunk"], r["data"]))))
    merged = session.sparkContext.union(rows) if len(rows) > 1 else rows[0]
    return merged.partitionBy(partitions, tasks.same_partition).mapPartitions(_decode)


def _owned(job: tasks.Job, home: str | None, level: int, index: int,
           it: Iterable[tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]]) -> list[tasks.Held]:
    """An owner's visited part from the keys of every level, and its share of the last level."""
    step = tasks.step_for(job)
    fmt = step.fmt
    stored, frontier = tasks.one(it)
    s = np.concatenate([a["sort_key"] for a in stored]) if stored else np.zeros(0, dtype=np.uint64)
    e = [np.concatenate([a[f"extra{w}"] for a in stored]).astype(dt) if stored else np.zeros(0, dtype=dt)
         for w, dt in enumerate(fmt.extra_dtypes)]
    visited = VisitedRuns.of(fmt, (0, level), s, e)
    a = frontier[0]
    states = Packed(a["sort_key"], [a[f"extra{w}"].astype(dt) for w, dt in enumerate(fmt.extra_dtypes)],
                    a["ranks"], a.get("words"))
    return [tasks.keep(home, level, index, tasks.Owned(visited, tasks.by_rank(states), tasks.Figures(len(states), {})))]


def load_owned(session: Any, root: Path, levels: int, job: tasks.Job, home: str | None) -> Any:
    keys = _load(session, root, list(range(1, levels + 1)), "keys", job.partitions)
    frontier = _load(session, root, [levels], "frontier", job.partitions)
    return zip_single(keys, frontier).mapPartitionsWithIndex(partial(_owned, job, home, levels - 1))


def _sizes(job: tasks.Job, it: Iterable[tasks.Held]) -> list[tuple[int, int]]:
    owned = tasks.unpark(job, tasks.one(it))
    return [(len(owned.visited), len(owned.new))]


def check_loaded(owned: Any, job: tasks.Job, root: Path, m: dict[str, Any]) -> None:
    """The owners loaded hold the manifest's count of keys, and of states of the last level."""
    sizes = owned.mapPartitions(partial(_sizes, job)).collect()
    keys, states = sum(k for k, _ in sizes), sum(n for _, n in sizes)
    if (keys, states) != (m["distinct"], m["level_size"]):
        raise BadInput(f"--resume: the levels in {root} load as {keys:,} keys with {states:,} in the last level; "
                       f"the manifest says {m['distinct']:,} and {m['level_size']:,}")
