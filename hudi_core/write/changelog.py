"""Changelog mode (`hoodie.allow.operation.metadata.field=true`): the changes a CDC source sends.

Records carry `_hoodie_operation`: I (insert), -U (the row before an update), U (the row after
it), D (delete). A batch may bring the column itself; `-U` and `D` rows take their key away.

What is kept follows Apache Hudi's Flink writer with changelog.enabled=true:

- merge-on-read keeps every change of a batch, in batch order: updates of stored keys go into
  the log as they are; a key new to the table gets a base file row from its first change that
  is not a delete, and its later changes go into a log file on that new file group in the same
  commit (log-only file groups, as Flink writes them, are not read by every Hudi reader);
- copy-on-write keeps each key's last change of the batch (the merge into a base file has room
  for one version), so deletes leave no row behind;
- snapshot reads and compaction keep only each key's latest state.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import SchemaError
from hudi_core.merge.record_merger import DELETE_COLUMN, group_codes
from hudi_core.schema.meta_fields import (
    DELETE_OPERATION,
    INSERT_OPERATION,
    OPERATION_FIELD,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    REMOVING_OPERATIONS,
    UPDATE_BEFORE_OPERATION,
    UPDATE_OPERATION,
)

OPERATIONS = (INSERT_OPERATION, UPDATE_BEFORE_OPERATION, UPDATE_OPERATION, DELETE_OPERATION)
# Flink's RowKind short strings, as CDC connectors spell them.
_FLINK_SPELLINGS = {"+I": INSERT_OPERATION, "+U": UPDATE_OPERATION, "-D": DELETE_OPERATION}


def batch_operations(batch: pa.Table) -> pa.ChunkedArray | None:
    """The batch's `_hoodie_operation` in Apache Hudi's spelling (nulls stay null: the writer
    decides them), or None when it has no such column; refuses values that are no change."""
    if OPERATION_FIELD not in batch.column_names:
        return None
    given = batch.column(OPERATION_FIELD)
    if not (pa.types.is_string(given.type) or pa.types.is_large_string(given.type)):
        raise SchemaError(f"{OPERATION_FIELD} must be a string column, not {given.type}")
    operations = pc.utf8_trim_whitespace(given.cast(pa.string()))
    for flink, hudi in _FLINK_SPELLINGS.items():
        operations = pc.if_else(pc.equal(operations, flink), hudi, operations)
    known = pc.or_kleene(pc.is_in(operations, pa.array(OPERATIONS)), pc.is_null(operations))
    if pc.any(pc.invert(known)).as_py():
        bad = pc.filter(given, pc.invert(known))
        first = int(pc.index(known, False).as_py())
        raise SchemaError(
            f"{OPERATION_FIELD} holds {len(bad)} value(s) that are no change, e.g. "
            f"{bad[0].as_py()!r} at row {first}; use I, -U, U or D (or Flink's +I, +U, -D)"
        )
    return operations


def removes(operations: pa.ChunkedArray) -> pa.ChunkedArray:
    """Where a change takes its record away (-U, D)."""
    return pc.fill_null(pc.is_in(operations, pa.array(REMOVING_OPERATIONS)), False)


def last_changes(rows: pa.Table) -> np.ndarray:
    """True on each key's last row (in row order)."""
    codes = _key_codes(rows)
    last = np.zeros(len(codes), bool)
    reversed_first = np.unique(codes[::-1], return_index=True)[1]
    last[len(codes) - 1 - reversed_first] = True
    return last


def split_new_keys(rows: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Changes of keys new to the table, in batch order, split into the rows of their new base
    file (each key's first change that is not a delete) and the changes after it, for a log on
    that file group. Changes before a key's first row (deletes of a key not there) change
    nothing and go; so do keys that are only deleted."""
    codes = _key_codes(rows)
    n = len(codes)
    deleting = rows.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
    positions = np.arange(n)
    first_kept = np.full(codes.max() + 1 if n else 0, n)
    np.minimum.at(first_kept, codes[~deleting], positions[~deleting])
    start = first_kept[codes]
    base = positions == start
    later = positions > start
    return rows.filter(pa.array(base)), rows.filter(pa.array(later))


def _key_codes(rows: pa.Table) -> np.ndarray:
    return group_codes(rows, [PARTITION_PATH_FIELD, RECORD_KEY_FIELD])
