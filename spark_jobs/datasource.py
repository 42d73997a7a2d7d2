"""`spark.read.format("hudi")`: a Python data source reading tables with hudi_core.

(`spark.readStream.format("hudi")` streams the table's commits: see spark_jobs.stream_source.)

One Spark partition per file slice, each read by hudi_core on an executor: snapshot,
read-optimized, incremental and time-travel queries, chosen by Apache Hudi's read options
(hoodie.datasource.query.type, as.of.instant, hoodie.datasource.read.begin.instanttime, ...).

    spark_jobs.register(spark)                  # once per session
    spark.read.format("hudi").option("as.of.instant", "20261121090000000").load(path)
    spark_jobs.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"})

`spark_jobs.read` is the same read, plus two things a plain `load` cannot do:

- it plans the read on the driver first, so a missing table or a bad option raises its
  HudiError (TableNotFoundError, InvalidOptionError, ...) in the caller's process; a plain
  `load` plans in a Python worker Spark starts, and the error arrives as Spark's
  AnalysisException holding the worker's traceback;
- filters on partition columns prune file slices before any is read. Spark (4.x) keeps the
  slices a DataFrame's last filtered query planned and reuses them for a later query of that
  DataFrame that has no filter at all (PythonDataSourceV2 caches its read info, and only
  filter pushdown refreshes it). The DataFrame `read` returns therefore carries an
  always-true filter (the commit time, or the first record key field, is not null), so every
  query of it has a filter and plans its slices afresh; the data source prunes only for
  DataFrames carrying that filter (marked by GUARD_OPTION). A plain `load` reads every slice
  its query type selects and lets Spark filter the rows: slower, never wrong.

Writes need a shuffle the Python data source API cannot ask for (rows must reach their file
group's task): they go through `spark_jobs.write` (spark_jobs.save), not `df.write`, and so
does Apache Hudi's `bootstrap` operation (hoodie.datasource.write.operation=bootstrap with
hoodie.bootstrap.base.path: the parquet dataset the table is made of).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
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

from hudi_core import HudiTable, QueryType
from hudi_core.config import Options, declared_options
from hudi_core.config import read_options as R
from hudi_core.distributed import COMMIT_TIME_FIELD, ReadPlan, TableReader, read_request
from hudi_core.errors import HudiError, InvalidOptionError, QueryError
from spark_jobs.stream_source import HudiStreamReader

FORMAT = "hudi"
# What a catalog table lacks: Spark gives a Python data source no options (not even its
# LOCATION) when a table of its catalog is read, so such a table is refused when created.
_CATALOG_TABLE_MESSAGE = (
    "Spark gives a Python data source none of a catalog table's options when the table is "
    "read, so it could not find the Hudi table; read it with "
    'spark.read.format("hudi").load(path) or spark_jobs.read(spark, path), or name it with '
    "CREATE TEMPORARY VIEW <name> USING hudi OPTIONS (path '<path>')"
)
GUARD_OPTION = "spark_jobs.read.guard"  # the always-true filter's column (see the module doc)
_PUSHABLE = {
    EqualTo: "=",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
    In: "in",
}


def register(spark: SparkSession) -> None:
    """Makes `spark.read.format("hudi")` read through hudi_core in this Spark session, and
    turns on Spark's filter pushdown for Python data sources (which `read` prunes by).

    The session's `spark.hadoop.fs.*` settings (fs.s3a.endpoint, ...: how Apache Hudi users
    configure their object store) become defaults of every read's options. Without
    PYSPARK_PYTHON set, Python workers run this interpreter, as the jobs' do: hudi_core is
    installed here, not necessarily in the `python3` on the PATH Spark would take."""
    if "PYSPARK_PYTHON" not in os.environ:
        spark.sparkContext.pythonExec = sys.executable
    session_defaults = session_fs_options(spark)
    source = type(
        HudiDataSource.__name__, (HudiDataSource,), {"session_defaults": session_defaults}
    )
    spark.dataSource.register(source)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")


def session_fs_options(spark: SparkSession) -> dict[str, str]:
    """The session's Hadoop file system settings (`spark.hadoop.fs.*`), as options."""
    prefix = "spark.hadoop."
    return {
        key.removeprefix(prefix): value
        for key, value in spark.conf.getAll.items()
        if key.startswith(f"{prefix}fs.")
    }


