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
        maintenance_schedule: "@daily"
        hive_sync_schedule: "@hourly"  # optional: the <name>_hive_sync DAG's (hive-sync tables)
        metastore_dir: /data/metastore # optional: spark-mode Hive sync's embedded metastore
        owner: data-engineering
        spark_conn_id: spark_default   # the Airflow connection of the Spark master
        result_dir: s3://bucket/tmp    # optional: where Spark jobs leave their result files
        retries: 2
        retry_delay_seconds: 60
        executor_memory: 2g            # optional: spark-submit's --executor-memory, and so on
        executor_cores: 2
        driver_memory: 1g
        num_executors: 4
        spark_conf:                    # optional: any spark.* setting, as --conf key=value
          spark.sql.shuffle.partitions: 8
        options:                       # optional: any hoodie.* option
          hoodie.compact.inline.max.delta.commits: "3"
          hoodie.datasource.hive_sync.enable: true   # Hive sync (mode spark by default)

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
A bad entry gets a message naming the entry and the key. `read_tables` keeps the good entries
and reports each bad one apart (the DAG factory builds the good tables' DAGs, and
dags/hudi_tables_check.py turns the bad entries into an import error in the Airflow UI; the
Hudi view shows each beside the others); `load_tables` refuses a file with any bad entry. A
file that cannot be read as a list of entries at all fails both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hudi_core import TableType
from hudi_core.config import Options
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
    "source_path",
    "source_format",
)
OPTIONAL = (
    "partition_path_field",
    "schedule",
    "compaction_schedule",
    "maintenance_schedule",
    "hive_sync_schedule",
    "metastore_dir",
    "owner",
    "spark_conn_id",
    "result_dir",
    "retries",
    "retry_delay_seconds",
    "executor_memory",
    "executor_cores",
    "driver_memory",
    "num_executors",
    "spark_conf",
    "options",
)
COUNTS = ("retries", "retry_delay_seconds")
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
OPTIONAL_PATHS = ("metastore_dir", "result_dir")
# Keys `options` may hold: Apache Hudi's, and the partition commit options.
# hoodie.* options, Flink-style partition commit options, and Hadoop-style storage options
# (fs.s3a.endpoint, ...: see docs/storage.md).
OPTION_PREFIXES = ("hoodie.", "sink.partition-commit.", "partition.time-extractor.", "fs.")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


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
class TableEntry:
    """One table of the config file."""

    name: str
    base_path: str
    table_type: str
    record_key_field: str
    precombine_field: str
    source_path: str
    source_format: str
    partition_path_field: str | None = None  # comma-separated; None: non-partitioned
    schedule: str | None = None  # the ingest DAG's; None: triggered by hand only
    compaction_schedule: str | None = "@hourly"
    maintenance_schedule: str | None = "@daily"
    hive_sync_schedule: str | None = "@hourly"  # the <name>_hive_sync DAG's (hive-sync tables)
    metastore_dir: str | None = None  # spark-mode Hive sync's metastore; None: Spark's default
    owner: str = "data-engineering"
    spark_conn_id: str = "spark_default"  # the Airflow connection of the Spark master
    result_dir: str | None = None  # the Spark jobs' result files; None: a temporary folder
    retries: int = 2
    retry_delay_seconds: int = 60
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
    seen: set[str] = set()
    for number, raw in enumerate(document["tables"], 1):
        try:
            entry = _entry(path, number, raw)
            _require_unique(path, number, entry, seen)
        except TablesConfigError as exc:
            name = raw.get("name") if isinstance(raw, dict) else None
            items.append(EntryError(number, name if isinstance(name, str) else None, str(exc)))
        else:
            seen.add(entry.name)
            items.append(entry)
    return TablesFile(path, tuple(items))


def _entry(path: Path, number: int, raw: Any) -> TableEntry:
    where = f"{path}: table entry #{number}"
    if not isinstance(raw, dict):
        raise TablesConfigError(f"{where}: must be a mapping of keys, not {type(raw).__name__}")
    if isinstance(raw.get("name"), str):
        where = f"{where} ('{raw['name']}')"
    for key in REQUIRED:
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            raise TablesConfigError(f"{where}: key '{key}' is required and must be a string")
    unknown = sorted(set(raw) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        allowed = ", ".join(REQUIRED + OPTIONAL)
        raise TablesConfigError(f"{where}: unknown key '{unknown[0]}' (known keys: {allowed})")
    values = {key: raw[key].strip() for key in REQUIRED}
    for key in PATHS:
        values[key] = _resolved(path, values[key])
    _check_choices(where, values)
    optional = {key: _optional(where, key, raw[key]) for key in OPTIONAL if key in raw}
    _check_spark_duplicates(where, optional)
    for key in OPTIONAL_PATHS:
        if optional.get(key) is not None:
            optional[key] = _resolved(path, optional[key].strip())
    entry = TableEntry(**values, **optional)
    _check_sync_options(where, entry)
    return entry


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
    return {str(k): _option_text(v) for k, v in value.items()}


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


def _require_unique(path: Path, number: int, entry: TableEntry, seen: set[str]) -> None:
    """A repeated name would name the same DAGs twice: the later entry is the bad one."""
    if entry.name in seen:
        raise TablesConfigError(
            f"{path}: table entry #{number} ('{entry.name}'): key 'name' repeats an "
            "earlier entry's name"
        )


def find_table(name: str, path: str | Path | None = None) -> TableEntry:
    for entry in load_tables(path):
        if entry.name == name:
            return entry
    raise TablesConfigError(f"no table named '{name}' in {path or config_path()}")
