"""The table configs DAGs are generated from: one YAML file (`tables.yaml` in Airflow's DAGs
folder, or the file the HUDI_TABLES_CONFIG environment variable names) holding `tables:` and a
list of entries.

    tables:
      - name: trips
        base_path: /data/lake/trips
        table_type: MERGE_ON_READ
        record_key_field: uuid
        partition_path_field: city    # optional: absent, null, "" or []: non-partitioned
        precombine_field: ts
        source_path: /data/landing/trips
        source_format: parquet
        schedule: "@hourly"            # optional: the ingest DAG's schedule
        compaction_schedule: "@hourly" # optional (these are the defaults)
        clustering_schedule: "@daily"  # optional: absent, no <name>_clustering DAG
        bootstrap_source_path: /data/warehouse/trips  # optional: absent, no <name>_bootstrap DAG
        maintenance_schedule: "@daily"
        hive_sync_schedule: "@hourly"  # optional: the <name>_hive_sync DAG's (hive-sync tables)
        metastore_dir: /data/metastore # optional: spark-mode Hive sync's embedded metastore
        owner: data-engineering
        spark_conn_id: spark_default   # the Airflow connection of the Spark master
        result_dir: s3://bucket/tmp    # optional: where Spark jobs leave their result files
        retries: 2
        retry_delay_seconds: 60
        max_files_in_worker: 1000      # a clean of at most this many files runs in the worker
        max_file_groups_in_worker: 8   # a compaction of at most this many too (and <= 64 MB)
        executor_memory: 2g            # optional: spark-submit's --executor-memory, and so on
        executor_cores: 2
        driver_memory: 1g
        num_executors: 4
        spark_conf:                    # optional: any spark.* setting, as --conf key=value
          spark.sql.shuffle.partitions: 8
        options:                       # optional: any hoodie.* option
          hoodie.compact.inline.max.delta.commits: "3"
          hoodie.datasource.hive_sync.enable: true   # Hive sync (mode spark by default)

A table several ingestion streams write (each its own group of columns of the same rows, a
multi-stream wide table) lists `sources` instead of `source_path` and `source_format`:

      - name: profiles
        ...                            # as above, without source_path and source_format
        precombine_field: "_ts1:name,price;_ts2:age"
        sources:                       # one <name>_ingest_<source> DAG each
          - name: orders               # letters, digits and '_'; unique within the table
            source_path: /data/landing/orders
            source_format: json
            schedule: "@hourly"        # optional: absent, the table's `schedule`; null: manual
            columns: [name, price, _ts1]  # optional: the batch is narrowed to the record key
                                          # and partition fields and these (absent: all)
          - name: users
            source_path: /data/landing/users
            source_format: parquet

Each source is ingested by its own DAG on its own schedule, with its own checkpoint (kept in
the commits it writes under the source's name, see spark_jobs/ingest.py) and its own log
file suffix (hoodie.write.log.suffix: the name, '_' written '-'); the table's compaction,
maintenance and Hive sync DAGs, its options and lock stay one per table. An entry gives
either `source_path` and `source_format` (one `<name>_ingest` DAG, as always) or `sources`,
not both. No DAG id may be two tables' (table `a` with a source `x_maintenance` would
spell table `a_ingest_x`'s maintenance DAG): the later entry is the bad one.

A table fed by another table of the file (an incremental pipeline: raw -> cleaned ->
aggregated) names it in `upstream_table` instead of `source_path` and `source_format`:

      - name: cleaned
        ...                            # as above, without source_path and source_format
        upstream_table: trips          # another entry's name: its base_path is the source
        transformer_sql: >-            # optional: `<SRC>` stands for each round's rows
          SELECT uuid, city, ts, fare * 1.1 AS fare_eur FROM <SRC> WHERE fare IS NOT NULL

Its `<name>_ingest` DAG waits (a deferrable sensor) for a commit of the upstream table newer
than the checkpoint of its own last commit, then ingests the upstream's commits since that
checkpoint (spark_jobs/ingest.py --source-format hudi, as Apache Hudi's HoodieIncrSource),
rewritten by `transformer_sql` (Apache Hudi's SqlQueryBasedTransformer; it may also rewrite
a `source_path` table's files). An upstream table that is not in the file (or is a bad entry),
the table itself, a chain that loops back, or `upstream_table` beside `source_path`,
`source_format` or `sources` make the entry bad.

`bootstrap_source_path` names an existing parquet dataset the table is made of once, by the
manually triggered `<name>_bootstrap` DAG (spark_jobs/bootstrap.py: skeleton files referencing
the source files, or the files rewritten, as the options' hoodie.bootstrap.mode.selector
says); the table must not have commits yet, so bootstrap before the first ingestion.

`partition_path_field` names the partition field, or several (comma-separated, or a list);
without any the table is non-partitioned (NonpartitionedKeyGenerator). The Spark settings go
to every Spark job of the table (ingest, compaction, clean, archive, Hive sync); a setting
may be given once, as a convenience key or in `spark_conf`, not both.

`options` take hoodie.* options and the partition commit options (sink.partition-commit.*,
partition.time-extractor.*). A table syncs to Hive (see `TableEntry.syncs_to_hive`) when
they enable the Hive sync or name partition commit policies; its DAGs then sync after every
write, and `<name>_hive_sync` syncs on `hive_sync_schedule`. `metastore_dir` is where spark
mode keeps its embedded Derby metastore (default: Spark's, metastore_db in the working
directory of the job's driver). `result_dir` is a folder both the Spark driver and the Airflow
workers reach, where jobs leave their results for the operators (default: a temporary folder
on the worker, which does while drivers run in client mode, spark-submit's default).

Paths may use environment variables; relative paths are taken from the file's folder.
A bad entry gets a message naming the entry and the key (and, in `sources`, the source's
number and name: "table entry #1 ('profiles'): key 'sources' #2 ('users'): key
'source_path' is required ..."). `read_tables` keeps the good entries
and reports each bad one apart (the DAG factory builds the good tables' DAGs, and
dags/hudi_tables_check.py turns the bad entries into an import error in the Airflow UI; the
Hudi view shows each beside the others); `load_tables` refuses a file with any bad entry. A
file that cannot be read as a list of entries at all fails both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from hudi_core import TableType
from hudi_core.config import Options, check_options
from hudi_core.config import hive_sync_options as HS
from hudi_core.errors import HudiError
from hudi_core.sync import commit_policies

CONFIG_ENV = "HUDI_TABLES_CONFIG"
CONFIG_NAME = "tables.yaml"  # in Airflow's DAGs folder, unless HUDI_TABLES_CONFIG says otherwise
TABLE_TYPES = tuple(TableType)
SOURCE_FORMATS = ("json", "csv", "parquet", "avro")
REQUIRED = (
    "name",
    "base_path",
    "table_type",
    "record_key_field",
    "precombine_field",
)
# The one source of a table without `sources`: required then, refused beside `sources`.
SINGLE_SOURCE = ("source_path", "source_format")
OPTIONAL = (
    "sources",
    "upstream_table",
    "transformer_sql",
    "partition_path_field",
    "schedule",
    "compaction_schedule",
    "clustering_schedule",
    "bootstrap_source_path",
    "maintenance_schedule",
    "hive_sync_schedule",
    "metastore_dir",
    "owner",
    "spark_conn_id",
    "result_dir",
    "retries",
    "retry_delay_seconds",
    "max_files_in_worker",
    "max_file_groups_in_worker",
    "executor_memory",
    "executor_cores",
    "driver_memory",
    "num_executors",
    "spark_conf",
    "options",
)
COUNTS = ("retries", "retry_delay_seconds", "max_files_in_worker", "max_file_groups_in_worker")
# SparkSubmitOperator's own arguments, and the Spark setting each one stands for.
SPARK_ARGUMENTS = {
    "executor_memory": "spark.executor.memory",
    "executor_cores": "spark.executor.cores",
    "driver_memory": "spark.driver.memory",
    "num_executors": "spark.executor.instances",
}
SPARK_COUNTS = ("executor_cores", "num_executors")
_MEMORY = re.compile(r"^[0-9]+([kmgtp]b?)?$", re.IGNORECASE)  # Spark's sizes: 512m, 2g, 4gb
PATHS = ("base_path", "source_path")
# The keys of one item of `sources`.
SOURCE_REQUIRED = ("name", "source_path", "source_format")
SOURCE_OPTIONAL = ("schedule", "columns")
OPTIONAL_PATHS = ("metastore_dir", "result_dir", "bootstrap_source_path")
# Keys `options` may hold: Apache Hudi's, and the partition commit options.
# hoodie.* options, Flink-style partition commit options, and Hadoop-style storage options
# (fs.s3a.endpoint, ...: see docs/storage.md).
OPTION_PREFIXES = ("hoodie.", "sink.partition-commit.", "partition.time-extractor.", "fs.")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
HUDI_SOURCE = "hudi"  # the source format of a table fed by its `upstream_table`
SRC = "<SRC>"  # what a transformer query names the round's rows by
_SOURCE_NAME = re.compile(r"^[A-Za-z0-9_]+$")


class TablesConfigError(ValueError):
    """The tables file, or one of its entries, is not what DAGs can be generated from."""


@dataclass(frozen=True)
class EntryError:
    """A table entry that cannot be used, and why (the message names the file, the entry's
    number and name, and the key)."""

    number: int  # 1-based, in file order
    name: str | None  # the entry's name, when it has a usable one
    message: str


@dataclass(frozen=True)
class SourceEntry:
    """One of the `sources` of a table several ingestion streams write."""

    name: str  # letters, digits and '_': the DAG <table>_ingest_<name>, the checkpoint's id
    source_path: str
    source_format: str
    schedule: str | None = None  # its ingest DAG's (the table's unless it gave its own)
    columns: tuple[str, ...] | None = None  # its group's columns; None: every column

    @property
    def log_suffix(self) -> str:
        """Its writes' hoodie.write.log.suffix: the name, '_' written '-' (a log suffix holds
        letters, digits and '-'; names have no '-', so two names never give one suffix)."""
        return self.name.replace("_", "-")


@dataclass(frozen=True)
class TableEntry:
    """One table of the config file: one source (`source_path`, `source_format`), several
    (`sources`), or another table of the file (`upstream_table`: then `source_path` is its
    base path and `source_format` hudi, once the file is read)."""

    name: str
    base_path: str
    table_type: str
    record_key_field: str
    precombine_field: str
    source_path: str | None = None  # None when the table has `sources`
    source_format: str | None = None
    sources: tuple[SourceEntry, ...] = ()  # a multi-source table's; () for one source_path
    upstream_table: str | None = None  # the entry whose commits feed this table
    transformer_sql: str | None = None  # rewrites each ingest round's rows (`<SRC>`: them)
    partition_path_field: str | None = None  # comma-separated; None: non-partitioned
    schedule: str | None = None  # the ingest DAG's (the sources' default); None: by hand only
    compaction_schedule: str | None = "@hourly"
    clustering_schedule: str | None = None  # the <name>_clustering DAG's; None: no such DAG
    bootstrap_source_path: str | None = None  # a <name>_bootstrap DAG's dataset; None: no DAG
    maintenance_schedule: str | None = "@daily"
    hive_sync_schedule: str | None = "@hourly"  # the <name>_hive_sync DAG's (hive-sync tables)
    metastore_dir: str | None = None  # spark-mode Hive sync's metastore; None: Spark's default
    owner: str = "data-engineering"
    spark_conn_id: str = "spark_default"  # the Airflow connection of the Spark master
    result_dir: str | None = None  # the Spark jobs' result files; None: a temporary folder
    retries: int = 2
    retry_delay_seconds: int = 60
    # The largest clean (files) and compaction (file groups) the Airflow worker runs itself,
    # without Spark (0: every one goes to Spark); see hudi_airflow.operators.
    max_files_in_worker: int = 1000
    max_file_groups_in_worker: int = 8
    executor_memory: str | None = None
    executor_cores: int | None = None
    driver_memory: str | None = None
    num_executors: int | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)  # spark.* settings
    options: dict[str, str] = field(default_factory=dict)

    @property
    def is_partitioned(self) -> bool:
        return self.partition_path_field is not None

    @property
    def has_upstream(self) -> bool:
        """Whether another table of the file feeds this one (`upstream_table`)."""
        return self.upstream_table is not None

    @property
    def has_sources(self) -> bool:
        """Whether several named sources (`sources`) feed the table, each its own DAG."""
        return bool(self.sources)

    @property
    def dag_ids(self) -> list[str]:
        """The ids of the DAGs the table gets: `<name>_ingest` (or `<name>_ingest_<source>`
        for each source), `<name>_compaction` (merge-on-read), `<name>_clustering` (with a
        `clustering_schedule`), `<name>_maintenance`, `<name>_hive_sync` (Hive sync
        tables) and `<name>_bootstrap` (with a `bootstrap_source_path`)."""
        if self.has_sources:
            kinds = [f"ingest_{source.name}" for source in self.sources]
        else:
            kinds = ["ingest"]
        if self.is_merge_on_read:
            kinds.append("compaction")
        if self.clustering_schedule is not None:
            kinds.append("clustering")
        kinds.append("maintenance")
        if self.syncs_to_hive:
            kinds.append("hive_sync")
        if self.bootstrap_source_path is not None:
            kinds.append("bootstrap")
        return [f"{self.name}_{kind}" for kind in kinds]

    @property
    def is_merge_on_read(self) -> bool:
        return self.table_type == TableType.MERGE_ON_READ

    @property
    def syncs_to_hive(self) -> bool:
        """Whether the options ask for what spark_jobs/hive_sync.py does, read as it reads
        them: the Hive sync (hoodie.datasource.hive_sync.enable true, or when that is unset
        hoodie.datasource.meta.sync.enable) or partition commit
        (sink.partition-commit.policy.kind not empty)."""
        options = Options(self.options)
        return bool(options.get_option(HS.ENABLE) or commit_policies(options))

    def hoodie_options(self) -> dict[str, str]:
        """The table-defining options, then the entry's own `options` on top."""
        defining = {
            "hoodie.table.name": self.name,
            "hoodie.datasource.write.table.type": self.table_type,
            "hoodie.datasource.write.recordkey.field": self.record_key_field,
            "hoodie.datasource.write.precombine.field": self.precombine_field,
        }
        if self.partition_path_field is not None:
            defining["hoodie.datasource.write.partitionpath.field"] = self.partition_path_field
        return {**defining, **self.options}

    def spark_submit_arguments(self) -> dict[str, Any]:
        """SparkSubmitOperator's arguments for the table's Spark jobs: `conf` and the
        convenience keys the entry sets."""
        arguments: dict[str, Any] = {"conf": dict(self.spark_conf)} if self.spark_conf else {}
        for key in SPARK_ARGUMENTS:
            if getattr(self, key) is not None:
                arguments[key] = getattr(self, key)
        return arguments


