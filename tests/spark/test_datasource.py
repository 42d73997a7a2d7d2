"""`spark.read.format("hudi")`, `spark_jobs.read` and `spark_jobs.write`: every supported type
round-trips, snapshot / read-optimized / incremental / time-travel reads equal hudi-rs's,
filters on the partition column prune file slices, save modes behave as Apache Hudi's Spark
writer's, and registering the data source leaves Spark's reader and writer classes alone."""

from __future__ import annotations

import inspect

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.errors import PySparkException
from pyspark.sql import DataFrameReader, DataFrameWriter

# Spark's own reader and writer methods, captured before spark_jobs is imported here.
SPARKS_OWN = {
    cls: dict(inspect.getmembers(cls, inspect.isfunction))
    for cls in (DataFrameReader, DataFrameWriter)
}

import spark_jobs  # noqa: E402 (after the capture above)
from hudi_core import HudiTable  # noqa: E402
from hudi_core.errors import (  # noqa: E402
    InvalidOptionError,
    TableExistsError,
    TableNotFoundError,
)
from hudi_core.read.file_system_view import FileSystemView  # noqa: E402
from hudi_core.schema.meta_fields import COMMIT_TIME_FIELD, is_meta_field  # noqa: E402
from hudi_core.timeline import ActiveTimeline  # noqa: E402
from spark_jobs import datasource  # noqa: E402
from tests import datagen, oracle  # noqa: E402

pytestmark = pytest.mark.spark

CITIES = ["san_francisco", "chennai", "sao_paulo"]
CREATE = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
}


def batch(keys, seed: int) -> pa.Table:
    """Trips over every supported type (nested, decimal, binary, dates, timestamps, maps)."""
    return datagen.trips(list(keys), seed=seed, ts=seed, cities=CITIES)


def spark_read(spark, path: str, **options) -> pa.Table:
    """A format("hudi") read, brought to Arrow with Spark's own conversion."""
    return spark.read.format("hudi").options(**options).load(path).toArrow()


def data(table: pa.Table) -> pa.Table:
    return table.select([n for n in table.column_names if not is_meta_field(n)])


def commit_times(path: str) -> list[str]:
    return [i.timestamp for i in HudiTable.open(path).timeline()]


def latest_slices(path: str, partitions: list[str] | None = None) -> list:
    table = HudiTable.open(path)
    view = FileSystemView(table.storage, ActiveTimeline.load(table.storage))
    return view.latest_slices(partitions)


def save(spark, rows: pa.Table, path: str, mode: str = "append", **options) -> str | None:
    return spark_jobs.write(
        spark.createDataFrame(rows), path, options={**CREATE, **options}, mode=mode
    )


@pytest.fixture(scope="module")
def cow(spark, tmp_path_factory):
    """A copy-on-write table of three commits written through spark_jobs.write."""
    path = str(tmp_path_factory.mktemp("cow") / "trips")
    save(spark, batch(range(0, 30), 1), path, mode="errorifexists")
    save(spark, batch(range(20, 45), 2), path)
    save(spark, batch(range(45, 55), 3), path, **{"hoodie.datasource.write.operation": "insert"})
    return path


@pytest.fixture(scope="module")
def mor(spark, tmp_path_factory):
    """A merge-on-read table whose second commit's updates sit in log files."""
    path = str(tmp_path_factory.mktemp("mor") / "trips")
    options = {
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.parquet.small.file.limit": "0",
    }
    save(spark, batch(range(0, 30), 1), path, **options)
    save(spark, batch(range(0, 30, 2), 2), path, **options)
    return path


def test_every_type_round_trips_through_write_and_read(spark, cow):
    expected = {}
    for rows in (batch(range(0, 30), 1), batch(range(20, 45), 2), batch(range(45, 55), 3)):
        expected.update({row["uuid"]: row for row in rows.to_pylist()})
    read = spark_read(spark, cow)
    assert data(read).schema == datagen.SCHEMA.remove_metadata()
    assert oracle.sorted_rows(data(read)) == oracle.sorted_rows(
        pa.Table.from_pylist(list(expected.values()), datagen.SCHEMA)
    )
    # Meta columns too: what Spark reads is what hudi_core and hudi-rs read.
    ours = HudiTable.open(cow).read()
    oracle.assert_same_table(ours, oracle.snapshot(cow), "hudi-rs snapshot")
    assert oracle.sorted_rows(read) == oracle.sorted_rows(ours)


def test_incremental_read_returns_only_the_requested_commits(spark, cow):
    first, second, third = commit_times(cow)
    only_second = spark_read(
        spark,
        cow,
        **{
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": first,
            "hoodie.datasource.read.end.instanttime": second,
        },
    )
    assert set(only_second.column(COMMIT_TIME_FIELD).to_pylist()) == {second}
    keys = sorted(only_second.column("uuid").to_pylist())
    assert keys == [f"key-{k:06d}" for k in range(20, 45)]
    assert oracle.sorted_rows(only_second) == oracle.sorted_rows(
        oracle.incremental(cow, first, second)
    )

    after_first = spark_read(
        spark,
        cow,
        **{
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": first,
        },
    )
    assert set(after_first.column(COMMIT_TIME_FIELD).to_pylist()) == {second, third}
    assert oracle.sorted_rows(after_first) == oracle.sorted_rows(
        oracle.incremental(cow, first, third)
    )


