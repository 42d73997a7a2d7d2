"""Queries: snapshot, time travel, read-optimized and incremental reads of a table.

Every file slice is read in the table's current schema (columns added since it was written
come back null). On merge-on-read, a snapshot merges each slice's log into its base rows; a
read-optimized query reads base files only; skip_merge returns base rows and log records as
written. Requested columns and filters apply to the rows a slice ends up with.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_core.choices import QueryType
from hudi_core.config import read_options as R
from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.config.table_options import (
    ARCHIVELOG_FOLDER,
    PAYLOAD_CLASS,
    URL_ENCODE_PARTITIONING,
)
from hudi_core.config.unknown_options import check_options
from hudi_core.engine import EngineContext
from hudi_core.errors import IncrementalHistoryError, InstantTimeError, QueryError
from hudi_core.io.base_file import check_base_file, parquet_errors
from hudi_core.io.bootstrap_file import (
    StitchedBaseFile,
    open_base,
    source_location,
    with_folder_columns,
)
from hudi_core.keygen import key_generator_for
from hudi_core.merge.record_merger import RecordMerger
from hudi_core.model.commit_metadata import (
    CLUSTER_OPERATION,
    COMPACT_OPERATION,
    LOG_COMPACT_OPERATION,
    CommitMetadata,
)
from hudi_core.model.file_group import BaseFile, BootstrapSource, FileSlice
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.read.filters import Filter, prune_partitions, to_expression
from hudi_core.read.log_scanner import InstantFilter, SliceLog
from hudi_core.read.scan_statistics import ScanStatistics
from hudi_core.read.slice_merger import SliceMerger
from hudi_core.schema.evolution import cast_batch_to_schema
from hudi_core.schema.meta_fields import COMMIT_TIME_FIELD, add_meta_fields, is_meta_field
from hudi_core.storage import Storage
from hudi_core.table_schema import latest_table_schema
from hudi_core.timeline import ActiveTimeline, Instant
from hudi_core.timeline.archived_timeline import (
    archive_files,
    archive_folder_path,
    read_archived_instants,
)
from hudi_core.timeline.instant import WRITE_ACTIONS
from hudi_core.timeline.instant_time import format_instant_time

_PARQUET = ds.ParquetFileFormat()
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
    query_type: QueryType = QueryType.SNAPSHOT
    as_of: str | None = None
    begin: str | None = None
    end: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    # Incremental reads: fail when the range's commits were archived or their files cleaned
    # (and no full-scan fallback is allowed) rather than read what is left (streaming reads).
    require_history: bool = False


@dataclass
class _Query:
    """One read, resolved: the slices to read and how to read each."""

    slices: list[FileSlice]
    instants: InstantFilter  # which log blocks count
    read_optimized: bool
    row_filter: ds.Expression | None = None  # besides the request's filters
    changelog: bool = False  # every change in range instead of merged rows


def read_request(
    options: Mapping[str, Any],
    columns: Sequence[str] | None = None,
    filters: Sequence[Filter] | None = None,
    query_type: QueryType | str = QueryType.SNAPSHOT,
    as_of: str | None = None,
    begin: str | None = None,
    end: str | None = None,
) -> ReadRequest:
    """A request from arguments, or from Apache Hudi's read options where given (as a Spark
    read passes them): hoodie.datasource.query.type, as.of.instant,
    hoodie.datasource.read.begin.instanttime and ...end.instanttime."""
    check_options(options)
    parsed = Options(options)
    if parsed.is_set(R.QUERY_TYPE):
        query_type = parsed.get_option(R.QUERY_TYPE)
    as_of = parsed.get_option(R.AS_OF_INSTANT) or as_of
    begin = parsed.get_option(R.BEGIN_INSTANT) or begin
    end = parsed.get_option(R.END_INSTANT) or end
    query = QueryType.parse(query_type, "query type")
    return ReadRequest(columns, filters, query, as_of, begin, end, dict(options))


class TableReader:
    def __init__(self, storage: Storage, config: TableConfig, engine: EngineContext) -> None:
        self.storage = storage
        self.config = config
        self.engine = engine

    def read(self, request: ReadRequest) -> pa.Table:
        return self.read_with_statistics(request)[0]

    def read_with_statistics(self, request: ReadRequest) -> tuple[pa.Table, ScanStatistics]:
        plan = self.plan(request)
        if plan is None:
            return _select(pa.schema([]).empty_table(), request.columns), ScanStatistics()
        return plan.read_all_with_statistics(self.engine)

    def plan(self, request: ReadRequest) -> ReadPlan | None:
        """The slices a query reads and how to read each (None for a table never written);
        engines read the slices where they like (ReadPlan is picklable)."""
        options = Options(self.config.properties, request.options)
        timeline = ActiveTimeline.load(self.storage, self.config.timeline_timezone)
        data_schema = latest_table_schema(timeline, self.config)
        if data_schema is None:
            return None
        if request.query_type is QueryType.INCREMENTAL:
            query = self._incremental(timeline, request, options)
        else:
            as_of = normalize_instant(request.as_of) if request.as_of else None
            slices = FileSystemView(self.storage, timeline, as_of).latest_slices()
            read_optimized = request.query_type is QueryType.READ_OPTIMIZED
            query = _Query(slices, InstantFilter.of(timeline, as_of), read_optimized)
        query.slices = self._pruned(query.slices, data_schema, request.filters)
        return ReadPlan(self.storage, self.config, data_schema, request, options, query)

    def _incremental(
        self, timeline: ActiveTimeline, request: ReadRequest, options: Options
    ) -> _Query:
        """Rows written in (begin, end]: the file groups those commits touched, read as of
        `end`, keeping rows whose commit time is in range. Commits archived or files cleaned
        since (the range's history lost) make it a full scan with
        hoodie.datasource.read.incr.fallback.fulltablescan.enable, an IncrementalHistoryError
        for a request that requires the history, else (as hudi-rs) a read of what is left."""
        begin = normalize_instant(request.begin) if request.begin else "0" * 17
        writes = timeline.completed_writes()
        latest = writes[-1].timestamp if writes else begin
        end = normalize_instant(request.end) if request.end else latest
        view = FileSystemView(self.storage, timeline, end)
        commits = {
            instant.timestamp: CommitMetadata.from_json_bytes(timeline.read_bytes(instant))
            for instant in writes
            if begin < instant.timestamp <= end
        }
        skipped = _skipped_operations(options)
        commits = {t: m for t, m in commits.items() if m.operation_type not in skipped}
        fallback = options.get_option(R.INCREMENTAL_FULL_SCAN_FALLBACK)
        archived = self._begins_in_archive(begin, writes, exactly=request.require_history)
        checked = fallback or request.require_history
        cleaned = _cleaned_files(view, commits) if checked else []
        if (archived or cleaned) and fallback:
            # Cleaned slices are gone from the view as of `end`: the latest slices hold the
            # rows of the range that no later commit changed, as Apache Hudi's full scan reads.
            full = view if not cleaned else FileSystemView(self.storage, timeline)
            slices = full.latest_slices()
        else:
            if request.require_history and (archived or cleaned):
                raise IncrementalHistoryError(_lost_history(begin, end, writes, cleaned))
            touched = {
                (stat.partition_path, stat.file_id)
                for metadata in commits.values()
                for stat in metadata.write_stats()
            }
            slices = [s for s in view.latest_slices() if (s.partition_path, s.file_id) in touched]
        changelog = self.config.changelog and options.get_option(R.CHANGELOG_READ)
        # As Apache Hudi does, only the range's log blocks and the range's base rows are merged:
        # a change is reported even if an older write with a larger ordering value outranks it.
        of_range = InstantFilter.of(timeline, end)
        instants = InstantFilter(
            of_range.completed, of_range.pending, of_range.timeline_start, end, begin
        )
        query = _Query(slices, instants, read_optimized=False, changelog=changelog)
        if self.config.populate_meta_fields:
            commit_time = ds.field(COMMIT_TIME_FIELD)
            query.row_filter = (commit_time > begin) & (commit_time <= end)
        return query

    def _begins_in_archive(self, begin: str, writes: list[Instant], exactly: bool) -> bool:
        """Whether commits in (begin, ...] may have been archived: the range starts before
        the active timeline, and the archive holds instants; `exactly`: and some archived
        write is after `begin` (the archive is read: a stream whose last commit was archived
        has lost nothing after it)."""
        if writes and begin >= writes[0].timestamp:
            return False
        folder = archive_folder_path(self.config.options.get_option(ARCHIVELOG_FOLDER))
        if not exactly or not archive_files(self.storage, folder):
            return bool(archive_files(self.storage, folder))
        return any(
            entry.instant.is_completed
            and entry.instant.action in WRITE_ACTIONS
            and entry.instant.timestamp > begin
            for entry in read_archived_instants(self.storage, folder)
        )

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


def _skipped_operations(options: Options) -> set[str]:
    """Operation types of the table services an incremental read leaves out (their rows keep
    the commit times of the writes they rewrite; reading them only costs)."""
    skipped = set()
    if options.get_option(R.SKIP_COMPACTION):
        skipped |= {COMPACT_OPERATION, LOG_COMPACT_OPERATION}
    if options.get_option(R.SKIP_CLUSTERING):
        skipped.add(CLUSTER_OPERATION)
    return skipped


def _cleaned_files(view: FileSystemView, commits: Mapping[str, CommitMetadata]) -> list[str]:
    """Files the commits wrote that are gone from storage (cleaned since), by path."""
    present = set()
    for group in view.file_groups.values():
        for file_slice in group.slices.values():
            if file_slice.base_file is not None:
                present.add(file_slice.base_file.path)
            present.update(log.path for log in file_slice.log_files)
    written = {stat.path for metadata in commits.values() for stat in metadata.write_stats()}
    return sorted(path for path in written if path and path not in present)


def _lost_history(begin: str, end: str, writes: list[Instant], cleaned: list[str]) -> str:
    fix = f"set {R.INCREMENTAL_FULL_SCAN_FALLBACK.key}=true to scan the whole table instead"
    if cleaned:
        return (
            f"the commits in ({begin}, {end}] wrote {len(cleaned)} file(s) the cleaner has "
            f"deleted since (e.g. {cleaned[0]}): their changes can no longer be read "
            f"incrementally; {fix}"
        )
    first = writes[0].timestamp if writes else "none"
    return (
        f"commits after {begin} were archived (the active timeline begins at {first}): "
        f"which files they changed is no longer known; {fix}"
    )


class ReadPlan:
    """One query, resolved: the slices to read, and how to read each into the output rows."""

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        data_schema: pa.Schema,
        request: ReadRequest,
        options: Options,
        query: _Query,
    ) -> None:
        self.storage = storage
        self.query = query
        self.merge_on_read = config.is_merge_on_read and not query.read_optimized
        self.skip_merge = options.get_option(R.MERGE_TYPE) == "skip_merge"
        with_operation = config.changelog
        self.file_schema = add_meta_fields(
            data_schema, with_operation_field=with_operation, nullable=True
        )
        self.schema = self._output_schema(config, data_schema, query.changelog)
        self.expression = to_expression(request.filters, self.schema)
        filtered_on = {f[0] for f in request.filters or []}
        if query.row_filter is not None:
            combined = query.row_filter
            self.expression = combined if self.expression is None else self.expression & combined
            filtered_on.add(COMMIT_TIME_FIELD)
        self.columns = _checked_columns(request.columns, self.schema)
        self.filtered_on = filtered_on
        self.needed = self.columns + [
            c for c in self.schema.names if c in filtered_on and c not in self.columns
        ]
        payload = options.get_option(PAYLOAD_CLASS)
        self.merger = RecordMerger(payload, config.precombine_field)
        self.memory_budget = options.get_option(R.MERGE_MAX_MEMORY)
        self.virtual_keys = None if config.populate_meta_fields else key_generator_for(options)
        self.spill_path = options.get_option(R.SPILL_PATH)

    @staticmethod
    def _output_schema(config: TableConfig, data_schema: pa.Schema, changelog: bool) -> pa.Schema:
        if not config.populate_meta_fields:
            return data_schema
        return add_meta_fields(data_schema, with_operation_field=changelog)

    @property
    def slices(self) -> list[FileSlice]:
        return self.query.slices

    def of_slice(self, file_slice: FileSlice) -> ReadPlan:
        """This plan narrowed to one of its slices: what a task that reads it needs to carry."""
        narrowed = copy.copy(self)
        narrowed.query = dataclasses.replace(self.query, slices=[file_slice])
        return narrowed

    @property
    def output_schema(self) -> pa.Schema:
        """The schema of what the plan returns (the requested columns)."""
        return pa.schema([self.schema.field(c) for c in self.columns])

    def read_all(self, engine: EngineContext) -> pa.Table:
        return self.read_all_with_statistics(engine)[0]

    def read_all_with_statistics(self, engine: EngineContext) -> tuple[pa.Table, ScanStatistics]:
        scanned = engine.map(self.scan_slice, self.query.slices)
        statistics = sum((s for _, s in scanned), ScanStatistics())
        tables = [t for t, _ in scanned if t.num_rows]
        rows = pa.concat_tables(tables) if tables else self.output_schema.empty_table()
        return rows, statistics

    def read_slice(self, file_slice: FileSlice) -> pa.Table:
        """The slice's rows, filtered, in the requested columns."""
        return self.scan_slice(file_slice)[0]

    def scan_slice(self, file_slice: FileSlice) -> tuple[pa.Table, ScanStatistics]:
        """read_slice, and what it scanned."""
        if self.merge_on_read and file_slice.log_files:
            try:
                rows = self._read_with_log(file_slice).select(self.needed)
            except (pa.ArrowInvalid, OSError):
                if file_slice.base_file is not None:  # name the base file if it is to blame
                    check_base_file(self.storage, file_slice.base_file.path)
                raise
            statistics = ScanStatistics(files=1, files_read=1)
        elif file_slice.base_file is not None:
            rows, statistics = self._pruned_base_rows(file_slice.base_file)
        else:
            return self.output_schema.empty_table(), ScanStatistics()
        if self.expression is not None:
            rows = rows.filter(self.expression)
        return rows.select(self.columns), statistics

    def _pruned_base_rows(self, base_file: BaseFile) -> tuple[pa.Table, ScanStatistics]:
        """A base file's rows (no log applies to them), but for the row groups whose column
        statistics show no row can match the filters. A bootstrap's skeleton file is read
        with its source file, either side alone when the columns needed all live there."""
        source = base_file.bootstrap_source
        data = [c for c in self.needed if not is_meta_field(c)]
        if source is None or not data:  # a plain file, or meta columns only: the skeleton
            full_path = self.storage.full_path(base_file.path)
            rows, statistics = self._pruned_rows(self.storage.fs, full_path, base_file.path)
            skeletons = ScanStatistics(skeleton_files_read=int(source is not None))
            return rows, statistics + skeletons
        if len(data) == len(self.needed):  # data columns only: the source file alone
            filesystem, path = source_location(self.storage, source)
            rows, statistics = self._pruned_rows(filesystem, path, source.uri, source)
            return rows, statistics + ScanStatistics(source_files_read=1)
        stitched = StitchedBaseFile(self.storage, base_file)
        rows = _read_base_file(self.storage, stitched, base_file.path, self.schema, self.needed)
        return rows, ScanStatistics(1, 1, skeleton_files_read=1, source_files_read=1)

    def _pruned_rows(
        self,
        filesystem: pafs.FileSystem,
        full_path: str,
        name: str,
        source: BootstrapSource | None = None,
    ) -> tuple[pa.Table, ScanStatistics]:
        """The needed columns of the parquet file at `full_path` on `filesystem` (`name` in
        errors), of its row groups that may match the filters; a bootstrap `source` file
        gets the columns of its partition folders."""
        with parquet_errors(self.storage, name):
            fragment = _PARQUET.make_fragment(full_path, filesystem)
            total = fragment.num_row_groups  # the footer, read once for both uses
            kept = self._matching_row_groups(fragment)
        read = total if kept is None else len(kept)
        statistics = ScanStatistics(1, int(read > 0 or total == 0), total, read)
        if read == 0 and total:
            return pa.schema([self.schema.field(c) for c in self.needed]).empty_table(), statistics
        with parquet_errors(self.storage, name):
            parquet = pq.ParquetFile(full_path, filesystem=filesystem, metadata=fragment.metadata)
        rows = _read_base_file(self.storage, parquet, name, self.schema, self.needed, kept, source)
        return rows, statistics

    def _matching_row_groups(self, fragment: ds.ParquetFileFragment) -> list[int] | None:
        """Row groups whose statistics may match the filters; None (all) without filters, or
        when the file cannot be judged by them (a filtered column it lacks, or stores in
        another type than the table's)."""
        if self.expression is None:
            return None
        physical = fragment.physical_schema
        for name in self.filtered_on:
            index = physical.get_field_index(name)
            if index < 0 or physical.field(index).type != self.schema.field(name).type:
                return None
        kept = fragment.subset(filter=self.expression, schema=physical)
        return [group.id for group in kept.row_groups]

    def _read_with_log(self, file_slice: FileSlice) -> pa.Table:
        log = SliceLog.scan(self.storage, file_slice, self.query.instants)
        if self.skip_merge or self.query.changelog:
            parts = [] if file_slice.base_file is None else [self._base_rows(file_slice)]
            parts += list(log.data_records(self.storage, self.file_schema))
        else:
            merger = SliceMerger(
                self.storage,
                self.file_schema,
                self.merger,
                self.memory_budget,
                self.spill_path,
                base_filter=self.query.row_filter,
                key_generator=self.virtual_keys,
            )
            parts = list(merger.merge(file_slice, log))
        parts = [cast_batch_to_schema(p, self.schema) for p in parts if p.num_rows]
        return pa.concat_tables(parts) if parts else self.schema.empty_table()

    def _base_rows(self, file_slice: FileSlice) -> pa.Table:
        assert file_slice.base_file is not None
        path = file_slice.base_file.path
        parquet = open_base(self.storage, file_slice.base_file)
        names = self.file_schema.names
        return _read_base_file(self.storage, parquet, path, self.file_schema, names)


def _read_base_file(
    storage: Storage,
    parquet: pq.ParquetFile | StitchedBaseFile,
    path: str,
    schema: pa.Schema,
    columns: list[str],
    row_groups: list[int] | None = None,
    source: BootstrapSource | None = None,
) -> pa.Table:
    """`columns` of one base file (of its `row_groups`, default all), in `schema`: columns
    the file predates come back null."""
    if isinstance(parquet, StitchedBaseFile):
        assert row_groups is None  # the two sides' row groups do not align
        present = set(parquet.schema_arrow.names)
        table = parquet.read([c for c in columns if c in present])
        return cast_batch_to_schema(table, pa.schema([schema.field(c) for c in columns]))
    with parquet_errors(storage, path):
        present = set(parquet.schema_arrow.names)
        wanted = [c for c in columns if c in present]
        if row_groups is None:
            table = parquet.read(columns=wanted)
        else:
            table = parquet.read_row_groups(row_groups, columns=wanted)
    if source is not None:  # a source file of a bootstrap: the values of its folders too
        table = with_folder_columns(table, source, parquet.schema_arrow.names, columns)
    return cast_batch_to_schema(table, pa.schema([schema.field(c) for c in columns]))


def _checked_columns(columns: Sequence[str] | None, schema: pa.Schema) -> list[str]:
    if columns is None:
        return list(schema.names)
    unknown = [c for c in columns if c not in schema.names]
    if unknown:
        raise QueryError(f"no such columns: {unknown}; the table has {schema.names}")
    return list(columns)


def _select(table: pa.Table, columns: Sequence[str] | None) -> pa.Table:
    return table.select(_checked_columns(columns, table.schema)) if columns else table


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
    raise InstantTimeError(
        f"'{value}' is not an instant time: use yyyyMMddHHmmssSSS or 'yyyy-MM-dd HH:mm:ss.SSS'"
    )