def config_path() -> Path:
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    from airflow.configuration import conf

    return Path(conf.get("core", "dags_folder")) / CONFIG_NAME


@dataclass(frozen=True)
class TablesFile:
    """The tables file read entry by entry: each entry valid (a TableEntry) or not (an
    EntryError), in file order."""

    path: Path
    items: tuple[TableEntry | EntryError, ...]

    @property
    def entries(self) -> list[TableEntry]:
        return [item for item in self.items if isinstance(item, TableEntry)]

    @property
    def errors(self) -> list[EntryError]:
        return [item for item in self.items if isinstance(item, EntryError)]


def load_tables(path: str | Path | None = None) -> list[TableEntry]:
    """Every entry of the tables file (by default `config_path()`), validated: a
    TablesConfigError for the first bad one."""
    tables = read_tables(path)
    if tables.errors:
        raise TablesConfigError(tables.errors[0].message)
    return tables.entries


def read_tables(path: str | Path | None = None) -> TablesFile:
    """The tables file (by default `config_path()`) entry by entry: one bad entry does not
    hide the others. A TablesConfigError when the file is no list of entries at all."""
    path = Path(path) if path is not None else config_path()
    try:
        document = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise TablesConfigError(f"{path}: cannot read the tables file: {exc}") from exc
    except yaml.YAMLError as exc:
        raise TablesConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("tables"), list):
        raise TablesConfigError(f"{path}: must hold 'tables:' followed by a list of entries")
    items: list[TableEntry | EntryError] = []
    seen: dict[str, TableEntry] = {}  # the good entries' DAG ids
    for number, raw in enumerate(document["tables"], 1):
        try:
            entry = _entry(path, number, raw)
            _require_unique(path, number, entry, seen)
        except TablesConfigError as exc:
            name = raw.get("name") if isinstance(raw, dict) else None
            items.append(EntryError(number, name if isinstance(name, str) else None, str(exc)))
        else:
            seen.update((dag_id, entry) for dag_id in entry.dag_ids)
            items.append(entry)
    return TablesFile(path, _with_upstreams(path, items))


