"""Appending to a merge-on-read file group: one new log file with this commit's blocks.

Updates go into a data block (Avro by default, Parquet if asked), deletes into a delete block.
Like Apache Hudi on storage without appends (local disks, object stores), every commit rolls
over to a new log file version rather than appending to an existing file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.io.log_blocks import avro_data_block, delete_block, parquet_data_block
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
from hudi_core.write.handles import FileIdentity, WriteSettings, with_meta
from hudi_core.write.markers import Markers


@dataclass
class AppendTask:
    """Writes a commit's updates and deletes of one file group as a new log file."""

    task_id: int
    file_slice: FileSlice  # the group's latest slice: the log goes on top of it
    rows: pa.Table  # data columns plus key, partition and delete-flag columns

    @property
    def partition_path(self) -> str:
        return self.file_slice.partition_path

    @property
    def file_id(self) -> str:
        return self.file_slice.file_id

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
            prev_commit=self.file_slice.base_instant_time,
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
                self.file_slice.base_instant_time,
                version,
                settings.token(self.task_id),
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
        upserts = self.rows.filter(pa.array(~deleting))
        if settings.changelog:
            # Every change stays visible to changelog readers, deletes as D records, in the
            # order they came (a key may have several, see write.changelog); the delete block
            # names the keys whose last change takes them away.
            operations = pc.if_else(pa.array(deleting), DELETE_OPERATION, UPDATE_OPERATION)
            records = self._records(self.rows, settings, operations)
            deletes = self.rows.filter(pa.array(deleting & last_changes(self.rows)))
        else:
            records = self._records(upserts, settings, UPDATE_OPERATION)
            deletes = self.rows.filter(pa.array(deleting))
        blocks = [self._data_block(records, settings)] if records.num_rows else []
        blocks += self._delete_blocks(deletes, settings)
        return blocks, upserts.num_rows, int(np.count_nonzero(deleting))

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