def test_time_travel_reads_each_commit_as_it_was(spark, cow):
    for instant in commit_times(cow):
        read = spark_read(spark, cow, **{"as.of.instant": instant})
        assert max(read.column(COMMIT_TIME_FIELD).to_pylist()) == instant
        assert oracle.sorted_rows(read) == oracle.sorted_rows(oracle.snapshot(cow, as_of=instant))


def test_merge_on_read_snapshot_merges_logs_and_read_optimized_reads_base_files(spark, mor):
    first, second = commit_times(mor)
    snapshot = spark_read(spark, mor)
    assert oracle.sorted_rows(snapshot) == oracle.sorted_rows(oracle.snapshot(mor))
    updated = pc.equal(snapshot.column(COMMIT_TIME_FIELD), second)
    assert sorted(snapshot.filter(updated).column("uuid").to_pylist()) == [
        f"key-{k:06d}" for k in range(0, 30, 2)
    ]
    optimized = spark_read(spark, mor, **{"hoodie.datasource.query.type": "read_optimized"})
    assert set(optimized.column(COMMIT_TIME_FIELD).to_pylist()) == {first}
    ours = HudiTable.open(mor).read(query_type="read_optimized")
    assert oracle.sorted_rows(optimized) == oracle.sorted_rows(ours)


def test_filters_on_the_partition_column_prune_file_slices(spark, cow):
    table = spark_jobs.read(spark, cow)
    slices, in_chennai = len(latest_slices(cow)), len(latest_slices(cow, ["chennai"]))
    assert 0 < in_chennai < slices
    assert table.rdd.getNumPartitions() == slices
    chennai = table.where("city = 'chennai'")
    assert chennai.rdd.getNumPartitions() == in_chennai
    assert set(chennai.toArrow().column("city").to_pylist()) == {"chennai"}
    two = table.where("city in ('chennai', 'sao_paulo')")
    assert set(two.toArrow().column("city").to_pylist()) == {"chennai", "sao_paulo"}
    # A filter on a data column prunes nothing and still filters rows.
    assert table.where("passengers > 3").rdd.getNumPartitions() == slices


def test_a_plain_load_filters_rows_without_pruning(spark, cow):
    """Unguarded, a pruned plan could outlive its query (see spark_jobs.datasource)."""
    table = spark.read.format("hudi").load(cow)
    chennai = table.where("city = 'chennai'")
    assert chennai.rdd.getNumPartitions() == len(latest_slices(cow))
    assert set(chennai.toArrow().column("city").to_pylist()) == {"chennai"}


@pytest.mark.parametrize("how", ["spark_jobs.read", "format"])
def test_a_pruned_query_does_not_leak_into_a_later_unfiltered_one(spark, cow, how):
    if how == "format":
        table = spark.read.format("hudi").load(cow)
    else:
        table = spark_jobs.read(spark, cow)
    everything = table.count()
    assert table.where("city = 'chennai'").count() < everything
    assert table.count() == everything == HudiTable.open(cow).read().num_rows


def test_read_takes_apache_hudis_read_options(spark, cow):
    first, second, _ = commit_times(cow)
    options = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": first,
        "hoodie.datasource.read.end.instanttime": second,
    }
    read = spark_jobs.read(spark, cow, options).toArrow()
    assert oracle.sorted_rows(read) == oracle.sorted_rows(oracle.incremental(cow, first, second))
    as_of = spark_jobs.read(spark, cow, {"as.of.instant": first}).toArrow()
    assert oracle.sorted_rows(as_of) == oracle.sorted_rows(oracle.snapshot(cow, as_of=first))


def empty_reads(path: str) -> dict[str, tuple[dict[str, str], str | None]]:
    """Reads matching no file slice: (read options, row filter) by case."""
    first = commit_times(path)[0]
    incremental = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": first,
        "hoodie.datasource.read.end.instanttime": first,  # (first, first]: no commit
    }
    return {
        "no-match filter": ({}, "city = 'atlantis'"),
        "as of before the first commit": ({"as.of.instant": "19700101000000000"}, None),
        "empty incremental range": (incremental, None),
    }


@pytest.mark.parametrize("how", ["spark_jobs.read", "format"])
@pytest.mark.parametrize("table", ["cow", "mor"])
def test_reads_matching_nothing_are_empty_in_the_tables_schema(spark, request, table, how):
    path = request.getfixturevalue(table)

    def load(options: dict[str, str]):
        if how == "format":
            return spark.read.format("hudi").options(**options).load(path)
        return spark_jobs.read(spark, path, options)

    schema = load({}).schema
    assert load({}).count() > 0
    for case, (options, row_filter) in empty_reads(path).items():
        df = load(options)
        if row_filter is not None:
            df = df.where(row_filter)
            if how == "spark_jobs.read":  # pruned to no slice at all
                assert df.rdd.getNumPartitions() == 1, case  # Spark's one empty stand-in
        assert df.count() == 0, case
        assert df.schema == schema, case
        assert df.toArrow().num_rows == 0, case