def _with_upstreams(
    path: Path, items: list[TableEntry | EntryError]
) -> tuple[TableEntry | EntryError, ...]:
    """The entries naming an `upstream_table`, given its base path as their source (format
    hudi); an EntryError for those whose chain of upstreams meets an unknown or bad entry, or
    loops back."""
    good = {item.name: item for item in items if isinstance(item, TableEntry)}
    bad = {item.name for item in items if isinstance(item, EntryError) and item.name}
    resolved: list[TableEntry | EntryError] = []
    for number, item in enumerate(items, 1):
        if isinstance(item, TableEntry) and item.upstream_table is not None:
            try:
                item = _chained(path, number, item, good, bad)
            except TablesConfigError as exc:
                item = EntryError(number, item.name, str(exc))
        resolved.append(item)
    return tuple(resolved)


def _chained(
    path: Path, number: int, entry: TableEntry, good: dict[str, TableEntry], bad: set[str]
) -> TableEntry:
    where = f"{path}: table entry #{number} ('{entry.name}'): key 'upstream_table'"
    if entry.upstream_table == entry.name:
        raise TablesConfigError(
            f"{where} names the table itself; name the table whose commits feed it"
        )
    chain = [entry.name]
    upstream_name = entry.upstream_table
    while upstream_name is not None:
        upstream = good.get(upstream_name)
        if upstream_name in chain:
            loop = " -> ".join([*chain, upstream_name])
            raise TablesConfigError(f"{where}: the chain of upstream tables loops: {loop}")
        if upstream is None:
            why = "is a bad entry (see its error)" if upstream_name in bad else "is not in the file"
            link = "" if len(chain) == 1 else f" (its chain: {' -> '.join(chain)})"
            raise TablesConfigError(
                f"{where}: table '{upstream_name}'{link} {why}; known tables: "
                f"{', '.join(sorted(good)) or 'none'}"
            )
        chain.append(upstream_name)
        upstream_name = upstream.upstream_table
    upstream = good[chain[1]]
    return replace(entry, source_path=upstream.base_path, source_format=HUDI_SOURCE)


