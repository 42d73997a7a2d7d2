"""Appending to a merge-on-read file group: one new log file with this commit's blocks.

Updates go into a data block (Avro by default, Parquet if asked), deletes into a delete block.
Like Apache Hudi on storage without appends (local disks, object stores), every commit rolls
over to a new log file version rather than appending to an existing file.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.io.avro_columnar import encode_datums
from hudi_core.io.log_blocks import (
    avro_data_block,
    avro_data_block_of_framed,
    delete_block,
    parquet_data_block,
)
from hudi_core.io.log_format import LogBlock, log_file_bytes
from hudi_core.merge.record_merger import DELETE_COLUMN, NATURAL_COLUMN
from hudi_core.model.commit_metadata import RuntimeStats, WriteStat
from hudi_core.model.file_group import FileSlice
from hudi_core.model.file_names import log_file_name
from hudi_core.schema.meta_fields import (
    DELETE_OPERATION,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    UPDATE_OPERATION,
)
from hudi_core.write.changelog import last_changes
from hudi_core.write.handles import FileIdentity, WriteSettings, with_meta, with_meta_of_groups
from hudi_core.write.markers import Markers


@dataclass
class AppendTask:
    """Writes a commit's updates and deletes of one file group as a new log file."""

    task_id: int
    file_slice: FileSlice  # the group's latest slice: the log goes on top of it
    rows: pa.Table  # data columns plus key, partition and delete-flag columns
    # The records of this write's small appends, encoded together (see SharedRecords).
    shared: SharedRecords | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, object]:
        # Sent elsewhere (another engine's worker) a task encodes its own rows: shipping every
        # task's rows with each one would cost more than it saves.
        return {**self.__dict__, "shared": None}

    @property
    def partition_path(self) -> str:
        return self.file_slice.partition_path

    @property
    def file_id(self) -> str:
        return self.file_slice.file_id

    def base_instant_time(self, settings: WriteSettings) -> str:
        """The slice's base instant; a file group's first log file (see
        bucket_assigner.new_log_only_slice) starts a slice at the write's own instant."""
        return self.file_slice.base_instant_time or settings.instant_time

    def run(self, settings: WriteSettings) -> list[WriteStat]:
        started = time.monotonic()
        blocks, upserts, deletes = self._blocks(settings)
        content = log_file_bytes(blocks)
        version, path = self._create_log_file(settings, content)
        name = path.rsplit("/", 1)[-1]
        size = len(content)
        stat = WriteStat(
            file_id=self.file_id,
            partition_path=self.partition_path,
            path=path,
            prev_commit=self.base_instant_time(settings),
            num_writes=upserts,
            num_update_writes=upserts,
            num_deletes=deletes,
            total_write_bytes=size,
            file_size_in_bytes=size,
            runtime_stats=RuntimeStats(total_upsert_time=int((time.monotonic() - started) * 1000)),
            log_version=version,
            log_offset=0,
            base_file=self.file_slice.base_file.name if self.file_slice.base_file else "",
            log_files=[f.name for f in self.file_slice.log_files] + [name],
        )
        return [stat]

    def _create_log_file(self, settings: WriteSettings, content: bytes) -> tuple[int, str]:
        """Creates the slice's next log file version; returns (version, path).

        Concurrent writers (optimistic concurrency) may plan from the same listing and pick the
        same version, with the same write token: the file is created exclusively, and on a
        clash the next version is tried, so no writer replaces another's log (the loser of the
        two fails its conflict check at commit anyway)."""
        markers = Markers(settings.storage, settings.instant_time)
        version = max((f.parsed.version for f in self.file_slice.log_files), default=0) + 1
        while True:
            name = log_file_name(
                self.file_id,
                self.base_instant_time(settings),
                version,
                settings.token(self.task_id),
                settings.log_suffix,
            )
            path = f"{self.partition_path}/{name}" if self.partition_path else name
            markers.create(path, "APPEND")
            try:
                settings.storage.create_new(path, content)
                return version, path
            except FileExistsError:
                # Another writer's file: our marker must not name it (reconciling or rolling
                # back this write would then touch it).
                markers.delete(path, "APPEND")
                version += 1

    def _blocks(self, settings: WriteSettings) -> tuple[list[LogBlock], int, int]:
        deleting = self.rows.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
        deleted = int(np.count_nonzero(deleting))
        upserted = self.rows.num_rows - deleted
        if settings.changelog:
            # Every change stays visible to changelog readers, deletes as D records, in the
            # order they came (a key may have several, see write.changelog); the delete block
            # names the keys whose last change takes them away.
            operations = pc.if_else(pa.array(deleting), DELETE_OPERATION, UPDATE_OPERATION)
            records = self._records(self.rows, settings, operations)
            deletes = self.rows.filter(pa.array(deleting & last_changes(self.rows)))
        else:
            deletes = self.rows.filter(pa.array(deleting)) if deleted else self.rows.slice(0, 0)
            resets = self._delete_blocks(_resets_of(self.rows, deleting), settings)
            shared = self.shared.block_of(self, settings) if self.shared is not None else None
            if shared is not None:
                blocks = [*resets, shared] if upserted else []
                return blocks + self._delete_blocks(deletes, settings), upserted, deleted
            records = self._records(_upserts_of(self.rows), settings, UPDATE_OPERATION)
            blocks = [*resets, self._data_block(records, settings)] if records.num_rows else []
            return blocks + self._delete_blocks(deletes, settings), upserted, deleted
        blocks = [self._data_block(records, settings)] if records.num_rows else []
        blocks += self._delete_blocks(deletes, settings)
        return blocks, upserted, deleted

    def _records(
        self, rows: pa.Table, settings: WriteSettings, operation: str | pa.Array
    ) -> pa.Table:
        file = FileIdentity(self.partition_path, self.file_id)  # log records name the file id
        return with_meta(rows, settings, self.task_id, file, 0, operation)

    def _data_block(self, records: pa.Table, settings: WriteSettings) -> LogBlock:
        if settings.log_block_format == "parquet":
            return parquet_data_block(
                records,
                settings.footer_avro_schema,
                settings.instant_time,
                settings.parquet.compression,
            )
        return avro_data_block(records, settings.footer_avro_schema, settings.instant_time)

    def _delete_blocks(self, deletes: pa.Table, settings: WriteSettings) -> list[LogBlock]:
        """Natural-order deletes (by operation) and typed ones (`_hoodie_is_deleted` rows keep
        their ordering value) go into separate blocks: a block holds one kind."""
        if deletes.num_rows == 0:
            return []
        natural = deletes.column(NATURAL_COLUMN).to_numpy(zero_copy_only=False)
        ordering_field = settings.merger.ordering_field
        if ordering_field in deletes.column_names:
            natural = natural | pc.is_null(deletes.column(ordering_field)).to_numpy(
                zero_copy_only=False
            )
        else:
            natural = np.ones(deletes.num_rows, bool)
        blocks = []
        for selected, typed in ((natural, False), (~natural, True)):
            if not selected.any():
                continue
            part = deletes.filter(pa.array(selected))
            ordering = part.column(ordering_field).combine_chunks() if typed else None
            blocks.append(
                delete_block(
                    part.column(RECORD_KEY_FIELD).combine_chunks(),
                    part.column(PARTITION_PATH_FIELD).combine_chunks(),
                    ordering,
                    settings.instant_time,
                    settings.footer_avro_schema,
                )
            )
        return blocks


