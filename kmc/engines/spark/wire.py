"""What one Spark partition sends another in the level shuffle: an Arrow record batch of
fixed-width columns, written in Arrow's IPC stream format (kmc/engines/spark/tasks.py).

Columns, one value per state, no nulls:

- `sort_key` (uint64) and `extra0`, `extra1`, ... (uint32 or uint64): the canonical key
  (kmc/engines/vector/keyset.py), which decides ownership and the visited check;
- `rank0`, `rank1`, ... (uint64): the path rank's words, most significant first
  (kmc/engines/spark/ranks.py);
- with --symmetry only, `word0`, `word1`, ... (uint64): the state itself, packed
  (kmc/engines/vector/packing.py). Without symmetry the canonical key *is* the packed state,
  so no state columns are sent at all: the states are unpacked from their keys only where a
  step reads them (the owner's invariants, the next level's expansion).

So a state costs 8 bytes per key word, rank word and (with symmetry) packed word on the
wire, instead of its row of positions and a pickle of numpy objects: Arrow's reader hands the
columns back as numpy arrays over the received buffer, without copying or unpickling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from kmc.engines.vector.levelstep import LevelStep

U64 = np.uint64
_UNPACKED = 1 << 14  # states unpacked at once


@dataclass
class Packed:
    """States as the shuffle carries them: keys, path ranks and (with symmetry) packed words."""

    sort_key: np.ndarray
    extras: list[np.ndarray]
    ranks: np.ndarray  # states x rank words
    words: np.ndarray | None  # states x packed words (symmetry), else None: the key is the state

    def __len__(self) -> int:
        return len(self.sort_key)

    def take(self, index: np.ndarray) -> Packed:
        return Packed(self.sort_key[index], [e[index] for e in self.extras], self.ranks[index],
                      None if self.words is None else self.words[index])

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays by name, as they are kept in files and checkpoints (`words` only with
        symmetry)."""
        return {"sort_key": self.sort_key, **{f"extra{w}": e for w, e in enumerate(self.extras)},
                "ranks": self.ranks, **({} if self.words is None else {"words": self.words})}

    def packed(self, step: LevelStep) -> np.ndarray:
        """The states packed (words x states): without symmetry their keys themselves."""
        return step.fmt.join(self.sort_key, self.extras) if self.words is None else self.words.T

    def slices(self, step: LevelStep) -> Iterator[tuple[int, np.ndarray]]:
        """(first state, columns: positions x states of the step's dtype) for a slice of the
        states at a time, unpacked from their words: each slice stays in the caches."""
        words = self.packed(step)
        for i in range(0, len(self), _UNPACKED):
            yield i, step.columns(np.ascontiguousarray(words[:, i:i + _UNPACKED]))

    def state(self, step: LevelStep, i: int) -> tuple[int, ...]:
        """State i, unpacked (only its own words joined)."""
        words = self.take(np.array([i])).packed(step)
        return tuple(int(v) for v in step.packing.unpack_columns(words, step.dtype)[:, 0])


def encode(p: Packed) -> bytes:
    """One Arrow IPC stream holding one record batch of the states."""
    import pyarrow as pa  # imported where used: a run that never starts Spark does without it

    cols = [pa.array(p.sort_key)] + [pa.array(e) for e in p.extras]
    names = ["sort_key"] + [f"extra{w}" for w in range(len(p.extras))]
    cols += [pa.array(np.ascontiguousarray(p.ranks[:, w])) for w in range(p.ranks.shape[1])]
    names += [f"rank{w}" for w in range(p.ranks.shape[1])]
    if p.words is not None:
        cols += [pa.array(np.ascontiguousarray(p.words[:, w])) for w in range(p.words.shape[1])]
        names += [f"word{w}" for w in range(p.words.shape[1])]
    batch = pa.RecordBatch.from_arrays(cols, names=names)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def decode(data: bytes) -> Packed:
    """The states of one `encode`d stream (numpy views of the buffer, but for the ranks and
    words, which are stacked into rows)."""
    import pyarrow as pa

    batch = pa.ipc.open_stream(pa.py_buffer(data)).read_next_batch()
    cols = {name: batch.column(i).to_numpy(zero_copy_only=True) for i, name in enumerate(batch.schema.names)}
    extras = [v for n, v in cols.items() if n.startswith("extra")]
    ranks = np.stack([v for n, v in cols.items() if n.startswith("rank")], axis=1)
    words = [v for n, v in cols.items() if n.startswith("word")]
    return Packed(cols["sort_key"], extras, ranks, np.stack(words, axis=1) if words else None)


def concat(parts: list[Packed], empty: Packed) -> Packed:
    """Several senders' batches as one."""
    if not parts:
        return empty
    if len(parts) == 1:
        return parts[0]
    words = None if parts[0].words is None else np.concatenate([p.words for p in parts if p.words is not None])
    return Packed(np.concatenate([p.sort_key for p in parts]),
                  [np.concatenate([p.extras[w] for p in parts]) for w in range(len(parts[0].extras))],
                  np.concatenate([p.ranks for p in parts]), words)