def _entry(path: Path, number: int, raw: Any) -> TableEntry:
    where = f"{path}: table entry #{number}"
    if not isinstance(raw, dict):
        raise TablesConfigError(f"{where}: must be a mapping of keys, not {type(raw).__name__}")
    if isinstance(raw.get("name"), str):
        where = f"{where} ('{raw['name']}')"
    _check_source_keys(where, raw)
    required = REQUIRED if "sources" in raw or "upstream_table" in raw else REQUIRED + SINGLE_SOURCE
    for key in required:
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            raise TablesConfigError(f"{where}: key '{key}' is required and must be a string")
    unknown = sorted(set(raw) - set(REQUIRED) - set(SINGLE_SOURCE) - set(OPTIONAL))
    if unknown:
        allowed = ", ".join(REQUIRED + SINGLE_SOURCE + OPTIONAL)
        raise TablesConfigError(f"{where}: unknown key '{unknown[0]}' (known keys: {allowed})")
    values = {key: raw[key].strip() for key in required}
    for key in PATHS:
        if key in values:
            values[key] = _resolved(path, values[key])
    _check_choices(where, values)
    optional = {
        key: _optional(where, key, raw[key]) for key in OPTIONAL if key in raw and key != "sources"
    }
    _check_chain_keys(where, optional)
    _check_spark_duplicates(where, optional)
    for key in OPTIONAL_PATHS:
        if optional.get(key) is not None:
            optional[key] = _resolved(path, optional[key].strip())
    if "sources" in raw:
        optional["sources"] = _sources(path, where, raw["sources"], optional.get("schedule"))
    entry = TableEntry(**values, **optional)
    _check_sync_options(where, entry)
    return entry


