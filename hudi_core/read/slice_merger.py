"""Merging a merge-on-read file slice: base rows with the record versions of its log.

The log's versions are reduced to one state per key (the record merger decides which version
survives, or that the key ends deleted), then merged into the base rows. All of it happens in
memory while the versions stay under `hoodie.memory.merge.max.size`; past it, versions and then
base rows are spilled to local disk in key-hash buckets, which are merged one at a time, so a
file group with millions of log records merges in bounded memory.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from hudi_core.arrow_utils import stable_order
from hudi_core.io.base_file import parquet_errors
from hudi_core.io.bloom_filter import hash_keys
from hudi_core.io.bootstrap_file import StitchedBaseFile, open_base
from hudi_core.keygen import KeyGenerator
from hudi_core.merge.record_merger import SEQ_COLUMN, RecordMerger, merge_into
from hudi_core.model.file_group import FileSlice
from hudi_core.read.log_scanner import SliceLog
from hudi_core.schema.evolution import cast_batch_to_schema
from hudi_core.schema.meta_fields import RECORD_KEY_FIELD
from hudi_core.storage import Storage

_BASE_BATCH_ROWS = 1 << 16
_READ_BUFFER = 8 << 20


@dataclass
class MergeCounts:
    """What merges did: log records read, and the base rows they updated, deleted or added."""

    log_records: int = 0
    log_keys: int = 0  # distinct keys among the log records
    updates: int = 0
    deletes: int = 0
    inserts: int = 0


@dataclass
class SliceMerger:
    storage: Storage
    schema: pa.Schema  # the table's file schema: meta columns, then data columns
    merger: RecordMerger
    memory_budget: int  # bytes of log versions held in memory before spilling
    spill_path: str | None = None  # folder for spill files (default: the system temp folder)
    base_filter: ds.Expression | None = None  # base rows taking part (incremental reads)
    key_generator: KeyGenerator | None = None  # for tables without stored record keys
    counts: MergeCounts = field(default_factory=MergeCounts)  # accumulated over merges
    spilled: bool = False  # the last merge went through disk, in key-hash buckets

    def merge(self, file_slice: FileSlice, log: SliceLog) -> Iterator[pa.Table]:
        """The slice's rows after merging its log, in batches."""
        versions: list[pa.Table] = []
        held = 0
        spill: _Spill | None = None
        for rows in log.versions(self.storage, self.schema, self.merger.ordering_field):
            rows = self._keyed(rows)
            self.counts.log_records += rows.num_rows
            if spill is not None:
                spill.add_versions(rows)
                continue
            versions.append(rows)
            held += rows.nbytes
            if held > self.memory_budget:
                spill = _Spill(self._spill_folder(), _bucket_count(file_slice, self.memory_budget))
                self.spilled = True
                for held_rows in versions:
                    spill.add_versions(held_rows)
                versions = []
        if spill is None:
            logged = pa.concat_tables(versions) if versions else None
            yield self._merge(self._base_rows(file_slice), logged)
            return
        try:
            for batch in self._base_batches(file_slice):
                spill.add_base(batch)
            for base, logged in spill.buckets():
                yield self._merge(base, logged)
                pa.default_memory_pool().release_unused()  # give a bucket's memory back
        finally:
            spill.close()

    def _merge(self, base: pa.Table | None, versions: pa.Table | None) -> pa.Table:
        if versions is None or versions.num_rows == 0:
            return base if base is not None else self.schema.empty_table()
        states = self.merger.merge_versions(versions, [RECORD_KEY_FIELD])
        self.counts.log_keys += states.num_rows
        stored = base if base is not None else self.schema.empty_table()
        outcome = merge_into(
            self.merger,
            stored,
            stored.column(RECORD_KEY_FIELD),
            states.drop_columns([SEQ_COLUMN]),
            states.column(RECORD_KEY_FIELD),
        )
        self.counts.updates += outcome.updates
        self.counts.deletes += outcome.deletes
        self.counts.inserts += len(outcome.inserted)
        return outcome.rows

    def _base_rows(self, file_slice: FileSlice) -> pa.Table | None:
        if file_slice.base_file is None:
            return None
        path = file_slice.base_file.path
        parquet = open_base(self.storage, file_slice.base_file)
        with parquet_errors(self.storage, path):
            rows = parquet.read(columns=self._columns_in(parquet))
        return self._keyed(self._filtered(cast_batch_to_schema(rows, self.schema)))

    def _base_batches(self, file_slice: FileSlice) -> Iterator[pa.Table]:
        if file_slice.base_file is None:
            return
        path = file_slice.base_file.path
        # buffered streaming: a row group is read page by page, not all at once
        parquet = open_base(
            self.storage, file_slice.base_file, buffer_size=_READ_BUFFER, pre_buffer=False
        )
        columns = self._columns_in(parquet)
        batches = parquet.iter_batches(batch_size=_BASE_BATCH_ROWS, columns=columns)
        while True:
            with parquet_errors(self.storage, path):
                batch = next(batches, None)
            if batch is None:
                return
            rows = cast_batch_to_schema(pa.Table.from_batches([batch]), self.schema)
            yield self._keyed(self._filtered(rows))

    def _columns_in(self, parquet: pq.ParquetFile | StitchedBaseFile) -> list[str]:
        """The schema's columns the file has (others come back null; any more are not read)."""
        present = set(parquet.schema_arrow.names)
        return [name for name in self.schema.names if name in present]

    def _keyed(self, rows: pa.Table) -> pa.Table:
        """Rows of a table without stored keys get theirs from the key generator, as Apache
        Hudi's virtual keys do (deletes carry theirs already)."""
        if self.key_generator is None or rows.num_rows == 0:
            return rows
        stored = rows.column(RECORD_KEY_FIELD).combine_chunks()
        if stored.null_count == 0:
            return rows
        missing = pc.is_null(stored)
        computed = self.key_generator.record_keys(rows.filter(missing))
        keys = pc.replace_with_mask(stored, missing, computed)
        index = rows.schema.get_field_index(RECORD_KEY_FIELD)
        return rows.set_column(index, rows.schema.field(index), keys)

    def _filtered(self, rows: pa.Table) -> pa.Table:
        return rows if self.base_filter is None else rows.filter(self.base_filter)

    def _spill_folder(self) -> str:
        return tempfile.mkdtemp(prefix="hudi-merge-spill-", dir=self.spill_path)