@pytest.mark.parametrize("how", ["spark_jobs.read", "format"])
def test_a_table_never_written_reads_as_hudi_core_reads_it(spark, tmp_path, how):
    """No rows, in the schema the table was created with, else in no columns at all."""
    declared = pa.schema([("uuid", pa.string()), ("city", pa.string()), ("ts", pa.int64())])
    typed, bare = str(tmp_path / "typed"), str(tmp_path / "bare")
    HudiTable.create(typed, name="typed", record_key_fields=["uuid"], schema=declared)
    HudiTable.create(bare, name="bare", record_key_fields=["uuid"])
    for path in (typed, bare):
        if how == "format":
            read = spark.read.format("hudi").load(path).toArrow()
        else:
            read = spark_jobs.read(spark, path).toArrow()
        ours = HudiTable.open(path).read()
        assert read.num_rows == ours.num_rows == 0
        assert read.schema.names == ours.schema.names
        assert read.schema.types == ours.schema.types
    assert data(HudiTable.open(typed).read()).schema == declared


def test_save_modes(spark, tmp_path):
    path = str(tmp_path / "trips")
    save(spark, batch(range(0, 10), 1), path, mode="errorifexists")
    with pytest.raises(TableExistsError, match="mode='append'"):
        save(spark, batch(range(0, 10), 2), path, mode="errorifexists")
    before = commit_times(path)
    save(spark, batch(range(0, 10), 2), path, mode="ignore")
    assert commit_times(path) == before, "ignore leaves an existing table alone"

    save(spark, batch(range(5, 15), 3), path, mode="append")
    assert HudiTable.open(path).read().num_rows == 15

    save(spark, batch(range(100, 104), 4), path, mode="overwrite")
    keys = HudiTable.open(path).read(columns=["uuid"]).column("uuid").to_pylist()
    assert sorted(keys) == [f"key-{k:06d}" for k in range(100, 104)]
    assert len(commit_times(path)) == 1, "overwrite starts the table anew"


def test_delete_operation_by_option_name(spark, tmp_path):
    path = str(tmp_path / "trips")
    save(spark, batch(range(0, 10), 1), path)
    save(spark, batch(range(0, 4), 2), path, **{"hoodie.datasource.write.operation": "delete"})
    ours = HudiTable.open(path).read()
    assert sorted(ours.column("uuid").to_pylist()) == [f"key-{k:06d}" for k in range(4, 10)]
    oracle.assert_same_table(ours, oracle.snapshot(path), "hudi-rs after delete")


def test_bad_reads_and_writes_fail_clearly(spark, tmp_path):
    missing = str(tmp_path / "nothing")
    with pytest.raises(TableNotFoundError, match="nothing"):
        spark_jobs.read(spark, missing)
    # A plain load plans in Spark's Python worker: Spark's error, naming hudi_core's.
    with pytest.raises(PySparkException, match="TableNotFoundError"):
        spark.read.format("hudi").load(missing)

    rows = spark.createDataFrame(batch(range(3), 1))
    with pytest.raises(InvalidOptionError, match="hoodie.datasource.write.recordkey.field"):
        spark_jobs.write(rows, str(tmp_path / "t"), options={"hoodie.table.name": "t"})
    assert not (tmp_path / "t" / ".hoodie").exists()
    with pytest.raises(InvalidOptionError, match="save mode 'upsert'"):
        spark_jobs.write(rows, str(tmp_path / "t"), options=CREATE, mode="upsert")


def test_register_leaves_sparks_reader_and_writer_alone(spark, tmp_path):
    """No method of DataFrameReader or DataFrameWriter is replaced, before or after register:
    df.write.format("hudi") is not routed anywhere, and other formats are untouched."""
    before = {cls: dict(inspect.getmembers(cls, inspect.isfunction)) for cls in SPARKS_OWN}
    datasource.register(spark)
    for cls, own in SPARKS_OWN.items():
        now = dict(inspect.getmembers(cls, inspect.isfunction))
        assert now == own == before[cls]
        assert all(fn.__module__ == "pyspark.sql.readwriter" for fn in now.values())
    assert DataFrameReader.format is SPARKS_OWN[DataFrameReader]["format"]
    assert DataFrameReader.load is SPARKS_OWN[DataFrameReader]["load"]
    for name in ("format", "mode", "option", "options", "partitionBy", "save"):
        assert getattr(DataFrameWriter, name) is SPARKS_OWN[DataFrameWriter][name]
    assert not any(name.startswith("_hudi") for name in vars(DataFrameReader))
    assert not any(name.startswith("_hudi") for name in vars(DataFrameWriter))

    rows = spark.createDataFrame(batch(range(3), 1))
    with pytest.raises(PySparkException):
        rows.write.format("hudi").options(**CREATE).mode("append").save(str(tmp_path / "t"))
    assert not (tmp_path / "t" / ".hoodie").exists()
    rows.write.format("parquet").save(str(tmp_path / "p"))
    assert spark.read.format("parquet").load(str(tmp_path / "p")).count() == 3