def _check_source_keys(where: str, raw: dict) -> None:
    """One kind of source: `source_path` and `source_format`, `sources` or `upstream_table`."""
    if "sources" in raw:
        for key in SINGLE_SOURCE:
            if key in raw:
                raise TablesConfigError(
                    f"{where}: keys '{key}' and 'sources' do not go together: a table has one "
                    f"source ('source_path', 'source_format') or several ('sources', each "
                    f"with its own '{key}')"
                )
    if "sources" in raw and "transformer_sql" in raw:
        raise TablesConfigError(
            f"{where}: key 'transformer_sql' goes with 'source_path' or 'upstream_table', "
            "not 'sources'"
        )
    if "upstream_table" in raw:
        for key in (*SINGLE_SOURCE, "sources"):
            if key in raw:
                raise TablesConfigError(
                    f"{where}: keys 'upstream_table' and '{key}' do not go together: the "
                    "upstream table's commits are the source (its base path, format hudi)"
                )


def _check_chain_keys(where: str, optional: dict[str, Any]) -> None:
    """`upstream_table` names a table; `transformer_sql` is a query reading `<SRC>`."""
    upstream = optional.get("upstream_table")
    if "upstream_table" in optional and (upstream is None or not upstream.strip()):
        raise TablesConfigError(f"{where}: key 'upstream_table' must name a table of the file")
    if upstream is not None:
        optional["upstream_table"] = upstream.strip()
    sql = optional.get("transformer_sql")
    if sql is not None and SRC not in sql:
        raise TablesConfigError(
            f"{where}: key 'transformer_sql' must read {SRC}, the rows each round ingests "
            f'("SELECT ... FROM {SRC}"), not {sql.strip()!r}'
        )


