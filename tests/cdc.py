"""A CDC source's batches for changelog-mode tests: changes of stored and new keys, and the
model of the states they leave."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hudi_core import HudiTable

# (key, operation, ts, value): stored keys k1..k4 change; k5..k8 are new to the table.
STORED = [("k1", 1, 10), ("k2", 1, 20), ("k3", 1, 30), ("k4", 1, 40)]
CDC = [
    ("k1", "-U", 1, 10), ("k1", "U", 2, 11),                         # an update
    ("k2", "-U", 1, 20), ("k2", "U", 2, 21),                         # two updates in one batch
    ("k2", "-U", 2, 21), ("k2", "U", 3, 22),
    ("k3", "D", 1, 30),                                              # a delete
    ("k4", "-U", 1, 40), ("k4", "U", 2, 41), ("k4", "D", 2, 41),     # updated, then deleted
    ("k5", "I", 1, 50), ("k5", "-U", 1, 50), ("k5", "U", 2, 51),     # new, then updated
    ("k6", "I", 1, 60), ("k6", "D", 1, 60),                          # new, then deleted
    ("k7", "I", 1, 70),                                              # new
    ("k8", "I", 1, 80), ("k8", "D", 1, 80), ("k8", "I", 2, 81),      # new, deleted, back
]  # fmt: skip


def cdc_batch(changes: list[tuple]) -> pa.Table:
    return pa.table(
        {
            "id": [c[0] for c in changes],
            "p": ["a" if c[0] < "k5" else "b" for c in changes],  # new keys partly elsewhere
            "ts": pa.array([c[2] for c in changes], pa.int64()),
            "v": pa.array([c[3] for c in changes], pa.int64()),
            "_hoodie_operation": [c[1] for c in changes],
        }
    )


def stored_batch() -> pa.Table:
    return cdc_batch([(k, "I", ts, v) for k, ts, v in STORED]).drop_columns(["_hoodie_operation"])


def by_key(changes: list[tuple]) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for change in changes:
        out.setdefault(change[0], []).append(change)
    return out


def latest_states(changes: list[tuple]) -> dict[str, int]:
    """The model: each key's value after the stored rows and all changes, in order."""
    state = {k: v for k, _, v in STORED}
    for key, operation, _, value in changes:
        if operation in ("-U", "D"):
            state.pop(key, None)
        else:
            state[key] = value
    return state


def create_events_table(path: Path, table_type: str = "MERGE_ON_READ", **options: str) -> HudiTable:
    """A table of cdc_batch rows: keyed by id, partitioned by p, ts ordering; every write
    makes new file groups (no small-file packing), so ranges of commits touch distinct ones."""
    return HudiTable.create(
        str(path),
        name="events",
        table_type=table_type,
        record_key_fields=["id"],
        partition_fields=["p"],
        precombine_field="ts",
        options={"hoodie.parquet.small.file.limit": "0", **options},
    )
