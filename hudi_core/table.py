"""HudiTable: the public face of the library: create, open, write, read, inspect."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from hudi_core.choices import QueryType, TableType, WriteOperation
from hudi_core.config import archival_options as A
from hudi_core.config import cleaner_options as CL
from hudi_core.config import clustering_options as K
from hudi_core.config import compaction_options as C
from hudi_core.config import table_options as T
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.config.table_config import (
    METAFOLDER,
    PROPERTIES_FILE,
    TableConfig,
    definition_changes,
)
from hudi_core.config.unknown_options import check_options
from hudi_core.engine import EngineContext, LocalEngine
from hudi_core.errors import (
    BootstrapError,
    ConcurrentWriterError,
    InvalidOptionError,
    TableExistsError,
)
from hudi_core.index.bucket_index import bucket_table_properties
from hudi_core.inspect import TableInspector
from hudi_core.io.bootstrap_index import drop_bootstrap_index
from hudi_core.keygen import key_generator_for
from hudi_core.lock import TableLock, table_lock
from hudi_core.merge.ordering_groups import OrderingGroups
from hudi_core.merge.record_merger import merging_payload_class
from hudi_core.read.filters import Filter
from hudi_core.read.reader import TableReader, normalize_instant, read_request
from hudi_core.read.scan_statistics import ScanStatistics
from hudi_core.schema.to_avro import arrow_to_create_schema, avro_schema_json
from hudi_core.services.archiver import Archiver
from hudi_core.services.bootstrap import (
    Bootstrapper,
    check_bootstrap_options,
    hive_style_source,
    require_separate_source,
)
from hudi_core.services.cleaner import CleanBacklog, Cleaner
from hudi_core.services.clustering import Clusterer, clustering_due
from hudi_core.services.compaction import Compactor
from hudi_core.services.heartbeat import Liveness
from hudi_core.services.metadata_table import prepare_for_change, remove_metadata_table
from hudi_core.services.rollback import roll_back_dead_writes, rollback_latest_commit
from hudi_core.services.savepoint import create_savepoint, delete_savepoint, restore
from hudi_core.storage import Storage
from hudi_core.table_schema import latest_table_schema
from hudi_core.timeline import ActiveTimeline, Instant
from hudi_core.timeline.archived_timeline import archive_folder_path
from hudi_core.write.client import WriteClient

_LOG = logging.getLogger(__name__)
# Folders Apache Hudi creates with a table, next to hoodie.properties.
_INIT_FOLDERS = (".schema", ".temp", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids")
# Options given at creation that become table properties rather than per-write settings.
_TABLE_LEVEL_OPTIONS = (
    T.DATABASE_NAME,
    T.HIVE_STYLE_PARTITIONING,
    T.URL_ENCODE_PARTITIONING,
    T.POPULATE_META_FIELDS,
    T.TIMELINE_TIMEZONE,
    T.BASE_FILE_FORMAT,
    T.ARCHIVELOG_FOLDER,
    T.BOOTSTRAP_BASE_PATH,
    T.BOOTSTRAP_INDEX_CLASS,
    W.ALLOW_OPERATION_METADATA_FIELD,
)


class HudiTable:
    """A Hudi table (table version 6) at a path or URI.

    `options` given to create() or open() apply to every write through this handle, under the
    options of the write itself, as a Spark session's configs do.
    """

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        engine: EngineContext | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.storage = storage
        self.config = config
        self.engine = engine or LocalEngine()
        self.options = dict(options or {})

    @classmethod
    def create(
        cls,
        path: str,
        name: str,
        table_type: TableType | str = TableType.COPY_ON_WRITE,
        record_key_fields: Sequence[str] = (),
        partition_fields: Sequence[str] = (),
        precombine_field: str | None = None,
        options: Mapping[str, Any] | None = None,
        schema: pa.Schema | None = None,
        engine: EngineContext | None = None,
    ) -> HudiTable:
        """Creates an empty table; `options` are hoodie.* options (table-level ones persist).

        A table at `path` that never committed (its first write or bootstrap failed) is made
        anew: its failed attempts are rolled back and it takes this definition. One with a
        commit raises TableExistsError."""
        check_options(options)
        storage = Storage(path, options=options)
        properties = _table_properties(
            name,
            table_type,
            record_key_fields,
            partition_fields,
            precombine_field,
            Options(options),
            schema,
        )
        config = TableConfig.new(properties)
        exists = storage.exists(PROPERTIES_FILE)
        if exists:
            redefined = redefine_uncommitted_table(storage, config, options)
            if isinstance(redefined, Instant):
                raise TableExistsError(
                    f"a Hudi table already exists at {path} and {_has_commits(redefined)}: open "
                    "it with HudiTable.open, or create the table at a new path"
                )
            config = redefined
        for folder in (*_INIT_FOLDERS, config.options.get_option(T.ARCHIVELOG_FOLDER)):
            storage.makedirs(f"{METAFOLDER}/{folder}")
        if not exists:
            config.save_new(storage)
        return cls(storage, config, engine, options)

    @classmethod
    def bootstrap(
        cls,
        path: str,
        source_path: str,
        name: str,
        table_type: TableType | str = TableType.COPY_ON_WRITE,
        record_key_fields: Sequence[str] = (),
        partition_fields: Sequence[str] = (),
        precombine_field: str | None = None,
        options: Mapping[str, Any] | None = None,
        engine: EngineContext | None = None,
    ) -> HudiTable:
        """Makes a Hudi table at `path` of the parquet dataset at `source_path`, partition by
        partition referenced where it lies or rewritten, as hoodie.bootstrap.mode.selector
        says (see services.bootstrap). The table must be new, or hold no commits (a failed
        bootstrap is rolled back first). Partition folders named `field=value` after the
        partition fields make a hive-style partitioned table unless the options say."""
        check_options(options)
        options = dict(options or {})
        check_bootstrap_options(Options(options))
        storage = Storage(path, options=options)
        source = Storage(source_path, options=options)
        require_separate_source(storage, source)
        named = Options(options).get_option(T.BOOTSTRAP_BASE_PATH)
        if named and Storage(named, options=options).uri_of("") != source.uri_of(""):
            raise InvalidOptionError(
                f"{T.BOOTSTRAP_BASE_PATH.key}={named} is not the source {source_path} "
                "this bootstrap was given"
            )
        bootstrap_properties = {
            T.BOOTSTRAP_BASE_PATH.key: source.uri_of(""),
            T.BOOTSTRAP_INDEX_CLASS.key: T.BOOTSTRAP_INDEX_CLASS.default,
        }
        if storage.exists(PROPERTIES_FILE) and not record_key_fields:
            # No definition given: the table's own, if it has no commits (else run() refuses).
            table = cls.open(path, options, engine)
            if _first_commit(storage, table.config) is None:
                table.config = table.config.save_update(storage, bootstrap_properties)
            Bootstrapper(
                table.storage, table.config, table.engine, source.uri_of(""), options
            ).run()
            return table
        if not Options(options).is_set(T.HIVE_STYLE_PARTITIONING) and hive_style_source(
            source, partition_fields
        ):
            options[T.HIVE_STYLE_PARTITIONING.key] = "true"
        created = {**options, **bootstrap_properties}
        try:
            # A table that never committed (a failed bootstrap) takes this definition anew.
            table = cls.create(
                path,
                name,
                table_type,
                record_key_fields,
                partition_fields,
                precombine_field,
                created,
                engine=engine,
            )
        except TableExistsError as exc:
            first = _first_commit(storage, TableConfig.load(storage))
            raise BootstrapError(
                f"{storage.base_uri} {_has_commits(first) if first else 'has commits'}: "
                "bootstrap makes a new table of a dataset and needs a table without commits; "
                "bootstrap into a new base path"
            ) from exc
        Bootstrapper(table.storage, table.config, table.engine, source.uri_of(""), options).run()
        return table

    @classmethod
    def open(
        cls,
        path: str,
        options: Mapping[str, Any] | None = None,
        engine: EngineContext | None = None,
    ) -> HudiTable:
        check_options(options)
        storage = Storage(path, options=options)
        return cls(storage, TableConfig.load(storage), engine, options)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def table_type(self) -> TableType:
        return self.config.table_type

    def schema(self) -> pa.Schema | None:
        """The table's data schema (no meta columns); None before the first write."""
        return latest_table_schema(self._timeline(), self.config)

    def write(
        self,
        data: Any,
        operation: WriteOperation | str = WriteOperation.UPSERT,
        options: Mapping[str, Any] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> str | None:
        """Writes a batch (Arrow table or batch, pandas DataFrame); returns the instant time.

        `extra_metadata` goes into the commit's extraMetadata (a source's checkpoint, say).
        """
        merged_options = {**self.options, **(options or {})}
        client = WriteClient(self.storage, self.config, self.engine)
        instant_time = client.write(data, operation, merged_options, extra_metadata)
        if instant_time is not None:
            self._run_inline_services(Options(self.config.properties, merged_options))
        return instant_time

    @property
    def inspect(self) -> TableInspector:
        """Read-only answers about the table as it is now: timelines, commit metadata, file
        groups, pending table services, partitions (see hudi_core.inspect)."""
        return TableInspector(self.storage, self.config)

    @property
    def compaction(self) -> Compactor:
        """Scheduling (`schedule`) and execution (`run`) of merge-on-read compactions."""
        return Compactor(self.storage, self.config, self.engine, self.options)

    @property
    def clustering(self) -> Clusterer:
        """Scheduling (`schedule`) and execution (`run`) of clusterings: small file groups
        rewritten into fewer, sorted ones."""
        return Clusterer(self.storage, self.config, self.engine, self.options)

    def _run_inline_services(self, options: Options) -> None:
        """What a writer runs after its commit when asked to, in Apache Hudi's order:
        compaction, clustering, then cleaning, then archival."""
        if self.config.is_merge_on_read:
            if options.get_option(C.INLINE) or options.get_option(C.SCHEDULE_INLINE):
                planned = self.compaction.schedule(options)
                if planned is not None and options.get_option(C.INLINE):
                    self.compaction.run(planned, options=options)
        inline_clustering = options.get_option(K.INLINE)
        if inline_clustering or options.get_option(K.SCHEDULE_INLINE):
            if clustering_due(self._timeline(), options.get_option(K.INLINE_MAX_COMMITS)):
                planned = self.clustering.schedule(options)
                if planned is not None and inline_clustering:
                    self.clustering.run(planned, options=options)
        if options.get_option(CL.AUTOMATIC):
            self.clean(options)
        if options.get_option(A.AUTOMATIC):
            self.archive(options)

    def read(
        self,
        columns: Sequence[str] | None = None,
        filters: Sequence[Filter] | None = None,
        as_of: str | None = None,
        query_type: QueryType | str = QueryType.SNAPSHOT,
        begin: str | None = None,
        end: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> pa.Table:
        """Snapshot (optionally as of an instant), read-optimized or incremental (begin, end].

        `options` are read options such as hoodie.datasource.merge.type=skip_merge,
        hoodie.memory.merge.max.size or hoodie.datasource.read.changelog.enabled.
        """
        return self.read_with_statistics(columns, filters, as_of, query_type, begin, end, options)[
            0
        ]

    def read_with_statistics(
        self,
        columns: Sequence[str] | None = None,
        filters: Sequence[Filter] | None = None,
        as_of: str | None = None,
        query_type: QueryType | str = QueryType.SNAPSHOT,
        begin: str | None = None,
        end: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[pa.Table, ScanStatistics]:
        """`read`, and what it scanned: base files and row groups read out of those the
        query's slices hold (files without logs are skipped by their column statistics)."""
        request = read_request(
            {**self.options, **(options or {})}, columns, filters, query_type, as_of, begin, end
        )
        return TableReader(self.storage, self.config, self.engine).read_with_statistics(request)

    # ---- table services

    def clean(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Deletes file slices the cleaner policy no longer keeps (finishing any clean cut off
        before); returns the clean's instant time, None when there was nothing to delete."""
        return Cleaner(self.storage, self.config, self.options, self.engine).clean(options)

    def plan_clean(self, options: Mapping[str, Any] | None = None) -> CleanBacklog:
        """Plans a clean if one is due, deleting nothing; what `clean` would do now (the
        cleans planned and their files, the writes a lazy clean checks for dead writers)."""
        return Cleaner(self.storage, self.config, self.options, self.engine).plan(options)

    def archive(self, options: Mapping[str, Any] | None = None) -> list[Instant]:
        """Moves old completed instants to the archived timeline; returns those moved."""
        return Archiver(self.storage, self.config, self.options).archive(options)

    def rollback(self, instant: str) -> str:
        """Rolls back the latest write (or compaction), pending or completed; returns the
        rollback's instant time. The last completed one on the active timeline stays when
        archived commits came before it (ServiceError: the table would read as empty)."""
        with self._lock_for_change("rollback"):
            return rollback_latest_commit(
                self.storage,
                self._timeline(),
                normalize_instant(instant),
                archive_folder_path(self.config.options.get_option(T.ARCHIVELOG_FOLDER)),
            )

    def savepoint(self, instant: str, comment: str = "") -> str:
        """Pins the table as of a completed commit against cleaning and archival."""
        with self._lock_for_change("savepoint"):
            timeline = self._timeline()
            return create_savepoint(self.storage, timeline, normalize_instant(instant), comment)

    def delete_savepoint(self, instant: str) -> None:
        with self._lock_for_change("savepoint"):
            delete_savepoint(self._timeline(), normalize_instant(instant))

    def restore(self, instant: str) -> str:
        """Takes the table back to the savepoint at `instant`, rolling back everything after
        it; returns the restore's instant time."""
        if Options(self.config.properties, self.options).get_option(A.BEYOND_SAVEPOINT):
            raise InvalidOptionError(
                "restore needs hoodie.archive.beyond.savepoint=false: archival past the "
                "savepoint may have taken away instants the restore has to roll back"
            )
        with self._lock_for_change("restore"):
            return restore(self.storage, self._timeline(), normalize_instant(instant))

    def timeline(self, archived: bool = False) -> list[Instant]:
        """Every instant on the active timeline (and with `archived`, the archived ones
        before it), oldest first, each in its latest state."""
        if archived:
            return Archiver(self.storage, self.config, self.options).timeline()
        return self._timeline().instants

    def _lock_for_change(self, what: str) -> TableLock:
        """The table lock, for a service about to change the table: a metadata table the table
        has goes first (see services.metadata_table)."""
        options = Options(self.config.properties, self.options)
        changed = prepare_for_change(self.storage, self.options, options, what)
        if changed is not None:
            self.config = changed
        return table_lock(self.storage, options)

    def _timeline(self) -> ActiveTimeline:
        return ActiveTimeline.load(self.storage, self.config.timeline_timezone)

    def __repr__(self) -> str:
        return f"HudiTable({self.name!r}, {self.table_type}, {self.storage.base_uri!r})"


def redefine_uncommitted_table(
    storage: Storage, wanted: TableConfig, options: Mapping[str, Any] | None
) -> TableConfig | Instant:
    """The table at `storage` made anew with the definition `wanted`, if it never committed
    (a first write or bootstrap that failed, a wrong record key field say, left it): its
    failed attempts are rolled back (once their writers' heartbeats stopped), a metadata
    table and bootstrap index they left go, and hoodie.properties is rewritten with `wanted`
    (through its backup, with its checksum) when it differs. Returns the config the table
    has then; or, leaving the table alone, its first completed commit."""
    opts = Options(TableConfig.load(storage).properties, options)
    first = _first_commit(storage, TableConfig.load(storage))
    if first is not None:
        return first
    remove_metadata_table(storage, opts)
    with table_lock(storage, opts):
        stored = TableConfig.load(storage)
        first = _first_commit(storage, stored)
        if first is not None:
            return first
        timeline = ActiveTimeline.load(storage, stored.timeline_timezone)
        _, running = roll_back_dead_writes(storage, timeline, Liveness.from_options(opts))
        if running:
            raise ConcurrentWriterError(
                f"{running[0].action} {running[0].timestamp} is in flight on "
                f"{storage.base_uri} and its writer is alive: the table cannot be made anew "
                "while its first write runs; retry once it has finished or failed"
            )
        drop_bootstrap_index(storage)
        changes = definition_changes(stored.properties, wanted.properties)
        if not changes:
            return stored
        _LOG.warning(
            "table %s never committed: taking the new definition (%s)",
            storage.base_uri,
            "; ".join(f"{k}: {old} -> {new}" for k, (old, new) in changes.items()),
        )
        gone = [key for key in stored.properties if key not in wanted.properties]
        return stored.save_update(storage, wanted.properties, removals=gone)


def _first_commit(storage: Storage, config: TableConfig) -> Instant | None:
    """The table's first completed write on the active timeline, else None."""
    completed = ActiveTimeline.load(storage, config.timeline_timezone).completed_writes()
    return completed[0] if completed else None


def _has_commits(first: Instant) -> str:
    return f"already has commits ({first.timestamp} {first.action} first)"


def _table_properties(
    name: str,
    table_type: TableType | str,
    record_key_fields: Sequence[str],
    partition_fields: Sequence[str],
    precombine_field: str | None,
    options: Options,
    schema: pa.Schema | None,
) -> dict[str, str]:
    if not record_key_fields:
        raise InvalidOptionError("a table needs at least one record key field")
    if options.get_option(T.DROP_PARTITION_COLUMNS):
        raise InvalidOptionError(
            "hoodie.datasource.write.drop.partition.columns=true is not supported: Apache "
            "Hudi's readers need the partition columns in the data files"
        )
    props = {
        T.TABLE_NAME.key: name,
        T.TABLE_TYPE.key: TableType.parse(table_type, "table type").value,
        T.RECORD_KEY_FIELDS.key: ",".join(record_key_fields),
        T.DROP_PARTITION_COLUMNS.key: "false",
        T.HIVE_STYLE_PARTITIONING.key: "false",
        T.URL_ENCODE_PARTITIONING.key: "false",
        # The write option, else the table property itself (both name the table's payload).
        T.PAYLOAD_CLASS.key: merging_payload_class(
            options.get_option(W.PAYLOAD_CLASS) or options.get(T.PAYLOAD_CLASS.key),
            T.PAYLOAD_CLASS.default,
        ),
        T.RECORD_MERGER_STRATEGY.key: T.RECORD_MERGER_STRATEGY.default,
    }
    if partition_fields:
        props[T.PARTITION_FIELDS.key] = ",".join(partition_fields)
    if precombine_field:
        # Apache Hudi's readers take hoodie.table.precombine.field for one field name (hudi-rs
        # refuses a table whose field has a comma): ordering groups get a key of their own.
        grouped = OrderingGroups.parse(precombine_field) is not None
        props[(T.ORDERING_GROUPS if grouped else T.PRECOMBINE_FIELD).key] = precombine_field
    for option in _TABLE_LEVEL_OPTIONS:
        if options.is_set(option):
            props[option.key] = options[option.key]
    if not options.get_option(T.POPULATE_META_FIELDS):
        props[T.POPULATE_META_FIELDS.key] = "false"
    props.update({k: v for k, v in options.items() if k.startswith("hoodie.keygen.")})
    props.update(bucket_table_properties(options, record_key_fields))
    key_generator = key_generator_for(Options(options, props))
    props[T.KEY_GENERATOR_CLASS.key] = key_generator.class_name
    if schema is not None:
        props[T.CREATE_SCHEMA.key] = avro_schema_json(arrow_to_create_schema(schema, name))
    return props