def _sources(
    config_file: Path, where: str, value: Any, table_schedule: str | None
) -> tuple[SourceEntry, ...]:
    """The `sources` of a multi-source table: a non-empty list of mappings, names unique."""
    if not isinstance(value, list) or not value:
        raise TablesConfigError(
            f"{where}: key 'sources' must be a non-empty list of sources, each a mapping with "
            f"{', '.join(SOURCE_REQUIRED)} (optional: {', '.join(SOURCE_OPTIONAL)})"
        )
    sources: list[SourceEntry] = []
    for number, raw in enumerate(value, 1):
        source = _source(config_file, f"{where}: key 'sources' #{number}", raw, table_schedule)
        for earlier, other in enumerate(sources, 1):
            if other.name == source.name:
                raise TablesConfigError(
                    f"{where}: key 'sources' #{number} ('{source.name}'): key 'name' repeats "
                    f"source #{earlier}'s name (each source has its own DAG and checkpoint)"
                )
        sources.append(source)
    return tuple(sources)


def _source(config_file: Path, where: str, raw: Any, table_schedule: str | None) -> SourceEntry:
    if not isinstance(raw, dict):
        raise TablesConfigError(f"{where}: must be a mapping of keys, not {type(raw).__name__}")
    if isinstance(raw.get("name"), str):
        where = f"{where} ('{raw['name']}')"
    for key in SOURCE_REQUIRED:
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            raise TablesConfigError(f"{where}: key '{key}' is required and must be a string")
    unknown = sorted(set(raw) - set(SOURCE_REQUIRED) - set(SOURCE_OPTIONAL))
    if unknown:
        allowed = ", ".join(SOURCE_REQUIRED + SOURCE_OPTIONAL)
        raise TablesConfigError(f"{where}: unknown key '{unknown[0]}' (a source's keys: {allowed})")
    name = raw["name"].strip()
    if not _SOURCE_NAME.match(name):
        raise TablesConfigError(
            f"{where}: key 'name' must hold only letters, digits and '_' (it names the "
            f"source's DAG and checkpoint), not '{name}'"
        )
    source_format = raw["source_format"].strip().lower()
    if source_format not in SOURCE_FORMATS:
        raise TablesConfigError(
            f"{where}: key 'source_format' must be one of {', '.join(SOURCE_FORMATS)}, "
            f"not '{source_format}'"
        )
    schedule = raw.get("schedule", table_schedule)
    if schedule is not None and not isinstance(schedule, str):
        raise TablesConfigError(f"{where}: key 'schedule' must be a string or null")
    return SourceEntry(
        name=name,
        source_path=_resolved(config_file, raw["source_path"].strip()),
        source_format=source_format,
        schedule=schedule,
        columns=_columns(where, raw.get("columns")),
    )


