"""Bucket assignment: which file group every incoming row goes to, as write tasks.

Updates go to the file group the index found. Inserts first top up the partition's small
files (below `hoodie.parquet.small.file.limit`), as many as fit by the record size estimate,
then fill new file groups sized to `hoodie.parquet.max.file.size`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import row_indices_by_value, run_boundaries, stable_order
from hudi_core.engine import EngineContext
from hudi_core.io.bloom_filter import hash_keys
from hudi_core.merge.record_merger import DELETE_COLUMN
from hudi_core.model.file_group import FileSlice
from hudi_core.model.file_names import new_file_id
from hudi_core.schema.meta_fields import PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.write.append_task import AppendTask, share_small_appends
from hudi_core.write.handles import CreateTask, MergeTask
from hudi_core.write.new_key_changes import NewKeyChangesTask

FILE_ID_COLUMN = "__hudi_file_id"


@dataclass(frozen=True)
class Sizing:
    max_file_size: int
    small_file_limit: int
    record_size: int  # estimated bytes per record on disk
    insert_split_size: int | None  # None: derive from max file size and record size
    small_file_candidates: int = 1  # merge-on-read: small files topped up per partition

    @property
    def records_per_new_file(self) -> int:
        if self.insert_split_size:
            return self.insert_split_size
        return max(1, self.max_file_size // self.record_size)

    def room_in(self, small_file: FileSlice) -> int:
        assert small_file.base_file is not None
        return max(0, (self.max_file_size - small_file.base_file.size) // self.record_size)


@dataclass(frozen=True)
class LogTargets:
    """Merge-on-read: the slice a file group's new log file goes on, and the file groups a
    pending compaction holds (not topped up with inserts until it completes)."""

    slice_for_logs: Callable[[str, str], FileSlice | None]
    under_compaction: Collection[tuple[str, str]] = ()


class TaskPlan:
    """Collects the rows of each task, then numbers the tasks.

    On merge-on-read, a file group that only receives updates and deletes gets an append (a
    log file); one topped up with inserts is merged into a new base file, as on copy-on-write.
    """

    def __init__(self, logs: LogTargets | None = None, every_change: bool = False) -> None:
        self.logs = logs
        self.new_group_task = NewKeyChangesTask if every_change else CreateTask
        self._groups: dict[tuple[str, str], tuple[FileSlice, list[pa.Table]]] = {}
        self._topped_up: set[tuple[str, str]] = set()
        self._creates: list[tuple[str, pa.Table, pa.Array | None, str | None]] = []

    def update(self, file_slice: FileSlice, rows: pa.Table) -> None:
        key = (file_slice.partition_path, file_slice.file_id)
        self._groups.setdefault(key, (file_slice, []))[1].append(rows)

    def top_up(self, file_slice: FileSlice, rows: pa.Table) -> None:
        self.update(file_slice, rows)
        self._topped_up.add((file_slice.partition_path, file_slice.file_id))

    def create(
        self,
        partition: str,
        rows: pa.Table,
        order: pa.Array | None = None,
        file_id: str | None = None,
    ) -> None:
        """A new file group of `rows` (or of the rows at `order`, taken by the task), with
        `file_id` (a bucket's) or a new random one."""
        self._creates.append((partition, rows, order, file_id))

    def tasks(self, match_keys: bool = True) -> list[CreateTask | MergeTask | AppendTask]:
        tasks: list[CreateTask | MergeTask | AppendTask] = []
        for key, (file_slice, parts) in sorted(self._groups.items()):
            rows = pa.concat_tables(parts)
            if self.logs is not None and key not in self._topped_up:
                target = self.logs.slice_for_logs(*key) or file_slice
                tasks.append(AppendTask(len(tasks), target, rows))
                continue
            assert file_slice.base_file is not None
            partition, file_id = key
            tasks.append(
                MergeTask(len(tasks), partition, file_id, file_slice.base_file, rows, match_keys)
            )
        for partition, rows, order, given_id in self._creates:
            file_id = given_id or new_file_id(0)
            tasks.append(self.new_group_task(len(tasks), partition, file_id, rows, order))
        share_small_appends(tasks)
        return tasks


def assign_upserts(
    rows: pa.Table,
    file_ids: pa.Array,
    slices: list[FileSlice],
    sizing: Sizing,
    use_small_files: bool = True,
    logs: LogTargets | None = None,
    every_change: bool = False,
    held: Collection[tuple[str, str]] = (),
) -> TaskPlan:
    """Plans updates (tagged rows) and inserts (untagged rows) for an upsert or insert; with
    `logs` (merge-on-read) updates of file groups not topped up become log appends.

    With `every_change` (changelog mode, see write.changelog) a key may have several rows: a
    new key's rows, deletes included, all go to one new file group."""
    plan = TaskPlan(logs, every_change)
    by_id = {(s.partition_path, s.file_id): s for s in slices}
    tagged = pc.is_valid(file_ids)
    updates = rows.append_column(FILE_ID_COLUMN, file_ids).filter(tagged)
    for group in _groups(updates, [PARTITION_PATH_FIELD, FILE_ID_COLUMN]):
        file_id = group.column(FILE_ID_COLUMN)[0].as_py()
        file_slice = by_id[(_partition_of(group), file_id)]
        plan.update(file_slice, group.drop_columns([FILE_ID_COLUMN]))
    new_rows = pc.invert(tagged)
    if not every_change:  # deletes of keys the table does not hold change nothing
        new_rows = pc.and_(new_rows, pc.invert(rows.column(DELETE_COLUMN)))
    inserts = rows.filter(new_rows)
    candidates = small_files(slices, sizing, logs, held) if use_small_files else {}
    for group in _groups(inserts, [PARTITION_PATH_FIELD]):
        partition = _partition_of(group)
        remaining = _fill_small_files(plan, group, candidates.get(partition, []), sizing)
        split = _split_by_key if every_change else _split_evenly
        for part in split(remaining, sizing.records_per_new_file):
            plan.create(partition, part)
    return plan


def assign_to_buckets(
    rows: pa.Table,
    file_ids: pa.DictionaryArray,
    groups: Mapping[str, FileSlice],
    logs: LogTargets | None,
    every_change: bool,
    new_groups_log_only: bool = False,
) -> TaskPlan:
    """The bucket index: each row goes to the file group `file_ids` names, an existing one in
    `groups` (by file id: a merge, or on merge-on-read a log append, inserts included) or a
    bucket's new one (deletes of keys the table cannot hold are dropped there), which starts
    with a log file when `new_groups_log_only` (non-blocking concurrency control)."""
    plan = TaskPlan(logs, every_change)
    codes = file_ids.indices.to_numpy(zero_copy_only=False)
    order = stable_order(codes, len(file_ids.dictionary))
    rows = rows.take(pa.array(order))
    names = file_ids.dictionary.to_pylist()
    sorted_codes = codes[order]
    bounds = np.flatnonzero(np.diff(sorted_codes)) + 1
    for start, end in zip([0, *bounds.tolist()], [*bounds.tolist(), len(order)], strict=True):
        if start == end:
            continue
        file_id, group = names[sorted_codes[start]], rows.slice(start, end - start)
        existing = groups.get(file_id)
        if existing is not None:
            plan.update(existing, group)
            continue
        if not every_change:
            group = group.filter(pc.invert(group.column(DELETE_COLUMN)))
        if group.num_rows and new_groups_log_only:
            plan.update(new_log_only_slice(_partition_of(group), file_id), group)
        elif group.num_rows:
            plan.create(_partition_of(group), group, file_id=file_id)
    return plan


def new_log_only_slice(partition: str, file_id: str) -> FileSlice:
    """The first slice of a file group that starts with a log file: its base instant is the
    write's own (an empty one here; the append task names it, see AppendTask)."""
    return FileSlice(partition, file_id, "", None)


def assign_bulk_inserts(
    rows: pa.Table, sizing: Sizing, engine: EngineContext, sort_by_key: bool
) -> TaskPlan:
    """New file groups only: each partition's rows, sorted by record key when asked, spread
    over up to `engine.parallelism` tasks of contiguous key ranges.

    Tasks get row indices rather than rows, so the reordering happens in the tasks, in
    parallel; the sorts run per partition on the engine too.
    """
    plan = TaskPlan()
    by_partition = row_indices_by_value(rows.column(PARTITION_PATH_FIELD))
    partitions, row_sets = list(by_partition), list(by_partition.values())
    if sort_by_key:
        keys = rows.column(RECORD_KEY_FIELD)
        row_sets = engine.map(functools.partial(_sorted_by_key, keys=keys), row_sets)
    for partition, indices in zip(partitions, row_sets, strict=True):
        wanted = math.ceil(len(indices) / sizing.records_per_new_file)
        tasks = max(1, min(engine.parallelism, wanted))
        for part in np.array_split(indices, tasks):
            plan.create(partition, rows, pa.array(part))
    return plan


def _sorted_by_key(indices: np.ndarray, keys: pa.ChunkedArray) -> np.ndarray:
    order = pc.sort_indices(keys.take(pa.array(indices))).to_numpy()
    sorted_indices: np.ndarray = indices[order]
    return sorted_indices


def _partition_of(group: pa.Table) -> str:
    return str(group.column(PARTITION_PATH_FIELD)[0].as_py())


def small_files(
    slices: list[FileSlice],
    sizing: Sizing,
    logs: LogTargets | None,
    held: Collection[tuple[str, str]] = (),
) -> dict[str, list[FileSlice]]:
    """Base files inserts may top up, per partition; never a file group in `held` (a pending
    clustering rewrites it). On merge-on-read only slices without log files qualify (their
    keys are all in the base file, where the index looks), the smallest first, at most
    `small_file_candidates` of them, as Apache Hudi does."""
    found: dict[str, list[FileSlice]] = {}
    for file_slice in slices:
        base = file_slice.base_file
        if base is None or base.size >= sizing.small_file_limit or not sizing.room_in(file_slice):
            continue
        key = (file_slice.partition_path, file_slice.file_id)
        if key in held:
            continue
        if logs is not None and (file_slice.log_files or key in logs.under_compaction):
            continue
        found.setdefault(file_slice.partition_path, []).append(file_slice)
    if logs is not None:
        for partition, candidates in found.items():
            candidates.sort(key=lambda s: s.base_file.size if s.base_file else 0)
            found[partition] = candidates[: sizing.small_file_candidates]
    return found


def _fill_small_files(
    plan: TaskPlan, inserts: pa.Table, small_files: list[FileSlice], sizing: Sizing
) -> pa.Table:
    offset = 0
    for small_file in small_files:
        if offset >= inserts.num_rows:
            break
        take = min(sizing.room_in(small_file), inserts.num_rows - offset)
        plan.top_up(small_file, inserts.slice(offset, take))
        offset += take
    return inserts.slice(offset)


def _split_evenly(rows: pa.Table, most_per_part: int) -> list[pa.Table]:
    if rows.num_rows == 0:
        return []
    parts = math.ceil(rows.num_rows / max(1, most_per_part))
    bounds = np.linspace(0, rows.num_rows, parts + 1).astype(int)
    return [rows.slice(lo, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def _split_by_key(rows: pa.Table, most_per_part: int) -> list[pa.Table]:
    """As _split_evenly, but by the hash of the record key: all rows of a key in one part,
    in their order."""
    if rows.num_rows == 0:
        return []
    parts = math.ceil(pc.count_distinct(rows.column(RECORD_KEY_FIELD)).as_py() / most_per_part)
    if parts <= 1:
        return [rows]
    slots = hash_keys(rows.column(RECORD_KEY_FIELD)).view(np.uint32) % parts
    return [rows.filter(pa.array(slots == part)) for part in range(parts) if (slots == part).any()]


def _groups(rows: pa.Table, columns: list[str]) -> list[pa.Table]:
    """Rows split by equal values of `columns` (stable: input order kept inside a group)."""
    if rows.num_rows == 0:
        return []
    rows = rows.take(pc.sort_indices(rows, [(c, "ascending") for c in columns]))
    key = rows.column(columns[0])
    if len(columns) > 1:
        key = pc.binary_join_element_wise(*[rows.column(c) for c in columns], "\x00")
    return [rows.slice(start, end - start) for start, end in run_boundaries(key)]
