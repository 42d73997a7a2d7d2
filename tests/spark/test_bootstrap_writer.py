"""`spark_jobs.write` with Apache Hudi's `bootstrap` operation
(hoodie.datasource.write.operation=bootstrap, hoodie.bootstrap.base.path=<dataset>): an empty
DataFrame, as Apache Hudi's users pass, makes the table of the dataset from the usual write
options; one partition referenced (00000000000001), the other rewritten (00000000000002),
read back by hudi_core and by the `hudi` data source; a missing base path is named before a
save mode deletes anything."""

from __future__ import annotations

import pytest

import spark_jobs
from hudi_core import HudiTable
from hudi_core.errors import InvalidOptionError
from tests import bootstrap_source

pytestmark = pytest.mark.spark

WRITE = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.operation": "bootstrap",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
}
TABLE = {k: v for k, v in WRITE.items() if k != "hoodie.datasource.write.operation"}


def test_the_bootstrap_operation_makes_the_table_of_the_dataset(spark, tmp_path):
    source = tmp_path / "source"
    expected = bootstrap_source.write_source(source)
    path = str(tmp_path / "trips")
    options = {
        **WRITE,
        "hoodie.bootstrap.base.path": str(source),
        **bootstrap_source.MIXED_MODES,
    }
    empty = spark.createDataFrame([], "uuid string")
    instant = spark_jobs.write(empty, path, options=options, mode="overwrite")
    assert instant == "00000000000002"
    table = HudiTable.open(path)
    assert table.name == "trips" and table.table_type == "COPY_ON_WRITE"
    assert table.config.record_key_fields == ["uuid"]
    assert [(i.timestamp, i.action) for i in table.timeline()] == [
        ("00000000000001", "commit"),
        ("00000000000002", "commit"),
    ]
    rows = table.read()
    assert bootstrap_source.data_rows(rows) == bootstrap_source.data_rows(expected)
    by_partition = {
        (row["_hoodie_partition_path"], row["_hoodie_commit_time"])
        for row in rows.select(["_hoodie_partition_path", "_hoodie_commit_time"]).to_pylist()
    }
    first, second = bootstrap_source.PARTITIONS
    assert by_partition == {(first, "00000000000001"), (second, "00000000000002")}
    read = spark_jobs.read(spark, path).toArrow()
    assert bootstrap_source.data_rows(read) == bootstrap_source.data_rows(expected)


def test_the_bootstrap_operation_needs_the_base_path_and_changes_nothing_without(spark, tmp_path):
    path = tmp_path / "trips"
    empty = spark.createDataFrame([], "uuid string")
    with pytest.raises(InvalidOptionError, match="needs hoodie.bootstrap.base.path"):
        spark_jobs.write(empty, str(path), options=WRITE)
    assert not path.exists()
    # an existing table is not deleted by mode overwrite first
    HudiTable.create(str(path), "trips", record_key_fields=["uuid"])
    with pytest.raises(InvalidOptionError, match="needs hoodie.bootstrap.base.path"):
        spark_jobs.write(empty, str(path), operation="BOOTSTRAP", options=TABLE, mode="overwrite")
    assert HudiTable.open(str(path)).name == "trips"
