"""Bootstrap: an existing parquet dataset becomes a Hudi table, partition by partition either
referenced where it lies (METADATA_ONLY) or rewritten once (FULL_RECORD).

A metadata-only partition gets, for each source file, a skeleton base file holding its rows'
meta columns, committed at Apache Hudi's instant 00000000000001, and the bootstrap index
(HFileBootstrapIndex) that tells readers which source file each skeleton stands for. A
full-record partition is bulk-inserted at 00000000000002. Source files are only read.

Bootstrap needs a table without commits. One that failed midway is rolled back (its files and
index deleted) by the next bootstrap, which then starts over.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.choices import WriteOperation
from hudi_core.config import bootstrap_options as B
from hudi_core.config import index_options as I
from hudi_core.config import table_options as T
from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.engine import EngineContext
from hudi_core.errors import BootstrapError, ConcurrentWriterError, InvalidOptionError
from hudi_core.io.bootstrap_file import open_source_file, with_folder_columns
from hudi_core.io.bootstrap_index import (
    BootstrapFileMapping,
    drop_bootstrap_index,
    write_bootstrap_index,
)
from hudi_core.model.commit_metadata import WriteStat
from hudi_core.model.file_group import BootstrapSource
from hudi_core.model.file_names import new_file_id
from hudi_core.model.partition_metadata import ensure_partition_metadata
from hudi_core.schema.evolution import cast_batch_to_schema
from hudi_core.schema.meta_fields import META_FIELDS, PARTITION_PATH_FIELD
from hudi_core.services.heartbeat import Liveness, write_is_alive
from hudi_core.services.rollback import rollback_instant
from hudi_core.services.table_service import TableService
from hudi_core.storage import FileEntry, Storage
from hudi_core.timeline.instant import (
    FULL_BOOTSTRAP_INSTANT,
    METADATA_BOOTSTRAP_INSTANT,
    WRITE_ACTIONS,
)
from hudi_core.write.client import WriteClient
from hudi_core.write.handles import CreateTask, SkeletonTask, WriteSettings
from hudi_core.write.prepare import BatchPreparer
from hudi_core.write.transaction import PlannedWork

_LOG = logging.getLogger(__name__)
BOOTSTRAP_OPERATION = "BOOTSTRAP"  # operationType of the metadata-only bootstrap commit
# The Avro schema of skeleton files' footers: Apache Hudi's record of the meta columns alone.
SKELETON_AVRO_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "HoodieRecordKey",
        "doc": "",
        "fields": [
            {"name": name, "type": ["null", "string"], "doc": "", "default": None}
            for name in META_FIELDS
        ],
    }
)
_SELECTOR_MODES = {B.METADATA_ONLY_SELECTOR: B.METADATA_ONLY, B.FULL_RECORD_SELECTOR: B.FULL_RECORD}


@dataclass(frozen=True)
class SourceFile:
    """One parquet file of the source dataset."""

    partition_path: str  # its folder, relative to the source root ('' at the root)
    name: str
    size: int
    modification_ms: int


def source_partitions(source: Storage) -> dict[str, list[SourceFile]]:
    """The source dataset's partitions: its leaf folders that hold parquet files, with those
    files (names starting with '.' or '_', and what lies in such folders, are not data, as
    for Spark's readers). Apache Hudi takes the deepest folders only and drops files lying
    higher up: such a dataset is refused here instead."""
    partitions: dict[str, list[SourceFile]] = {}
    for entry in source.list_files("", recursive=True):
        if not _is_data_file(entry):
            continue
        file = SourceFile(entry.parent, entry.name, entry.size, entry.modified_ms)
        partitions.setdefault(entry.parent, []).append(file)
    depths = {_depth(p) for p in partitions}
    if len(depths) > 1:
        shallow = sorted(p or "(the root)" for p in partitions if _depth(p) < max(depths))
        raise BootstrapError(
            f"{source.base_uri} holds parquet files at different folder depths ({shallow[:3]} "
            "lie above the deepest partitions): a bootstrap takes partitions of one depth; "
            "move or remove those files"
        )
    return {p: sorted(files, key=lambda f: f.name) for p, files in sorted(partitions.items())}


def _depth(partition: str) -> int:
    return partition.count("/") + 1 if partition else 0


def hive_style_source(source: Storage, partition_fields: Sequence[str]) -> bool:
    """Whether the source's partition folders are named `field=value` after the partition
    fields, in their order (as a hive-style partitioned table's are)."""
    if not partition_fields:
        return False
    expected = [f"{field}=" for field in partition_fields]
    partitions = [p for p in source_partitions(source) if p]
    return bool(partitions) and all(
        len(parts) == len(expected)
        and all(part.startswith(prefix) for part, prefix in zip(parts, expected, strict=True))
        for parts in (p.split("/") for p in partitions)
    )


def _is_data_file(entry: FileEntry) -> bool:
    hidden = any(part[:1] in (".", "_") for part in entry.path.split("/"))
    return not hidden and entry.name.endswith(".parquet")


def select_modes(partitions: list[str], options: Options) -> dict[str, str]:
    """Each source partition's mode, as hoodie.bootstrap.mode.selector decides: the regex
    selector gives regex.mode to partitions the regex matches whole (Java's
    Pattern.matches) and the other mode to the rest."""
    selector = options.get_option(B.MODE_SELECTOR)
    short = selector.rsplit(".", 1)[-1]
    for known, mode in _SELECTOR_MODES.items():
        if short == known.rsplit(".", 1)[-1]:
            return dict.fromkeys(partitions, mode)
    if short != B.REGEX_SELECTOR.rsplit(".", 1)[-1]:
        names = [s.rsplit(".", 1)[-1] for s in (*_SELECTOR_MODES, B.REGEX_SELECTOR)]
        raise InvalidOptionError(
            f"{B.MODE_SELECTOR.key}={selector} is not a mode selector this library has; use "
            f"one of {', '.join(names)}"
        )
    raw = options.get_option(B.MODE_SELECTOR_REGEX)
    try:
        regex = re.compile(raw)
    except re.error as exc:
        raise InvalidOptionError(f"{B.MODE_SELECTOR_REGEX.key}={raw}: not a regex ({exc})") from exc
    matched = options.get_option(B.MODE_SELECTOR_REGEX_MODE)
    other = B.FULL_RECORD if matched == B.METADATA_ONLY else B.METADATA_ONLY
    return {p: matched if regex.fullmatch(p) else other for p in partitions}


def translate_partition(partition: str, options: Options) -> str:
    """The table partition a source folder becomes, by
    hoodie.bootstrap.partitionpath.translator.class."""
    translator = options.get_option(B.PARTITION_PATH_TRANSLATOR)
    short = translator.rsplit(".", 1)[-1]
    if short == B.IDENTITY_TRANSLATOR.rsplit(".", 1)[-1]:
        return partition
    if short == B.DECODED_TRANSLATOR.rsplit(".", 1)[-1]:
        return unquote(partition)
    raise InvalidOptionError(
        f"{B.PARTITION_PATH_TRANSLATOR.key}={translator} is not a translator this library "
        "has; use IdentityBootstrapPartitionPathTranslator or "
        "DecodedBootstrapPartitionPathTranslator"
    )


def require_separate_source(table: Storage, source: Storage) -> None:
    """The source dataset and the table must not lie in one another (Apache Hudi asserts the
    same): the table's files would become source files, or the reverse."""
    table_uri, source_uri = table.uri_of("").rstrip("/"), source.uri_of("").rstrip("/")
    for inner, outer in ((table_uri, source_uri), (source_uri, table_uri)):
        if inner == outer or inner.startswith(outer + "/"):
            raise BootstrapError(
                f"the source dataset {source_uri} and the table {table_uri} overlap: "
                "bootstrap a dataset into a base path outside it"
            )


def check_bootstrap_options(options: Options) -> None:
    """Raises InvalidOptionError for a mode selector, regex or translator this library does
    not have, or a table a bootstrap cannot make, before anything is written."""
    select_modes([], options)
    translate_partition("", options)
    if not options.get_option(T.POPULATE_META_FIELDS):
        raise InvalidOptionError(
            f"{T.POPULATE_META_FIELDS.key}=false: a bootstrap's skeleton files are the meta "
            "columns of the source rows; bootstrap a table that keeps them"
        )
    if options.get_option(I.INDEX_TYPE) == "BUCKET":
        raise InvalidOptionError(
            f"{I.INDEX_TYPE.key}=BUCKET: a bucket table's file groups are its buckets, a "
            "bootstrap's are the source files; bootstrap with another index"
        )


class Bootstrapper(TableService):
    """Bootstraps a table from the parquet dataset at `source_uri`."""

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        engine: EngineContext,
        source_uri: str,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(storage, config, options)
        self.engine = engine
        self.source_uri = source_uri.rstrip("/")

    def run(self, options: Mapping[str, Any] | None = None) -> list[str]:
        """Bootstraps the table; returns the instants committed (oldest first)."""
        opts = self._options_for_change(options, "this bootstrap")
        self._undo_failed_bootstrap(opts)
        partitions = source_partitions(Storage(self.source_uri, options=opts))
        if not partitions:
            raise BootstrapError(f"{self.source_uri} holds no parquet files to bootstrap")
        modes = select_modes(list(partitions), opts)
        by_mode = {
            mode: {p: files for p, files in partitions.items() if modes[p] == mode}
            for mode in (B.METADATA_ONLY, B.FULL_RECORD)
        }
        _LOG.info(
            "bootstrapping %s from %s: %d partitions metadata-only, %d full-record",
            self.storage.base_uri,
            self.source_uri,
            len(by_mode[B.METADATA_ONLY]),
            len(by_mode[B.FULL_RECORD]),
        )
        committed = []
        if by_mode[B.METADATA_ONLY]:
            committed.append(self._metadata_only(by_mode[B.METADATA_ONLY], opts))
        if by_mode[B.FULL_RECORD]:
            committed.append(self._full_record(by_mode[B.FULL_RECORD], opts))
        return committed

    def _undo_failed_bootstrap(self, opts: Options) -> None:
        """Refuses a table with commits; rolls back a bootstrap that died midway (its
        instant's files go, and the index it may have written)."""
        with self._lock(opts):
            timeline = self._timeline()
            completed = timeline.completed_writes()
            if completed:
                raise BootstrapError(
                    f"{self.storage.base_uri} already has commits ({completed[0].timestamp} "
                    f"{completed[0].action} first): bootstrap makes a new table of a dataset "
                    "and needs a table without commits; bootstrap into a new base path"
                )
            liveness = Liveness.from_options(opts)
            for pending in timeline.pending(WRITE_ACTIONS):
                if write_is_alive(self.storage, pending.timestamp, liveness):
                    raise ConcurrentWriterError(
                        f"{pending.action} {pending.timestamp} is in flight on "
                        f"{self.storage.base_uri} and its writer is alive: another bootstrap "
                        "or write is running"
                    )
                _LOG.info("rolling back the failed %s %s", pending.action, pending.timestamp)
                rollback_instant(self.storage, timeline.reload(), pending)
            drop_bootstrap_index(self.storage)

    def _metadata_only(self, partitions: dict[str, list[SourceFile]], opts: Options) -> str:
        """Skeleton files of every source file, the bootstrap index, the commit at
        00000000000001."""
        client = WriteClient(self.storage, self.config, self.engine)
        job = client.start(WriteOperation.BULK_INSERT, opts)
        listed = [(partition, file) for partition, files in partitions.items() for file in files]
        tasks = [
            SkeletonTask(
                task_id,
                translate_partition(partition, opts),
                str(uuid.uuid4()),  # skeletons' file ids are bare UUIDs, as Apache Hudi's
                BootstrapSource(self.source_uri, partition, file.name),
            )
            for task_id, (partition, file) in enumerate(listed)
        ]
        with job.transaction(METADATA_BOOTSTRAP_INSTANT, BOOTSTRAP_OPERATION) as transaction:
            transaction.start_execution(
                PlannedWork(t.partition_path, t.file_id, None, inserts=0) for t in tasks
            )
            for partition in {t.partition_path for t in tasks}:
                ensure_partition_metadata(self.storage, partition, METADATA_BOOTSTRAP_INSTANT)
            settings = dataclasses.replace(
                job.settings(METADATA_BOOTSTRAP_INSTANT, pa.schema([])),
                footer_avro_schema=SKELETON_AVRO_SCHEMA,
            )
            results = self.engine.map(functools.partial(_run_skeleton, settings=settings), tasks)
            stats = [stat for stat, _ in results]
            schema = source_schema([s for _, s in results], [t.source for t in tasks])
            mappings = [_mapping(task, file) for task, (_, file) in zip(tasks, listed, strict=True)]
            write_bootstrap_index(self.storage, self.source_uri, mappings)
            transaction.complete(stats, schema)
        return METADATA_BOOTSTRAP_INSTANT

    def _full_record(self, partitions: dict[str, list[SourceFile]], opts: Options) -> str:
        """The partitions' rows bulk-inserted at 00000000000002, one task per source file
        (its rows never leave the task that reads them)."""
        sources = [
            BootstrapSource(self.source_uri, partition, file.name)
            for partition, files in partitions.items()
            for file in files
        ]
        client = WriteClient(self.storage, self.config, self.engine)
        job = client.start(WriteOperation.BULK_INSERT, opts)
        schemas = self.engine.map(
            functools.partial(_source_file_schema, storage=self.storage), sources
        )
        schema = source_schema(schemas, sources)
        _, data_schema = job.prepare(schema.empty_table())
        assert data_schema is not None
        tasks = [FullRecordTask(task_id, source) for task_id, source in enumerate(sources)]
        with job.transaction(FULL_BOOTSTRAP_INSTANT) as transaction:
            transaction.start_execution([])
            run = functools.partial(
                _run_full_record,
                settings=job.settings(FULL_BOOTSTRAP_INSTANT, data_schema),
                preparer=job.preparer,
                schema=schema,
                combine=job.planner.combine,
            )
            stats = [stat for stats in self.engine.map(run, tasks) for stat in stats]
            transaction.complete(stats, data_schema)
        return FULL_BOOTSTRAP_INSTANT


@dataclass
class FullRecordTask:
    """Bulk-inserts the rows of one source file: keys and partition paths from the table's
    key generator, as Apache Hudi's full-record bootstrap does; new file groups per
    partition path, in the file's row order, rolled over at the max file size."""

    task_id: int
    source: BootstrapSource

    def run(
        self, settings: WriteSettings, preparer: BatchPreparer, schema: pa.Schema, combine: bool
    ) -> list[WriteStat]:
        rows = cast_batch_to_schema(read_source_rows(self.source, settings.storage), schema)
        prepared, _ = preparer.prepare(rows, combine)
        paths = prepared.column(PARTITION_PATH_FIELD)
        stats = []
        for partition in pc.unique(paths).to_pylist():
            ensure_partition_metadata(settings.storage, partition, settings.instant_time)
            rows_of_partition = prepared.filter(pc.equal(paths, partition))
            task = CreateTask(self.task_id, partition, new_file_id(), rows_of_partition)
            stats += task.run(settings)
        return stats


def _run_full_record(
    task: FullRecordTask,
    settings: WriteSettings,
    preparer: BatchPreparer,
    schema: pa.Schema,
    combine: bool,
) -> list[WriteStat]:
    return task.run(settings, preparer, schema, combine)


def _source_file_schema(source: BootstrapSource, storage: Storage) -> pa.Schema:
    return open_source_file(storage, source).schema_arrow


def _run_skeleton(task: SkeletonTask, settings: WriteSettings) -> tuple[WriteStat, pa.Schema]:
    return task.run(settings)


def _mapping(task: SkeletonTask, file: SourceFile) -> BootstrapFileMapping:
    return BootstrapFileMapping(
        source_base_path=task.source.base_uri,
        source_partition_path=task.source.partition_path,
        source_file_name=file.name,
        source_file_size=file.size,
        source_modification_time_ms=file.modification_ms,
        partition_path=task.partition_path,
        file_id=task.file_id,
    )


def source_schema(schemas: list[pa.Schema], sources: list[BootstrapSource]) -> pa.Schema:
    """The table's data schema: the source files' columns (unified across files), then the
    partition folders' columns that the files do not hold, as strings."""
    try:
        unified = pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise BootstrapError(f"the source files' schemas do not agree: {exc}") from exc
    folders: dict[str, None] = {}
    for source in sources:
        folders.update(dict.fromkeys(source.partition_values()))
    extra = [pa.field(name, pa.string()) for name in folders if name not in unified.names]
    return pa.schema([*unified, *extra])


def read_source_rows(source: BootstrapSource, storage: Storage) -> pa.Table:
    """Every row of a source file, with its partition folders' columns it does not hold."""
    parquet = open_source_file(storage, source)
    rows = parquet.read()
    return with_folder_columns(rows, source, rows.column_names)