# Appends of fewer rows than this on average encode their records together: below it the
# fixed cost of encoding a block (per column and per call) outweighs the per-row work.
SMALL_APPEND_ROWS = 16_384
# Rows encoded together at least: enough to amortize that cost, few enough for the shards of
# one write to be encoded on several threads.
SHARD_ROWS = 32_768

_Encoded = tuple[tuple[str, str], np.ndarray, np.ndarray, np.ndarray]


class _Shard:
    """Consecutive tasks whose records are encoded together."""

    def __init__(self, tasks: list[AppendTask]) -> None:
        self.tasks = tasks
        self.lock = threading.Lock()
        self.encoded: _Encoded | None = None  # (key, data, offsets, where each task starts)

    def result(self, key: tuple[str, str]) -> _Encoded | None:
        encoded = self.encoded
        return encoded if encoded is not None and encoded[0] == key else None

    def encode(self, key: tuple[str, str], settings: WriteSettings) -> None:
        """Encodes the shard's records, under its lock (held by the caller)."""
        if self.result(key) is not None:
            return
        upserts = [_upserts_of(task.rows) for task in self.tasks]
        counts = [part.num_rows for part in upserts]
        groups = [
            (task.task_id, FileIdentity(task.partition_path, task.file_id), count)
            for task, count in zip(self.tasks, counts, strict=True)
        ]
        rows = pa.concat_tables(upserts, promote_options="permissive")
        records = with_meta_of_groups(rows, settings, groups, UPDATE_OPERATION)
        data, offsets = encode_datums(records, settings.footer_avro_schema, length_prefixed=True)
        bounds = np.concatenate([np.zeros(1, np.int64), np.cumsum(counts, dtype=np.int64)])
        self.encoded = (key, data, offsets, bounds)


