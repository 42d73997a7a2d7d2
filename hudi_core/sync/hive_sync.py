"""Hive metastore sync: registers a Hudi table and its partitions so query engines find it.

One Hive table per query type, defined as Apache Hudi defines them: a copy-on-write table as
`<table>`; a merge-on-read table as `<table>_ro` (read-optimized: base files only) and
`<table>_rt` (snapshot: base and log files merged), each with Apache Hudi's input format.

Sync is incremental: the Hive table remembers the last commit it was synced to
(last_commit_time_sync); the next sync looks only at partitions the timeline changed since
then: it adds the new ones, points moved ones at their folder, and drops the ones with no
data left (emptied by insert_overwrite or delete_partition, or deleted by the cleaner). New
columns are added; a type change Hive cannot follow fails before anything is changed. When no
commit happened since, nothing is changed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from hudi_core.config import hive_sync_options as HS
from hudi_core.config.option import ConfigOption, Options
from hudi_core.errors import PathOutsideTableError, SyncError
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.storage import Storage
from hudi_core.sync import hive_formats
from hudi_core.sync.hive_schema import evolved_columns, hive_columns
from hudi_core.sync.identifiers import checked_name
from hudi_core.sync.metastore import Column, Metastore, Partition, TableDefinition
from hudi_core.sync.partition_values import partition_value_extractor
from hudi_core.sync.spark_schema import spark_schema_json
from hudi_core.sync.written_partitions import timeline_changes
from hudi_core.table import HudiTable
from hudi_core.timeline import ActiveTimeline

LAST_COMMIT_TIME_SYNC = "last_commit_time_sync"
_LOG = logging.getLogger(__name__)


@dataclass
class SyncResult:
    """What a sync changed, per Hive table (`database.table`)."""

    created: list[str] = field(default_factory=list)
    columns_updated: list[str] = field(default_factory=list)
    partitions_added: dict[str, list[str]] = field(default_factory=dict)
    partitions_updated: dict[str, list[str]] = field(default_factory=dict)
    partitions_dropped: dict[str, list[str]] = field(default_factory=dict)
    synced_to: str | None = None  # the commit the tables are synced to now

    @property
    def changed(self) -> bool:
        return bool(
            self.created
            or self.columns_updated
            or any(self.partitions_added.values())
            or any(self.partitions_updated.values())
            or any(self.partitions_dropped.values())
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class HiveSyncTool:
    def __init__(self, table: HudiTable, options: Options, metastore: Metastore | None) -> None:
        """`metastore` may be None for a tool that only maps partitions to values."""
        self.table = table
        self.storage: Storage = table.storage
        self.options = options
        self.metastore = metastore
        config = table.config
        self.database = checked_name(options.get_option(HS.DATABASE), "database")
        name = options.get_option(HS.TABLE) or table.name
        self.base_name = checked_name(name, "table")
        fields = options.get_option(HS.PARTITION_FIELDS)
        keys = fields if fields is not None else config.partition_fields
        self.partition_keys = [checked_name(key, "partition column") for key in keys]
        self.extract = partition_value_extractor(
            options.get_option(HS.PARTITION_EXTRACTOR_CLASS),
            self.partition_keys,
            config.hive_style_partitioning,
        )
        self.kinds = hive_formats.table_kinds(
            config.is_merge_on_read, options.get_option(HS.SKIP_RO_SUFFIX)
        )

    @property
    def _store(self) -> Metastore:
        if self.metastore is None:
            raise SyncError(
                "this Hive sync has no metastore (it only maps partitions to values); "
                "configure hoodie.datasource.hive_sync.* to sync"
            )
        return self.metastore

    # ---- the Hive tables

    def table_names(self) -> list[str]:
        return [self.base_name + kind.suffix for kind in self.kinds]

    def partition_values(self, partition: str) -> list[str]:
        values = self.extract(partition)
        if len(values) != len(self.partition_keys):
            raise SyncError(
                f"partition {partition!r} gives {len(values)} values {values} but the Hive "
                f"table has {len(self.partition_keys)} partition columns "
                f"({', '.join(self.partition_keys) or 'none'}); check "
                f"{HS.PARTITION_FIELDS.key} and {HS.PARTITION_EXTRACTOR_CLASS.key}"
            )
        return values

    def sync(self, hold_back: Iterable[str] = ()) -> SyncResult:
        """Brings every Hive table of this Hudi table up to its latest commit. Partitions in
        `hold_back` are not added yet (partition commit decides when)."""
        result = SyncResult()
        timeline = ActiveTimeline.load(self.storage)
        latest = timeline.last_completed_write()
        if latest is None:
            _LOG.info("%s has no commit yet: nothing to sync", self.storage.base_uri)
            return result
        schema = self.table.schema()
        self._ensure_database()
        wanted = [self._definition(kind, schema, latest.timestamp) for kind in self.kinds]
        existing = [self._store.get_table(self.database, d.name) for d in wanted]
        evolved = [  # checked for every table before any is changed
            evolved_columns(f"{d.database}.{d.name}", e.columns, d.columns) if e else None
            for d, e in zip(wanted, existing, strict=True)
        ]
        view = FileSystemView(self.storage, timeline)
        for definition, current, columns in zip(wanted, existing, evolved, strict=True):
            self._sync_table(definition, current, columns, timeline, view, set(hold_back), result)
        result.synced_to = latest.timestamp
        return result

    def register_partitions(self, partitions: list[str]) -> None:
        """Adds these partitions (those that still hold data) to every Hive table, or points
        them at their folder: the metastore partition-commit policy."""
        timeline = ActiveTimeline.load(self.storage)
        live = self._live_partitions(FileSystemView(self.storage, timeline), set(partitions))
        for name in self.table_names():
            table = self._store.get_table(self.database, name)
            if table is None:
                raise SyncError(f"{self.database}.{name} is not in the metastore: sync it first")
            have = {p.values: p.location for p in self._store.list_partitions(self.database, name)}
            self._apply_partitions(table, live, set(), have, SyncResult())

    # ---- one Hive table

    def _sync_table(
        self,
        wanted: TableDefinition,
        current: TableDefinition | None,
        columns: tuple[Column, ...] | None,
        timeline: ActiveTimeline,
        view: FileSystemView,
        hold_back: set[str],
        result: SyncResult,
    ) -> None:
        full_name = f"{wanted.database}.{wanted.name}"
        if current is None:
            self._store.create_table(wanted)
            result.created.append(full_name)
            have: dict[tuple[str, ...], str] = {}
            candidates = {s.partition_path for s in view.latest_slices()}
        else:
            since = current.table_properties.get(LAST_COMMIT_TIME_SYNC)
            if since == wanted.table_properties[LAST_COMMIT_TIME_SYNC] and columns is None:
                return  # nothing committed since the last sync
            if columns is not None:
                self._store.update_columns(_with_columns(current, columns))
                result.columns_updated.append(full_name)
            changes = timeline_changes(timeline, since)
            candidates = changes.touched
            if not changes.complete:  # commits since the last sync were archived
                candidates |= {s.partition_path for s in view.latest_slices()}
            have = {
                p.values: p.location
                for p in self._store.list_partitions(wanted.database, wanted.name)
            }
            if not changes.complete:
                candidates |= self._folders_of(have.values())
        live = self._live_partitions(view, candidates)
        gone = candidates - set(live)
        self._apply_partitions(
            wanted, {p: live[p] for p in live if p not in hold_back}, gone, have, result
        )
        self._store.set_table_properties(wanted.database, wanted.name, _sync_properties(wanted))

    def _apply_partitions(
        self,
        table: TableDefinition,
        live: dict[str, str],
        gone: set[str],
        have: dict[tuple[str, ...], str],
        result: SyncResult,
    ) -> None:
        full_name = f"{table.database}.{table.name}"
        add, move = [], []
        for partition, location in sorted(live.items()):
            values = tuple(self.partition_values(partition))
            if values not in have:
                add.append(Partition(values, location))
            elif have[values] and have[values] != location:  # "": location not known
                move.append(Partition(values, location))
        drop = sorted(tuple(self.partition_values(p)) for p in gone)
        drop = [values for values in drop if values in have]
        if add:
            self._store.add_partitions(table, add)
        if move:
            self._store.set_partition_locations(table, move)
        if drop:
            self._store.drop_partitions(table, drop)
        result.partitions_added[full_name] = [p.location for p in add]
        result.partitions_updated[full_name] = [p.location for p in move]
        result.partitions_dropped[full_name] = ["/".join(v) for v in drop]

    # ---- helpers

    def _ensure_database(self) -> None:
        if self._store.database_exists(self.database):
            return
        if not self.options.get_option(HS.AUTO_CREATE_DATABASE):
            raise SyncError(
                f"database {self.database} does not exist in the metastore and "
                f"{HS.AUTO_CREATE_DATABASE.key} is false"
            )
        self._store.create_database(self.database)

    def _live_partitions(self, view: FileSystemView, partitions: set[str]) -> dict[str, str]:
        """The partitions among these that hold data now, with their locations."""
        if not self.partition_keys:  # a non-partitioned table has no Hive partitions
            return {}
        with_data = {s.partition_path for s in view.latest_slices(sorted(partitions))}
        return {p: self.storage.uri_of(p) for p in sorted(with_data & partitions)}

    def _folders_of(self, locations: Iterable[str]) -> set[str]:
        """The partition folders of metastore locations under this table."""
        folders = set()
        for location in locations:
            try:
                folders.add(self.storage.relative_of(location))
            except PathOutsideTableError:
                continue  # registered elsewhere by hand: not ours to judge
        return folders

    def _definition(
        self, kind: hive_formats.TableKind, schema: pa.Schema, synced_to: str
    ) -> TableDefinition:
        support_timestamp = self.options.get_option(HS.SUPPORT_TIMESTAMP)
        columns, keys = hive_columns(schema, self.partition_keys, support_timestamp)
        serde_properties = {"serialization.format": "1"}
        serde_properties.update(_pairs(self.options, HS.SERDE_PROPERTIES))
        table_properties = _pairs(self.options, HS.TABLE_PROPERTIES)
        if self.options.get_option(HS.SYNC_AS_DATASOURCE):
            serde_properties["path"] = self.storage.uri_of("")
            serde_properties[hive_formats.QUERY_AS_RO_TABLE] = str(kind.read_optimized).lower()
            table_properties.update(self._spark_properties(schema))
        table_properties[LAST_COMMIT_TIME_SYNC] = synced_to
        return TableDefinition(
            database=self.database,
            name=self.base_name + kind.suffix,
            columns=columns,
            partition_keys=keys,
            location=self.storage.uri_of(""),
            input_format=kind.input_format,
            output_format=hive_formats.OUTPUT_FORMAT,
            serde=hive_formats.SERDE,
            serde_properties=serde_properties,
            table_properties=table_properties,
        )

    def _spark_properties(self, schema: pa.Schema) -> dict[str, str]:
        text = spark_schema_json(schema, self.partition_keys)
        size = max(self.options.get_option(HS.SCHEMA_STRING_LENGTH_THRESHOLD), 1)
        parts = [text[i : i + size] for i in range(0, len(text), size)]
        props = {
            "spark.sql.sources.provider": "hudi",
            "spark.sql.sources.schema.numParts": str(len(parts)),
        }
        props.update({f"spark.sql.sources.schema.part.{i}": p for i, p in enumerate(parts)})
        if self.partition_keys:
            props["spark.sql.sources.schema.numPartCols"] = str(len(self.partition_keys))
            props.update(
                {
                    f"spark.sql.sources.schema.partCol.{i}": k
                    for i, k in enumerate(self.partition_keys)
                }
            )
        return props


def _with_columns(table: TableDefinition, columns: tuple[Column, ...]) -> TableDefinition:
    return TableDefinition(**{**table.__dict__, "columns": columns})


def _sync_properties(table: TableDefinition) -> dict[str, str]:
    return dict(table.table_properties)


def _pairs(options: Options, option: ConfigOption[str | None]) -> dict[str, str]:
    """`key=value` lines of a properties option (blank lines skipped)."""
    pairs = {}
    for line in (options.get_option(option) or "").splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip() or "=" in value:
            raise SyncError(f"option {option.key}: {line!r} is not key=value")
        pairs[name.strip()] = value.strip()
    return pairs
