"""HudiErrors raised on executors reach the driver as themselves (class and message) through
the tasks' results, before anything is committed; other errors fail the job as Spark does."""

from __future__ import annotations

import pyarrow as pa
import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

import spark_jobs
from hudi_core import HudiTable
from hudi_core.errors import CorruptFileError, HudiError, RecordKeyError
from spark_jobs.engine import SparkEngine
from spark_jobs.task_errors import TaskErrors
from tests import datagen

pytestmark = pytest.mark.spark

CREATE = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
}
SPARK_FAILURES = (Py4JJavaError, PySparkException)


def local_error(write) -> HudiError:
    with pytest.raises(HudiError) as raised:
        write()
    return raised.value


def assert_raised_as_itself(error: HudiError) -> None:
    """Raised on the driver from the task's result: no Spark failure behind it."""
    assert error.__cause__ is None and error.__context__ is None


def test_a_bad_record_key_in_a_write_arrives_as_its_error(spark, tmp_path):
    rows = datagen.trips(range(20), seed=1, ts=1)
    keys = rows.column("uuid").to_pylist()
    keys[7] = keys[13] = None
    rows = rows.set_column(rows.schema.get_field_index("uuid"), "uuid", pa.array(keys))
    local = HudiTable.create(
        str(tmp_path / "local"),
        name="trips",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
    )
    expected = local_error(lambda: local.write(rows, "upsert"))
    assert isinstance(expected, RecordKeyError)

    path = str(tmp_path / "spark")
    df = spark.createDataFrame(rows).coalesce(1)  # one task: rows numbered as locally
    for operation in ("upsert", "bulk_insert"):
        with pytest.raises(RecordKeyError) as raised:
            spark_jobs.write(df, path, operation, options=CREATE)
        assert type(raised.value) is type(expected)
        assert str(raised.value) == str(expected)
        assert_raised_as_itself(raised.value)
        assert HudiTable.open(path).timeline() == [], "nothing was committed"


def test_a_hudi_error_in_an_engine_map_arrives_as_itself(spark):
    def read(item: int) -> int:
        if item == 3:
            raise CorruptFileError(f"file {item} is not a parquet file: delete it")
        return item * 2

    engine = SparkEngine(spark)
    assert engine.map(read, [0, 1, 2]) == [0, 2, 4]
    with pytest.raises(CorruptFileError) as raised:
        engine.map(read, [0, 1, 2, 3, 4])
    assert str(raised.value) == "file 3 is not a parquet file: delete it"
    assert_raised_as_itself(raised.value)
    assert engine.map(read, [5]) == [10], "an error does not outlive its map"


def test_other_errors_fail_the_job_as_spark_does(spark):
    def read(item: int) -> int:
        if item == 1:
            raise ValueError("not a hudi error")
        return item

    with pytest.raises(SPARK_FAILURES, match="not a hudi error"):
        SparkEngine(spark).map(read, [0, 1])


def test_guarded_arrow_tasks_hand_errors_back_and_end_normally(spark):
    def doubled(batches):
        for batch in batches:
            values = batch.column(0).to_pylist()
            if 7 in values:
                raise RecordKeyError("key 7 is bad")
            yield pa.RecordBatch.from_arrays([pa.array([v * 2 for v in values])], ["id"])

    errors = TaskErrors(spark)
    df = spark.range(0, 10, numPartitions=2).mapInArrow(errors.guard(doubled), "id long")
    rows = df.collect()
    assert {row.id for row in rows} == {0, 2, 4, 6, 8}, "the task with key 7 ended early"
    with pytest.raises(RecordKeyError, match="^key 7 is bad$"):
        errors.check()
    with pytest.raises(RecordKeyError):
        errors.collect(df)
    TaskErrors(spark).check()  # a fresh one holds nothing
