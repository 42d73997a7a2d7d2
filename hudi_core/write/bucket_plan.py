"""Bucket assignment for engines that keep the rows where they are (Spark executors).

The driver sees counts only: rows tagged to each existing file group, and new rows per
partition. From those it plans buckets, one per file group written: updates (a log append on
merge-on-read, else a merge), small files topped up with inserts, and new file groups. Each
row is then routed to its bucket where it lies: tagged rows to their file group's bucket, new
rows by the hash of their key over the partition's insert buckets, weighted by how many rows
each should get, as Apache Hudi's Spark partitioner does. A bucket's rows, brought together,
make one write task.

Under the bucket index (BucketIndexPlan) there is no tag and no share of inserts: every row
goes to the bucket its key hashes to, an existing bucket's file group (merge-on-read: a log
append, inserts included) or a new one named by the bucket number.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import positions_in, row_indices_by_value, single_chunk
from hudi_core.errors import InternalError
from hudi_core.index.bucket_index import BucketGroups, BucketIndex
from hudi_core.io.bloom_filter import hash_keys
from hudi_core.merge.record_merger import DELETE_COLUMN
from hudi_core.model.file_group import FileSlice
from hudi_core.model.file_names import new_file_id
from hudi_core.schema.meta_fields import PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.write.append_task import AppendTask
from hudi_core.write.bucket_assigner import LogTargets, Sizing, new_log_only_slice, small_files
from hudi_core.write.handles import CreateTask, MergeTask
from hudi_core.write.new_key_changes import NewKeyChangesTask
from hudi_core.write.transaction import PlannedWork

NO_BUCKET = -1  # rows that write nothing: deletes of keys the table does not hold


@dataclass(frozen=True)
class Bucket:
    id: int
    partition_path: str
    file_id: str
    file_slice: FileSlice | None  # the slice it writes on; None for a new file group
    append: bool  # merge-on-read updates only: a log file on `file_slice`
    updates: int = 0
    inserts: int = 0  # expected; rows are routed by hash

    def planned_work(self) -> PlannedWork:
        prev = self.file_slice.base_instant_time if self.file_slice is not None else None
        prev = prev or None  # a new group's first log (see new_log_only_slice)
        return PlannedWork(self.partition_path, self.file_id, prev, self.inserts, self.updates)


@dataclass
class BucketPlan:
    buckets: list[Bucket] = field(default_factory=list)
    update_buckets: dict[tuple[str, str], int] = field(default_factory=dict)
    # per partition: the insert buckets and the cumulative share of new rows each takes
    insert_buckets: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # Changelog mode (write.changelog): a new key's deletes go with its other rows.
    every_change: bool = False

    def route(
        self,
        rows: pa.Table,
        file_ids: pa.Array | pa.ChunkedArray,
        deletes_follow_keys: bool = False,
    ) -> np.ndarray:
        """The bucket of every prepared row (NO_BUCKET for deletes of unknown keys, unless
        `deletes_follow_keys`: rows not yet pre-combined, whose deletes must meet the other
        rows of their key in its insert bucket)."""
        out = np.full(rows.num_rows, NO_BUCKET, dtype=np.int64)
        # Routing reads the key columns only: gathering the others would copy every row.
        rows = rows.select([RECORD_KEY_FIELD, PARTITION_PATH_FIELD, DELETE_COLUMN])
        tagged = pc.is_valid(file_ids).to_numpy(zero_copy_only=False)
        if tagged.any():
            out[tagged] = self._update_buckets(rows.filter(pa.array(tagged)), file_ids, tagged)
        deletes = rows.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
        keep_deletes = self.every_change or deletes_follow_keys
        new = ~tagged & (keep_deletes | ~deletes)
        if new.all():
            out[:] = self._insert_buckets(rows)
        elif new.any():
            new_rows = np.flatnonzero(new)
            out[new_rows] = self._insert_buckets(rows.take(pa.array(new_rows)))
        return out

    def _update_buckets(
        self, rows: pa.Table, file_ids: pa.Array | pa.ChunkedArray, tagged: np.ndarray
    ) -> np.ndarray:
        groups = pc.binary_join_element_wise(
            rows.column(PARTITION_PATH_FIELD), file_ids.filter(pa.array(tagged)), "\x00"
        )
        known = pa.array([f"{p}\x00{f}" for p, f in self.update_buckets], pa.string())
        ids = np.array(list(self.update_buckets.values()), dtype=np.int64)
        slot = positions_in(groups, known)
        if slot.null_count:
            raise InternalError("a row is tagged to a file group the plan does not know")
        buckets: np.ndarray = ids[slot.to_numpy(zero_copy_only=False)]
        return buckets

    def _insert_buckets(self, rows: pa.Table) -> np.ndarray:
        out = np.empty(rows.num_rows, dtype=np.int64)
        keys = rows.column(RECORD_KEY_FIELD)
        share = hash_keys(keys).view(np.uint32) / float(1 << 32)  # in [0, 1)
        for partition, indices in row_indices_by_value(rows.column(PARTITION_PATH_FIELD)).items():
            if partition not in self.insert_buckets:  # deletes only: no key of theirs is new
                if not pc.all(rows.column(DELETE_COLUMN).take(pa.array(indices))).as_py():
                    raise InternalError(f"new rows of partition {partition!r} have no bucket")
                out[indices] = NO_BUCKET
                continue
            ids, cumulative = self.insert_buckets[partition]
            slot = np.searchsorted(cumulative, share[indices], side="right")
            out[indices] = ids[np.minimum(slot, len(ids) - 1)]
        return out

    def task(
        self, bucket_id: int, rows: pa.Table, match_keys: bool = True
    ) -> CreateTask | MergeTask | AppendTask:
        """The write task of one bucket, given all its rows."""
        bucket = self.buckets[bucket_id]
        if bucket.file_slice is None:
            new_group_task = NewKeyChangesTask if self.every_change else CreateTask
            return new_group_task(bucket.id, bucket.partition_path, bucket.file_id, rows)
        if bucket.append:
            return AppendTask(bucket.id, bucket.file_slice, rows)
        base = bucket.file_slice.base_file
        assert base is not None, bucket
        return MergeTask(bucket.id, bucket.partition_path, bucket.file_id, base, rows, match_keys)


@dataclass
class BucketIndexPlan(BucketPlan):
    """The bucket index's plan: one Bucket per (partition, bucket number) the write reaches,
    rows routed by the bucket their record key hashes to."""

    index: BucketIndex | None = None
    by_number: dict[tuple[str, int], int] = field(default_factory=dict)  # -> Bucket id

    def route(
        self,
        rows: pa.Table,
        file_ids: pa.Array | pa.ChunkedArray | None = None,
        deletes_follow_keys: bool = True,
    ) -> np.ndarray:
        """The bucket of every prepared row (NO_BUCKET for a bucket the plan does not write:
        a new one that only deletes); `file_ids` (tags) are not needed, and deletes always go
        with their key."""
        assert self.index is not None
        out = np.full(rows.num_rows, NO_BUCKET, dtype=np.int64)
        if rows.num_rows == 0:
            return out
        numbers = self.index.bucket_ids(rows.column(RECORD_KEY_FIELD)).astype(np.int64)
        partitions = pc.dictionary_encode(single_chunk(rows.column(PARTITION_PATH_FIELD)))
        position = {p: i for i, p in enumerate(partitions.dictionary.to_pylist())}
        ids = np.full((len(position), self.index.buckets), NO_BUCKET, dtype=np.int64)
        for (partition, number), bucket_id in self.by_number.items():
            if partition in position:
                ids[position[partition], number] = bucket_id
        codes = partitions.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        out[:] = ids[codes, numbers]
        return out


def plan_bucket_index(
    index: BucketIndex,
    written: Mapping[tuple[str, int], tuple[int, int]],
    groups: BucketGroups,
    logs: LogTargets | None,
    every_change: bool,
) -> BucketIndexPlan:
    """Buckets of the bucket index for `written` ((partition, bucket number) -> (rows, rows a
    new file group would get)): an existing bucket's file group in `groups` is updated (a log
    append on merge-on-read, else a merge), a bucket without one gets a new file group whose
    file id starts with its number. No small files, no size splits."""
    plan = BucketIndexPlan(every_change=every_change, index=index)
    log_only = logs is not None and index.fixed_file_ids
    for (partition, number), (rows, new_rows) in sorted(written.items()):
        existing = groups.get((partition, number))
        if existing is None and log_only:  # see BucketIndex: the group starts with a log
            file_id = index.new_file_id(number)
            target, updates, inserts = new_log_only_slice(partition, file_id), 0, new_rows
        elif existing is None:
            file_id, target, updates, inserts = index.new_file_id(number), None, 0, new_rows
        else:
            file_id, target, updates, inserts = existing.file_id, existing, rows, 0
            if logs is not None:
                target = logs.slice_for_logs(partition, file_id) or existing
        append = logs is not None and (existing is not None or log_only)
        bucket = Bucket(len(plan.buckets), partition, file_id, target, append, updates, inserts)
        _add(plan, bucket)
        plan.by_number[(partition, number)] = bucket.id
    return plan


def plan_buckets(
    updates: Mapping[tuple[str, str], int],
    inserts: Mapping[str, int],
    slices: list[FileSlice],
    sizing: Sizing,
    logs: LogTargets | None = None,
    use_small_files: bool = True,
    every_change: bool = False,
    held: Collection[tuple[str, str]] = (),
) -> BucketPlan:
    """Buckets for `updates` (rows per tagged file group) and `inserts` (new rows per
    partition): small files first, as many as fit, then new file groups of even size."""
    by_id = {(s.partition_path, s.file_id): s for s in slices}
    topped_up: dict[tuple[str, str], int] = {}
    new_groups: dict[str, list[int]] = {}
    candidates = small_files(slices, sizing, logs, held) if use_small_files else {}
    for partition, count in sorted(inserts.items()):
        remaining = count
        for small in candidates.get(partition, []):
            take = min(sizing.room_in(small), remaining)
            if take > 0:
                topped_up[(partition, small.file_id)] = take
                remaining -= take
        if remaining:
            parts = math.ceil(remaining / max(1, sizing.records_per_new_file))
            bounds = np.linspace(0, remaining, parts + 1).astype(int)
            new_groups[partition] = list(np.diff(bounds))
    plan = BucketPlan(every_change=every_change)
    for key in sorted(set(updates) | set(topped_up)):
        file_slice = by_id[key]
        extra = topped_up.get(key, 0)
        append = logs is not None and not extra
        target = file_slice
        if append and logs is not None:
            target = logs.slice_for_logs(*key) or file_slice
        _add(
            plan,
            Bucket(len(plan.buckets), key[0], key[1], target, append, updates.get(key, 0), extra),
        )
    for partition, sizes in sorted(new_groups.items()):
        for size in sizes:
            _add(
                plan,
                Bucket(len(plan.buckets), partition, new_file_id(0), None, False, 0, int(size)),
            )
    _weigh_inserts(plan)
    return plan


def _add(plan: BucketPlan, bucket: Bucket) -> None:
    plan.buckets.append(bucket)
    if bucket.file_slice is not None:
        plan.update_buckets[(bucket.partition_path, bucket.file_id)] = bucket.id


def _weigh_inserts(plan: BucketPlan) -> None:
    by_partition: dict[str, list[Bucket]] = {}
    for bucket in plan.buckets:
        if bucket.inserts:
            by_partition.setdefault(bucket.partition_path, []).append(bucket)
    for partition, buckets in by_partition.items():
        sizes = np.array([b.inserts for b in buckets], dtype=np.float64)
        cumulative = np.cumsum(sizes) / sizes.sum()
        plan.insert_buckets[partition] = (np.array([b.id for b in buckets]), cumulative)
