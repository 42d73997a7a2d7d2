"""Queries: snapshot, time travel, read-optimized and incremental reads of a table.

Every base file is read in the table's current schema (columns added since it was written
come back null), with the requested columns and filters applied per file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from hudi_core.config.table_config import TableConfig
from hudi_core.config.table_options import URL_ENCODE_PARTITIONING
from hudi_core.engine import EngineContext
from hudi_core.errors import HudiError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.file_group import FileSlice
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.read.filters import Filter, prune_partitions, to_expression
from hudi_core.schema.evolution import cast_batch_to_schema
from hudi_core.schema.meta_fields import COMMIT_TIME_FIELD, add_meta_fields
from hudi_core.storage import Storage
from hudi_core.table_schema import latest_table_schema
from hudi_core.timeline import ActiveTimeline
from hudi_core.timeline.instant_time import format_instant_time

QUERY_TYPES = ("snapshot", "read_optimized", "incremental")
# Key generators whose partition paths hold the partition columns' values verbatim.
_VALUE_PATH_KEYGENS = (
    "SimpleKeyGenerator",
    "ComplexKeyGenerator",
    "SimpleAvroKeyGenerator",
    "ComplexAvroKeyGenerator",
)


@dataclass(frozen=True)
class ReadRequest:
    columns: Sequence[str] | None = None
    filters: Sequence[Filter] | None = None
    query_type: str = "snapshot"
    as_of: str | None = None
    begin: str | None = None
    end: str | None = None


class TableReader:
    def __init__(self, storage: Storage, config: TableConfig, engine: EngineContext) -> None:
        self.storage = storage
        self.config = config
        self.engine = engine

    def read(self, request: ReadRequest) -> pa.Table:
        if request.query_type not in QUERY_TYPES:
            raise HudiError(
                f"query type '{request.query_type}' is not one of {', '.join(QUERY_TYPES)}"
            )
        timeline = ActiveTimeline.load(self.storage, self.config.timeline_timezone)
        data_schema = latest_table_schema(timeline, self.config)
        if data_schema is None:
            return self._empty(pa.schema([]), request)
        if request.query_type == "incremental":
            return self._incremental(timeline, data_schema, request)
        as_of = normalize_instant(request.as_of) if request.as_of else None
        view = FileSystemView(self.storage, timeline, as_of)
        slices = self._pruned(view.latest_slices(), data_schema, request.filters)
        return self._read_slices(slices, data_schema, request, None)

    def _incremental(
        self, timeline: ActiveTimeline, data_schema: pa.Schema, request: ReadRequest
    ) -> pa.Table:
        begin = normalize_instant(request.begin) if request.begin else "0" * 17
        writes = timeline.completed_writes()
        latest = writes[-1].timestamp if writes else begin
        end = normalize_instant(request.end) if request.end else latest
        touched: set[tuple[str, str]] = set()
        for instant in writes:
            if begin < instant.timestamp <= end:
                metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(instant))
                touched |= {(s.partition_path, s.file_id) for s in metadata.write_stats()}
        view = FileSystemView(self.storage, timeline, end)
        slices = [s for s in view.latest_slices() if (s.partition_path, s.file_id) in touched]
        slices = self._pruned(slices, data_schema, request.filters)
        commit_filter = None
        if self.config.populate_meta_fields:
            commit_time = ds.field(COMMIT_TIME_FIELD)
            commit_filter = (commit_time > begin) & (commit_time <= end)
        return self._read_slices(slices, data_schema, request, commit_filter)

    def _pruned(
        self, slices: list[FileSlice], data_schema: pa.Schema, filters: Sequence[Filter] | None
    ) -> list[FileSlice]:
        keygen = (self.config.key_generator_class or "").rsplit(".", 1)[-1]
        if not filters or keygen not in _VALUE_PATH_KEYGENS:
            return slices
        partitions = sorted({s.partition_path for s in slices})
        kept = set(
            prune_partitions(
                partitions,
                filters,
                self.config.partition_fields,
                data_schema,
                self.config.hive_style_partitioning,
                self.config.options.get_option(URL_ENCODE_PARTITIONING),
            )
        )
        return [s for s in slices if s.partition_path in kept]

    def _read_slices(
        self,
        slices: list[FileSlice],
        data_schema: pa.Schema,
        request: ReadRequest,
        extra_filter: ds.Expression | None,
    ) -> pa.Table:
        schema = self._output_schema(data_schema)
        expression = to_expression(request.filters, schema)
        filtered_on = {f[0] for f in request.filters or []}
        if extra_filter is not None:
            expression = extra_filter if expression is None else expression & extra_filter
            filtered_on.add(COMMIT_TIME_FIELD)
        columns = _checked_columns(request.columns, schema)
        needed = columns + [c for c in schema.names if c in filtered_on and c not in columns]

        def read_one(file_slice: FileSlice) -> pa.Table:
            assert file_slice.base_file is not None
            table = _read_base_file(self.storage, file_slice.base_file.path, schema, needed)
            if expression is not None:
                table = table.filter(expression)
            return table.select(columns)

        tables = self.engine.map(read_one, slices)
        if not tables:
            return self._empty(schema, request)
        return pa.concat_tables(tables)

    def _output_schema(self, data_schema: pa.Schema) -> pa.Schema:
        if self.config.populate_meta_fields:
            return add_meta_fields(data_schema)
        return data_schema

    def _empty(self, schema: pa.Schema, request: ReadRequest) -> pa.Table:
        table = schema.empty_table()
        return table.select(_checked_columns(request.columns, schema)) if request.columns else table


def _read_base_file(storage: Storage, path: str, schema: pa.Schema, columns: list[str]) -> pa.Table:
    """`columns` of one base file, in `schema`: columns the file predates come back null."""
    parquet = pq.ParquetFile(storage.full_path(path), filesystem=storage.fs)
    present = set(parquet.schema_arrow.names)
    table = parquet.read(columns=[c for c in columns if c in present])
    return cast_batch_to_schema(table, pa.schema([schema.field(c) for c in columns]))


def _checked_columns(columns: Sequence[str] | None, schema: pa.Schema) -> list[str]:
    if columns is None:
        return list(schema.names)
    unknown = [c for c in columns if c not in schema.names]
    if unknown:
        raise HudiError(f"no such columns: {unknown}; the table has {schema.names}")
    return list(columns)


def normalize_instant(value: str | datetime | date) -> str:
    """An instant time from 'yyyyMMddHHmmss[SSS]', 'yyyy-MM-dd[ HH:mm:ss[.SSS]]' or a datetime.

    Digit strings are kept as given: instants compare as strings, as in Apache Hudi.
    """
    if isinstance(value, datetime):
        return format_instant_time(value)
    if isinstance(value, date):
        return value.strftime("%Y%m%d") + "000000000"
    text = str(value).strip()
    if text.isdigit():
        return text
    for pattern in (
        "%Y-%m-%d %H:%M:%S.%f",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M:%S.%f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d",
    ):
        try:
            return format_instant_time(datetime.strptime(text, pattern))
        except ValueError:
            continue
    raise HudiError(
        f"'{value}' is not an instant time: use yyyyMMddHHmmssSSS or 'yyyy-MM-dd HH:mm:ss.SSS'"
    )