class SharedRecords:
    """The data-block records of many small append tasks of one write, encoded together.

    Encoding a block costs a fixed overhead per call and per column on top of the per-row
    work; a write of many small appends (the bucket index makes one per bucket) pays it per
    shard of tasks instead: the first task of a shard to run encodes the records of all its
    tasks, with the meta columns each task gives them, and each task takes its own slice.
    The bytes are exactly those the tasks would encode one by one. A task that finds its
    shard being encoded by another thread encodes a later shard meanwhile, so that threads
    share the work rather than wait. Only tasks run in this process share; a task pickled
    for another worker encodes its own rows (see AppendTask.__getstate__).
    """

    def __init__(self, tasks: list[AppendTask]) -> None:
        self._shards: list[_Shard] = []
        self._where: dict[int, tuple[int, int]] = {}  # id(task) -> (shard, index in shard)
        members: list[AppendTask] = []
        rows = 0
        for task in tasks:
            self._where[id(task)] = (len(self._shards), len(members))
            members.append(task)
            rows += task.rows.num_rows
            if rows >= SHARD_ROWS:
                self._shards.append(_Shard(members))
                members, rows = [], 0
        if members:
            self._shards.append(_Shard(members))

    def block_of(self, task: AppendTask, settings: WriteSettings) -> LogBlock | None:
        """The Avro data block of `task`'s upserts; None when the task must encode its own
        (not one of these tasks, or records of another kind than shared ones)."""
        where = self._where.get(id(task))
        if where is None or settings.changelog or settings.log_block_format != "avro":
            return None
        key = (settings.instant_time, settings.footer_avro_schema)
        shard = self._shards[where[0]]
        encoded = shard.result(key)
        while encoded is None:
            if shard.lock.acquire(blocking=False):
                try:
                    shard.encode(key, settings)
                finally:
                    shard.lock.release()
            else:
                self._help(where[0], key, settings)
                with shard.lock:  # until the other thread is done with it
                    pass
            encoded = shard.result(key)  # None again only if that thread failed: retry
        _, data, offsets, bounds = encoded
        first, last = int(bounds[where[1]]), int(bounds[where[1] + 1])
        return avro_data_block_of_framed(
            data[offsets[first] : offsets[last]],
            last - first,
            settings.footer_avro_schema,
            settings.instant_time,
        )

    def _help(self, busy: int, key: tuple[str, str], settings: WriteSettings) -> None:
        """Encodes the next shard after `busy` that no thread has started, if any."""
        for shard in self._shards[busy + 1 :]:
            if shard.result(key) is None and shard.lock.acquire(blocking=False):
                try:
                    shard.encode(key, settings)
                finally:
                    shard.lock.release()
                return


def _resets_of(rows: pa.Table, deleting: np.ndarray) -> pa.Table:
    """Upserts that replace the stored row rather than merge into it (a key deleted and written
    again in one batch under ordering groups, see record_merger._reduce_grouped): a delete
    goes before them in the log."""
    natural = rows.column(NATURAL_COLUMN).to_numpy(zero_copy_only=False)
    resetting = natural & ~deleting
    return rows.filter(pa.array(resetting)) if resetting.any() else rows.slice(0, 0)


def _upserts_of(rows: pa.Table) -> pa.Table:
    deleting = rows.column(DELETE_COLUMN)
    if not pc.any(deleting).as_py():
        return rows  # the common case: no copy
    return rows.filter(pc.invert(deleting))


def share_small_appends(tasks: Sequence[object]) -> None:
    """Lets the append tasks among `tasks` encode their records together when they are
    many and small (see SharedRecords)."""
    appends = [task for task in tasks if isinstance(task, AppendTask)]
    if len(appends) < 2:
        return
    if sum(task.rows.num_rows for task in appends) >= SMALL_APPEND_ROWS * len(appends):
        return
    shared = SharedRecords(appends)
    for task in appends:
        task.shared = shared
