"""What the hudi data source cannot do fails at once, saying what to use instead: a
`df.write.format("hudi")` (spark_jobs.write), a catalog table `CREATE TABLE ... USING hudi`
(Spark hands a Python data source none of its options on reads), a changelog stream of a table
not in changelog mode (the HudiError, not PySpark's UnboundLocalError)."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from hudi_core import HudiTable


def _table(path: str) -> None:
    table = HudiTable.create(path, "t", record_key_fields=["uuid"], precombine_field="ts")
    table.write(pa.table({"uuid": ["a", "b"], "ts": pa.array([1, 2], pa.int64())}))


def test_df_write_format_hudi_fails_at_once_naming_spark_jobs_write(spark, tmp_path):
    df = spark.createDataFrame([("a", 1)], "uuid string, ts long")
    started = time.monotonic()
    with pytest.raises(Exception) as raised:
        (
            df.write.format("hudi")
            .option("hoodie.table.name", "t")
            .option("hoodie.datasource.write.recordkey.field", "uuid")
            .mode("append")
            .save(str(tmp_path / "t"))
        )
    message = str(raised.value)
    assert "InvalidOptionError" in message and "spark_jobs.write(df, path" in message
    assert "not implemented" not in message
    assert time.monotonic() - started < 60
    assert not (tmp_path / "t").exists()


def test_create_table_using_hudi_is_refused_naming_what_reads_it(spark, tmp_path):
    path = str(tmp_path / "t")
    _table(path)
    with pytest.raises(Exception) as raised:
        spark.sql(f"CREATE TABLE hudi_catalog_t USING hudi LOCATION '{path}'")
    message = str(raised.value)
    assert "InvalidOptionError" in message and "CREATE TEMPORARY VIEW" in message
    assert not spark.catalog.tableExists("hudi_catalog_t")
    # What the message offers works.
    spark.sql(f"CREATE TEMPORARY VIEW hudi_view_t USING hudi OPTIONS (path '{path}')")
    rows = spark.sql("SELECT uuid FROM hudi_view_t ORDER BY uuid").collect()
    assert [r.uuid for r in rows] == ["a", "b"]


def test_a_changelog_stream_of_a_table_without_changelog_fails_with_the_hudi_error(spark, tmp_path):
    path = str(tmp_path / "t")
    _table(path)
    stream = (
        spark.readStream.format("hudi")
        .option("hoodie.datasource.read.changelog.enabled", "true")
        .option("hoodie.datasource.streaming.startOffset", "earliest")
        .load(path)
    )
    query = (
        stream.writeStream.format("memory")
        .queryName("changelog_of_plain_table")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception) as raised:
        query.awaitTermination(120)
    message = str(raised.value)
    assert "InvalidOptionError" in message and "keeps every change" in message
    assert "UnboundLocalError" not in message