def _bucket_count(file_slice: FileSlice, budget: int) -> int:
    """Enough buckets that one bucket's versions fit the budget, log bytes growing ~4x decoded."""
    log_bytes = sum(f.size for f in file_slice.log_files)
    return int(min(4096, max(4, np.ceil(4 * log_bytes / max(budget, 1)) * 2)))


class _Spill:
    """Versions and base rows written to local disk, bucketed by a hash of the record key."""

    def __init__(self, folder: str, buckets: int) -> None:
        self.folder = Path(folder)
        self.bucket_count = buckets
        self._writers: dict[tuple[str, int], ipc.RecordBatchStreamWriter] = {}

    def add_versions(self, rows: pa.Table) -> None:
        self._add("versions", rows)

    def add_base(self, rows: pa.Table) -> None:
        self._add("base", rows)

    def _add(self, kind: str, rows: pa.Table) -> None:
        if rows.num_rows == 0:
            return
        keys = rows.column(RECORD_KEY_FIELD)
        bucket_of = hash_keys(keys).view(np.uint32) % np.uint32(self.bucket_count)
        order = stable_order(bucket_of, self.bucket_count)
        bounds = np.searchsorted(bucket_of[order], np.arange(self.bucket_count + 1))
        ordered = rows.take(pa.array(order))
        for bucket in np.flatnonzero(np.diff(bounds)):
            part = ordered.slice(bounds[bucket], bounds[bucket + 1] - bounds[bucket])
            self._writer(kind, int(bucket), rows.schema).write_table(part)

    def _writer(self, kind: str, bucket: int, schema: pa.Schema) -> ipc.RecordBatchStreamWriter:
        key = (kind, bucket)
        if key not in self._writers:
            sink = pa.OSFile(str(self.folder / f"{kind}-{bucket}.arrows"), "wb")
            self._writers[key] = ipc.new_stream(sink, schema)
        return self._writers[key]

    def buckets(self) -> Iterator[tuple[pa.Table | None, pa.Table | None]]:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        for bucket in range(self.bucket_count):
            yield self._read("base", bucket), self._read("versions", bucket)

    def _read(self, kind: str, bucket: int) -> pa.Table | None:
        path = self.folder / f"{kind}-{bucket}.arrows"
        if not path.exists():
            return None
        with pa.OSFile(str(path), "rb") as source:
            return ipc.open_stream(source).read_all()

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        shutil.rmtree(self.folder, ignore_errors=True)