def read(spark: SparkSession, path: str, options: Mapping[str, Any] | None = None) -> DataFrame:
    """The table at `path` as a DataFrame, read with Apache Hudi's read options (see the module
    doc for what it adds to `spark.read.format("hudi").options(...).load(path)`); the session
    must have been `register`-ed. Raises the HudiError of a missing table or a bad option."""
    given = {key: _option_value(value) for key, value in (options or {}).items()}
    given = {**session_fs_options(spark), **given}
    table = HudiTable.open(path, given)
    plan = plan_read({**given, "path": path}, filters=None, table=table)
    if plan is None:  # never written: no columns to guard, no slices to prune
        return spark.read.format(FORMAT).options(**given).load(path)
    guard = _guard_column(table, plan)
    loaded = spark.read.format(FORMAT).options(**given, **{GUARD_OPTION: guard}).load(path)
    return loaded.where(F.col(guard).isNotNull())


class HudiDataSource(DataSource):
    session_defaults: Mapping[str, str] = {}  # set by `register`: the session's fs.* settings

    def __init__(self, options: Mapping[str, str]) -> None:
        if str(options.get("provider", "")).lower() == FORMAT and "location" in options:
            raise InvalidOptionError(
                f"CREATE TABLE ... USING hudi (at {options['location']}) is not supported: "
                f"{_CATALOG_TABLE_MESSAGE}"
            )
        super().__init__({**self.session_defaults, **_declared_spelling(options)})

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """Refused at once, before any row is read: see `spark_jobs.write`."""
        raise InvalidOptionError(
            f'df.write.format("hudi") cannot write {self.options.get("path") or "a table"}: '
            "rows must be shuffled to their file groups, which a Python data source cannot "
            "ask Spark for; write with spark_jobs.write(df, path, options=..., mode=...) "
            "(the same hoodie.* options and save modes; see docs/spark.md)"
        )

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802
        """Refused at once: see `spark_jobs.hudi_sink`."""
        raise InvalidOptionError(
            'df.writeStream.format("hudi") cannot write a table: use '
            "writeStream.foreachBatch(spark_jobs.hudi_sink(path, options)) (see "
            "docs/streaming.md)"
        )

    def schema(self) -> StructType:
        """All columns nullable, so that Spark keeps the read guard's not-null filter."""
        return from_arrow_schema(_nullable(self._plan()), prefer_timestamp_ntz=False)

    def reader(self, schema: StructType) -> DataSourceReader:
        return HudiReader(self.options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802
        """The query's reader; one whose every call raises the HudiError that made it fail
        to start: PySpark (4.x) hides an error raised here behind an UnboundLocalError of
        its own (it stops a reader it never got)."""
        try:
            columns = _nullable(self._plan())
            if not columns.names:
                raise QueryError(
                    f"the table at {self.options.get('path')} has no schema yet (never "
                    "written): start streaming it after its first commit"
                )
            return HudiStreamReader(self.options, columns)
        except HudiError as exc:
            return HudiStreamReader.failing(exc)

    def _plan(self) -> ReadPlan | None:
        """The plan whose columns the source has: an incremental read's for changelog reads
        (they add `_hoodie_operation`), which Spark's batch reads refuse of other queries."""
        options = dict(self.options)
        if _changelog(options):
            options[R.QUERY_TYPE.key] = QueryType.INCREMENTAL.value
        return plan_read(options, filters=None)


def plan_read(
    options: Mapping[str, str], filters: list | None, table: HudiTable | None = None
) -> ReadPlan | None:
    """The read's plan; None for a table never written, which, as HudiTable.read does, reads
    as no rows in the schema it was created with, else in no columns."""
    path = options.get("path")
    if not path:
        raise InvalidOptionError(
            'reading format("hudi") needs a path: .load("/path/to/table"); a table of Spark\'s '
            f"catalog (CREATE TABLE ... USING hudi) has none: {_CATALOG_TABLE_MESSAGE}"
        )
    table = table or HudiTable.open(path, options)
    request = read_request({**table.options, **options}, filters=filters)
    if _changelog(options) and request.query_type is not QueryType.INCREMENTAL:
        raise InvalidOptionError(
            f"{R.CHANGELOG_READ.key}=true applies to incremental and streaming reads, not to "
            f"a {request.query_type.value} query"
        )
    return TableReader(table.storage, table.config, table.engine).plan(request)


class HudiReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)
        self.partition_filters: list[tuple[str, str, Any]] = []
        self._plan: ReadPlan | None = None
        self._planned = False

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 (Spark's)
        """Filters on partition columns prune file slices of guarded DataFrames (see the
        module doc); Spark still applies every filter to the rows (all are handed back), so
        pruning only ever skips whole slices."""
        self.partition_filters = []  # of this query only: Spark reuses readers across queries
        self._planned = False
        prunes = GUARD_OPTION in self.options
        partition_columns = _partition_columns(self.options) if prunes else set()
        for spark_filter in filters:
            op = _PUSHABLE.get(type(spark_filter))
            column = spark_filter.attribute
            if op is not None and len(column) == 1 and column[0] in partition_columns:
                self.partition_filters.append((column[0], op, _value(spark_filter)))
            yield spark_filter

    @property
    def plan(self) -> ReadPlan | None:
        if not self._planned:
            self._plan = plan_read(self.options, self.partition_filters or None)
            self._planned = True
        return self._plan

    def partitions(self) -> list[InputPartition]:
        """One per file slice, its value the slice's index in the plan; none for a plan of
        no slices (Spark then reads one InputPartition(None) instead: no rows)."""
        plan = self.plan
        return [] if plan is None else [InputPartition(i) for i in range(len(plan.slices))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        plan = self.plan
        if partition.value is None or plan is None:  # Spark's stand-in for no partitions
            return
        rows = plan.read_slice(plan.slices[partition.value])
        yield from rows.cast(_nullable(plan)).to_batches()


def _nullable(plan: ReadPlan | None) -> pa.Schema:
    if plan is None:
        return pa.schema([])
    return pa.schema([field.with_nullable(True) for field in plan.output_schema])


def _value(spark_filter: Filter) -> Any:
    if isinstance(spark_filter, In):
        return list(spark_filter.value)
    return spark_filter.value


def _partition_columns(options: Mapping[str, str]) -> set[str]:
    table = HudiTable.open(options["path"], options)
    return {field.split(":")[0] for field in table.config.partition_fields}


def _guard_column(table: HudiTable, plan: ReadPlan) -> str:
    """A column never null in a Hudi table: the commit time, else a record key field."""
    if COMMIT_TIME_FIELD in plan.output_schema.names:
        return COMMIT_TIME_FIELD
    return table.config.record_key_fields[0]


def _declared_spelling(options: Mapping[str, str]) -> dict[str, str]:
    """`options` with hoodie option keys spelled as declared: Spark lowercases the keys it
    hands a data source (hoodie.datasource.streaming.startoffset)."""
    declared = {
        key.lower(): key
        for option in declared_options()
        for key in (option.key, *option.alternatives)
    }
    return {declared.get(key.lower(), key): value for key, value in options.items()}


def _changelog(options: Mapping[str, str]) -> bool:
    return bool(Options(options).get_option(R.CHANGELOG_READ))


def _option_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
