"""Record mergers: which version of a record survives when two meet, vectorized.

Two versions meet when a batch holds the same key twice (pre-combine) and when an incoming
record meets the stored one (upsert, log merge, compaction). Apache Hudi names the policies
by payload class; we keep those names so table configs carry over.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import InvalidOptionError, PrecombineFieldError

PAYLOAD_PACKAGE = "org.apache.hudi.common.model."
OVERWRITE_WITH_LATEST = PAYLOAD_PACKAGE + "OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = PAYLOAD_PACKAGE + "DefaultHoodieRecordPayload"
EMPTY_PAYLOAD = PAYLOAD_PACKAGE + "EmptyHoodieRecordPayload"
SUPPORTED_PAYLOADS = (OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD, EMPTY_PAYLOAD)

IS_DELETED_COLUMN = "_hoodie_is_deleted"
_ROW = "__hudi_row"


@dataclass(frozen=True)
class RecordMerger:
    """Merge policy of a payload class, with the ordering (precombine) field it compares."""

    payload_class: str
    ordering_field: str | None

    def __post_init__(self) -> None:
        if self.payload_class not in SUPPORTED_PAYLOADS:
            raise InvalidOptionError(
                f"payload class {self.payload_class} is not supported; use one of "
                + ", ".join(SUPPORTED_PAYLOADS)
            )

    def require_ordering_field(self, schema: pa.Schema) -> None:
        if self.ordering_field and self.ordering_field not in schema.names:
            raise PrecombineFieldError(
                f"precombine field '{self.ordering_field}' is missing from the batch; "
                f"its columns are: {', '.join(schema.names)}"
            )

    def precombine(self, batch: pa.Table, key_columns: list[str]) -> pa.Table:
        """Keeps one row per key: the largest ordering value, the later row on a tie.

        `key_columns` ends with the record key column, the most selective one.
        """
        if batch.num_rows < 2 or _all_distinct(batch.column(key_columns[-1])):
            return batch
        indexed = batch.append_column(_ROW, pa.array(np.arange(batch.num_rows)))
        sort_keys = [(c, "ascending") for c in key_columns]
        if self.ordering_field:  # a null ordering value loses to any other
            sort_keys.append((self.ordering_field, "ascending", "at_start"))
        sort_keys.append((_ROW, "ascending"))
        order = pc.sort_indices(indexed, sort_keys=sort_keys)
        ordered = indexed.take(order)
        last_of_key = _last_of_runs(ordered, key_columns)
        survivors = pc.sort_indices(ordered.filter(last_of_key), [(_ROW, "ascending")])
        return ordered.filter(last_of_key).take(survivors).drop_columns([_ROW])

    def incoming_wins(self, stored: pa.Table, incoming: pa.Table) -> np.ndarray:
        """For aligned row pairs, whether the incoming version replaces the stored one."""
        if self.payload_class != DEFAULT_PAYLOAD or not self.ordering_field:
            return np.ones(incoming.num_rows, dtype=bool)
        old = stored.column(self.ordering_field)
        new = incoming.column(self.ordering_field)
        if old.type != new.type:
            old = old.cast(new.type)
        # The stored record survives only when its ordering value is strictly larger.
        stored_newer = pc.fill_null(pc.greater(old, new), False)
        stored_newer = pc.and_(stored_newer, pc.is_valid(old))
        newer_than_null = pc.and_(pc.is_null(new), pc.is_valid(old))
        keep_stored = pc.or_(stored_newer, newer_than_null)
        return ~keep_stored.to_numpy(zero_copy_only=False)


def is_delete_mask(batch: pa.Table) -> pa.ChunkedArray | None:
    """Rows flagged by a true `_hoodie_is_deleted` column, or None when there is none."""
    if IS_DELETED_COLUMN not in batch.column_names:
        return None
    return pc.fill_null(batch.column(IS_DELETED_COLUMN), False)


def _all_distinct(values: pa.ChunkedArray) -> bool:
    return pc.count_distinct(values).as_py() == len(values)


def _last_of_runs(ordered: pa.Table, key_columns: list[str]) -> pa.Array:
    """True on the last row of every run of equal keys in a sorted table."""
    n = ordered.num_rows
    differs = np.zeros(n, dtype=bool)
    differs[-1] = True
    for column in key_columns:
        values = ordered.column(column).combine_chunks()
        ahead = pc.not_equal(values.slice(0, n - 1), values.slice(1))
        differs[:-1] |= ahead.to_numpy(zero_copy_only=False)
    return pa.array(differs)
