"""`spark.read.format("hudi")` and `df.write.format("hudi")` on hudi_core.

Reading is a Python data source: one Spark partition per file slice, each read by hudi_core
on an executor (snapshot, read-optimized, incremental, time travel, with Apache Hudi's option
names); filters on partition columns prune slices before any is read.

Spark (4.x) keeps the slices planned for a DataFrame's last filtered query and reuses them for
a later query of the same DataFrame that has no filter at all (PythonDataSourceV2 caches its
read info, and filter pushdown is what refreshes it). So that a pruned plan never outlives its
query, DataFrames loaded through `register()`-ed readers carry an always-true filter (the
commit time, or the first record key field, is not null): every query then has a filter, and
its slices are planned afresh.

Writing needs a shuffle the Python data source API cannot ask for (rows must reach their file
group's task), so `register()` also routes `df.write.format("hudi")...save(path)` to the
SparkWriter in the calling process, which plans the write on the driver and runs it on the
executors. Modes as Apache Hudi's: append writes, overwrite replaces the table, ignore
leaves an existing table alone, errorifexists (Spark's default) refuses one.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, DataFrameReader, DataFrameWriter, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from hudi_core.config import table_options as T
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.config.table_config import PROPERTIES_FILE
from hudi_core.errors import HudiError, InvalidOptionError, TableExistsError
from hudi_core.read.reader import ReadPlan, TableReader, read_request
from hudi_core.schema.meta_fields import COMMIT_TIME_FIELD
from hudi_core.storage import Storage
from hudi_core.table import HudiTable
from spark_jobs.writer import SparkWriter, raised_as_hudi_errors

FORMAT = "hudi"
_PUSHABLE = {
    EqualTo: "=",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
    In: "in",
}


def register(spark: SparkSession) -> None:
    """Makes `format("hudi")` read and write through hudi_core in this Spark session."""
    spark.dataSource.register(HudiDataSource)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    _guard_reads()
    _route_writes_to_spark_writer()


class HudiDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        """All columns nullable, so that Spark keeps the read guard's not-null filter."""
        return from_arrow_schema(_nullable(self._plan()), prefer_timestamp_ntz=False)

    def reader(self, schema: StructType) -> DataSourceReader:
        return HudiReader(self.options)

    def _plan(self) -> ReadPlan:
        return plan_read(dict(self.options), filters=None)


def plan_read(options: Mapping[str, str], filters: list | None) -> ReadPlan:
    path = options.get("path")
    if not path:
        raise HudiError('reading format("hudi") needs a path: .load("/path/to/table")')
    table = HudiTable.open(path)
    request = read_request({**table.options, **options}, filters=filters)
    plan = TableReader(table.storage, table.config, table.engine).plan(request)
    if plan is None:
        raise HudiError(f"the table at {path} has no commits yet: nothing to read")
    return plan


class _SlicePartition(InputPartition):
    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


class HudiReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)
        self.partition_filters: list[tuple[str, str, Any]] = []
        self._plan: ReadPlan | None = None

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        """Filters on partition columns prune file slices; Spark still applies every filter
        to the rows (all are handed back), so pruning only ever skips whole slices."""
        partition_columns = _partition_columns(self.options)
        self.partition_filters = []  # of this query only: Spark reuses readers across queries
        self._plan = None
        for spark_filter in filters:
            op = _PUSHABLE.get(type(spark_filter))
            column = spark_filter.attribute
            if op is not None and len(column) == 1 and column[0] in partition_columns:
                self.partition_filters.append((column[0], op, _value(spark_filter)))
            yield spark_filter

    @property
    def plan(self) -> ReadPlan:
        if self._plan is None:
            self._plan = plan_read(self.options, self.partition_filters or None)
        return self._plan

    def partitions(self) -> list[InputPartition]:
        return [_SlicePartition(i) for i in range(len(self.plan.slices))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        rows = self.plan.read_slice(self.plan.slices[partition.index])
        yield from rows.cast(_nullable(self.plan)).to_batches()


def _nullable(plan: ReadPlan) -> pa.Schema:
    return pa.schema([field.with_nullable(True) for field in plan.output_schema])


def _value(spark_filter: Filter) -> Any:
    if isinstance(spark_filter, In):
        return list(spark_filter.value)
    return spark_filter.value


def _partition_columns(options: Mapping[str, str]) -> set[str]:
    table = HudiTable.open(options["path"])
    return {field.split(":")[0] for field in table.config.partition_fields}


def _guard_reads() -> None:
    """Adds the always-true filter (see the module doc) to DataFrames loaded as "hudi"."""
    if getattr(DataFrameReader, "_hudi_guarded", False):
        return
    original_format, original_load = DataFrameReader.format, DataFrameReader.load

    def format(self: DataFrameReader, source: str) -> DataFrameReader:
        self._hudi_source = source.lower()
        return original_format(self, source)

    def load(self: DataFrameReader, path=None, format=None, schema=None, **options):
        with raised_as_hudi_errors():  # no table at the path: TableNotFoundError, say
            df = original_load(self, path, format, schema, **options)
        if (format or getattr(self, "_hudi_source", "")).lower() != FORMAT:
            return df
        return df.where(F.col(_guard_column(df, path)).isNotNull())

    DataFrameReader.format = format
    DataFrameReader.load = load
    DataFrameReader._hudi_guarded = True


def _guard_column(df: DataFrame, path: str | None) -> str:
    """A column never null in a Hudi table: the commit time, else a record key field."""
    if COMMIT_TIME_FIELD in df.columns:
        return COMMIT_TIME_FIELD
    table = HudiTable.open(path)
    return table.config.record_key_fields[0]


# ---- writes


def _route_writes_to_spark_writer() -> None:
    """Wraps DataFrameWriter once so that format("hudi") writes go to the SparkWriter."""
    if getattr(DataFrameWriter, "_hudi_routed", False):
        return
    original_format = DataFrameWriter.format

    def format(self: DataFrameWriter, source: str) -> Any:
        if source.lower() == FORMAT:
            return HudiDataFrameWriter(self._df, self._hudi_mode, self._hudi_options)
        return original_format(self, source)

    _record_calls("mode", lambda self, mode: setattr(self, "_hudi_mode_set", mode))
    _record_calls("option", lambda self, key, value: _options_of(self).update({key: value}))
    _record_calls("options", lambda self, **opts: _options_of(self).update(opts))
    DataFrameWriter.format = format
    DataFrameWriter._hudi_mode = property(lambda self: getattr(self, "_hudi_mode_set", None))
    DataFrameWriter._hudi_options = property(_options_of)
    DataFrameWriter._hudi_routed = True


def _record_calls(name: str, record) -> None:
    original = getattr(DataFrameWriter, name)

    def wrapped(self, *args, **kwargs):
        record(self, *args, **kwargs)
        return original(self, *args, **kwargs)

    setattr(DataFrameWriter, name, wrapped)


def _options_of(writer: DataFrameWriter) -> dict[str, Any]:
    if not hasattr(writer, "_hudi_recorded_options"):
        writer._hudi_recorded_options = {}
    return writer._hudi_recorded_options


class HudiDataFrameWriter:
    """`df.write.format("hudi")`: options, mode and save, with Apache Hudi's option names."""

    def __init__(self, df: DataFrame, mode: str | None, options: Mapping[str, Any]) -> None:
        self._df = df
        self._mode = (mode or "errorifexists").lower()
        self._options = {k: str(v) for k, v in options.items()}

    def option(self, key: str, value: Any) -> HudiDataFrameWriter:
        self._options[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def options(self, **options: Any) -> HudiDataFrameWriter:
        for key, value in options.items():
            self.option(key, value)
        return self

    def mode(self, mode: str) -> HudiDataFrameWriter:
        self._mode = mode.lower()
        return self

    def partitionBy(self, *columns: str) -> HudiDataFrameWriter:  # noqa: N802 (Spark's name)
        self._options.setdefault(W.PARTITION_PATH_FIELD.key, ",".join(columns))
        return self

    def save(self, path: str | None = None) -> str | None:
        """Writes the DataFrame; returns the instant time (None: nothing written)."""
        path = path or self._options.get("path")
        if not path:
            raise HudiError('df.write.format("hudi").save(path) needs a path')
        exists = Storage(path).exists(PROPERTIES_FILE)
        if exists and self._mode in ("error", "errorifexists", "default"):
            raise TableExistsError(
                f"a Hudi table exists at {path}; write with .mode('append') to add to it"
            )
        if exists and self._mode == "ignore":
            return None
        if exists and self._mode == "overwrite":
            _delete_table(path)
            exists = False
        table = HudiTable.open(path) if exists else self._create(path)
        operation = Options(self._options).get_option(W.OPERATION).lower()
        writer = SparkWriter(self._df.sparkSession, table)
        return writer.write(self._df, operation, self._options)

    def _create(self, path: str) -> HudiTable:
        opts = Options(self._options)
        name = self._options.get(T.TABLE_NAME.key)
        record_keys = opts.get_option(W.RECORD_KEY_FIELD)
        if not name or not record_keys:
            raise InvalidOptionError(
                f"creating a table needs {T.TABLE_NAME.key} and {W.RECORD_KEY_FIELD.key}"
            )
        partitions = opts.get_option(W.PARTITION_PATH_FIELD)
        return HudiTable.create(
            path,
            name=name,
            table_type=opts.get_option(W.TABLE_TYPE),
            record_key_fields=_fields(record_keys),
            partition_fields=_fields(partitions),
            precombine_field=opts.get_option(W.PRECOMBINE_FIELD),
            options=self._options,
        )


def _fields(value: str | list[str] | None) -> list[str]:
    if not value:
        return []
    if isinstance(value, list):
        return value
    return [part.strip() for part in value.split(",") if part.strip()]


def _delete_table(path: str) -> None:
    """Overwrite mode: the table goes, as Apache Hudi's Spark writer deletes it."""
    storage = Storage(path)
    if storage.is_local:
        shutil.rmtree(storage.base_path)
    else:
        storage.fs.delete_dir(storage.base_path)