def _columns(where: str, value: Any) -> tuple[str, ...] | None:
    """A source's columns: a list of names or one comma-separated string; None (absent or
    null) for every column of its drops."""
    if value is None:
        return None
    parts = value if isinstance(value, list) else [value]
    names: list[str] = []
    for part in parts:
        if not isinstance(part, str):
            raise TablesConfigError(
                f"{where}: key 'columns' must be a list of column names (or null: every "
                f"column), not holding {part!r}"
            )
        names += [name.strip() for name in part.split(",") if name.strip()]
    if not names:
        raise TablesConfigError(
            f"{where}: key 'columns' names no column; leave it out (or null) for every column"
        )
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise TablesConfigError(f"{where}: key 'columns' names '{repeated[0]}' twice")
    return tuple(names)


def _resolved(config_file: Path, location: str) -> str:
    """Environment variables and ~ expanded; a relative local path is taken from the tables
    file's folder (URIs such as s3://... stay as they are)."""
    location = os.path.expanduser(os.path.expandvars(location))
    if "://" in location or os.path.isabs(location):
        return location
    return str((config_file.resolve().parent / location).resolve())


def _check_choices(where: str, values: dict[str, str]) -> None:
    if not _NAME.match(values["name"]):
        raise TablesConfigError(
            f"{where}: key 'name' must start with a letter and hold only letters, digits and "
            f"'_' (it names DAGs), not '{values['name']}'"
        )
    values["table_type"] = values["table_type"].upper()
    if values["table_type"] not in TABLE_TYPES:
        raise TablesConfigError(
            f"{where}: key 'table_type' must be one of {', '.join(TABLE_TYPES)}, "
            f"not '{values['table_type']}'"
        )
    if "source_format" not in values:  # a table with `sources`: each checks its own
        return
    values["source_format"] = values["source_format"].lower()
    if values["source_format"] not in SOURCE_FORMATS:
        raise TablesConfigError(
            f"{where}: key 'source_format' must be one of {', '.join(SOURCE_FORMATS)}, "
            f"not '{values['source_format']}'"
        )


def _check_sync_options(where: str, entry: TableEntry) -> None:
    """The options that decide whether the table syncs to Hive must parse."""
    try:
        _ = entry.syncs_to_hive
    except HudiError as exc:
        raise TablesConfigError(f"{where}: key 'options': {exc}") from exc


def _optional(where: str, key: str, value: Any) -> Any:
    if key == "partition_path_field":
        return _partition_fields(where, value)
    if key in SPARK_ARGUMENTS:
        return _spark_argument(where, key, value)
    if key == "spark_conf":
        return _spark_conf(where, value)
    if key in COUNTS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TablesConfigError(f"{where}: key '{key}' must be a whole number >= 0")
        return value
    if key != "options":
        if value is not None and not isinstance(value, str):
            raise TablesConfigError(f"{where}: key '{key}' must be a string or null")
        if key in OPTIONAL_PATHS and value is not None and not value.strip():
            raise TablesConfigError(f"{where}: key '{key}' must be a path or null, not empty")
        return value
    if not isinstance(value, dict):
        raise TablesConfigError(f"{where}: key 'options' must be a mapping of hoodie.* options")
    for option in value:
        if not str(option).startswith(OPTION_PREFIXES):
            raise TablesConfigError(
                f"{where}: key 'options' holds '{option}', which is neither a hoodie.* option, "
                "a partition commit option (sink.partition-commit.*, partition.time-extractor.*) "
                "nor a storage option (fs.*)"
            )
    options = {str(k): _option_text(v) for k, v in value.items()}
    try:
        check_options(options)
    except HudiError as exc:
        raise TablesConfigError(f"{where}: key 'options': {exc}") from exc
    return options


def _partition_fields(where: str, value: Any) -> str | None:
    """The partition fields as the ingest job takes them (comma-separated); None when there
    are none (absent, null, "" or []): a non-partitioned table."""
    names: list[str] = []
    for part in value if isinstance(value, list) else [] if value is None else [value]:
        if not isinstance(part, str):
            raise TablesConfigError(
                f"{where}: key 'partition_path_field' must be a field name, a comma-separated "
                "list of them, a list of them, or null (non-partitioned)"
            )
        names += [name.strip() for name in part.split(",") if name.strip()]
    return ",".join(names) or None


def _spark_argument(where: str, key: str, value: Any) -> str | int | None:
    if value is None:
        return None
    if key in SPARK_COUNTS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TablesConfigError(f"{where}: key '{key}' must be a whole number >= 1 or null")
        return value
    text = str(value).strip() if isinstance(value, (str, int)) else ""
    if isinstance(value, bool) or not _MEMORY.match(text):
        raise TablesConfigError(
            f"{where}: key '{key}' must be a Spark memory size such as 512m or 2g, not {value!r}"
        )
    return text


def _spark_conf(where: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TablesConfigError(f"{where}: key 'spark_conf' must be a mapping of spark.* settings")
    for key, setting in value.items():
        if not isinstance(key, str) or not key.startswith("spark.") or key == "spark.":
            raise TablesConfigError(
                f"{where}: key 'spark_conf' holds {key!r}, which is not a spark.* setting"
            )
        if setting is None or isinstance(setting, (dict, list)):
            raise TablesConfigError(
                f"{where}: key 'spark_conf' setting '{key}' must be a string, number or "
                f"boolean, not {type(setting).__name__}"
            )
    return {key: _option_text(setting) for key, setting in value.items()}


def _check_spark_duplicates(where: str, optional: dict[str, Any]) -> None:
    """A convenience key and its spark.* setting together would leave spark-submit to pick."""
    conf = optional.get("spark_conf", {})
    for key, setting in SPARK_ARGUMENTS.items():
        if optional.get(key) is not None and setting in conf:
            raise TablesConfigError(
                f"{where}: key '{key}' and spark_conf '{setting}' set the same thing; keep one"
            )


def _option_text(value: Any) -> str:
    """Options as Apache Hudi's properties hold them: text ('true', not True)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _require_unique(
    path: Path, number: int, entry: TableEntry, seen: dict[str, TableEntry]
) -> None:
    """A repeated name would name the same DAGs twice, and so would a DAG id another table's
    name and source happen to spell too (table 'a' with source 'x_compaction' and table
    'a_ingest_x'): the later entry is the bad one."""
    where = f"{path}: table entry #{number} ('{entry.name}')"
    if any(other.name == entry.name for other in seen.values()):
        raise TablesConfigError(f"{where}: key 'name' repeats an earlier entry's name")
    for dag_id in entry.dag_ids:
        if dag_id in seen:
            by_source = dag_id.startswith(f"{entry.name}_ingest_") and entry.has_sources
            key = "sources" if by_source else "name"
            raise TablesConfigError(
                f"{where}: key '{key}': its DAG '{dag_id}' is a DAG of the earlier table "
                f"'{seen[dag_id].name}' too; rename the table or the source"
            )


def find_table(name: str, path: str | Path | None = None) -> TableEntry:
    for entry in load_tables(path):
        if entry.name == name:
            return entry
    raise TablesConfigError(f"no table named '{name}' in {path or config_path()}")
