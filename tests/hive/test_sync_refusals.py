"""Hive sync against a real metastore (hms mode unless said): what it refuses, and the table
layouts beyond the scenario's (non-partitioned, several hive-style partition fields, partition
values that need quoting)."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.errors import SyncError
from hudi_core.sync import sync_table
from tests.hive.scenario import rows
from tests.hive.views import thrift_view


@pytest.fixture
def database(metastore):
    name = f"db_{uuid.uuid4().hex[:8]}"
    yield name
    with metastore.client() as client:
        if name in client.get_all_databases():
            client.drop_database(name, True, True)


def hms(metastore, database: str, **extra: str) -> dict[str, str]:
    return {
        "hoodie.datasource.hive_sync.enable": "true",
        "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.datasource.hive_sync.metastore.uris": metastore.uri,
        "hoodie.datasource.hive_sync.database": database,
        **extra,
    }


def trips(folder, table_type="COPY_ON_WRITE", partition_fields=("city",), **options) -> str:
    path = str(folder / "trips")
    HudiTable.create(
        path,
        "trips",
        table_type=table_type,
        record_key_fields=["id"],
        partition_fields=list(partition_fields),
        precombine_field="ts",
        options=options or None,
    )
    return path


def view(metastore, database: str) -> dict:
    with metastore.client() as client:
        return thrift_view(client, database)


def test_a_type_change_hive_cannot_follow_fails_and_leaves_the_tables(
    tmp_path, metastore, database
):
    path = trips(tmp_path, "MERGE_ON_READ")
    options = hms(metastore, database)
    HudiTable.open(path).write(rows(range(3), "sf", 1))
    sync_table(path, options)
    with metastore.client() as client:  # as if an older schema had fare as a string
        table = client.get_table(database, "trips_rt")
        next(c for c in table.sd.cols if c.name == "fare").type = "string"
        client.alter_table(database, "trips_rt", table)
    HudiTable.open(path).write(rows(range(2), "nyc", 2, tip=True))
    before = view(metastore, database)
    with pytest.raises(SyncError, match=r"fare string -> double.*left as it was"):
        sync_table(path, options)
    assert view(metastore, database) == before  # neither _ro nor _rt changed


def test_allowed_promotion_and_new_column_reach_every_partition(tmp_path, metastore, database):
    path = trips(tmp_path)
    options = hms(metastore, database)
    HudiTable.open(path).write(rows(range(3), "sf", 1))
    sync_table(path, options)
    wider = rows(range(2), "sf", 2, tip=True)  # passengers int -> long, and a new column
    wider = wider.set_column(4, "passengers", wider.column("passengers").cast(pa.int64()))
    HudiTable.open(path).write(wider)
    sync_table(path, options)
    with metastore.client() as client:
        columns = [(c.name, c.type) for c in client.get_table(database, "trips").sd.cols]
        partition = client.get_partitions(database, "trips", -1)[0]
    assert ("passengers", "bigint") in columns and columns[-1] == ("tip", "double")
    assert [(c.name, c.type) for c in partition.sd.cols] == columns  # cascaded


@pytest.mark.parametrize(
    "option, value",
    [
        ("hoodie.datasource.hive_sync.table", "trips; DROP TABLE lake.x"),
        ("hoodie.datasource.hive_sync.table", "trips` (a int); --"),
        ("hoodie.datasource.hive_sync.database", "lake`; DROP DATABASE default; --"),
        ("hoodie.datasource.hive_sync.partition_fields", "city) PARTITIONED BY (x"),
    ],
)
def test_names_that_would_inject_ddl_are_refused(tmp_path, metastore, database, option, value):
    path = trips(tmp_path)
    HudiTable.open(path).write(rows(range(2), "sf", 1))
    before = view(metastore, database)
    with pytest.raises(SyncError, match="not a valid Hive identifier"):
        sync_table(path, {**hms(metastore, database), option: value})
    assert view(metastore, database) == before


def test_a_missing_database_is_not_created_when_told_not_to(tmp_path, metastore, database):
    path = trips(tmp_path)
    HudiTable.open(path).write(rows(range(2), "sf", 1))
    options = hms(
        metastore, database, **{"hoodie.datasource.hive_sync.auto_create_database": "false"}
    )
    with pytest.raises(SyncError, match=f"database {database} does not exist"):
        sync_table(path, options)
    assert database not in view(metastore, database)["databases"]


def test_a_table_with_no_commit_is_not_synced(tmp_path, metastore, database):
    path = trips(tmp_path)
    outcome = sync_table(path, hms(metastore, database))
    assert outcome.hive.synced_to is None and not outcome.hive.changed
    assert database not in view(metastore, database)["databases"]


def test_non_partitioned_table(tmp_path, metastore, database):
    path = trips(tmp_path, partition_fields=())
    HudiTable.open(path).write(rows(range(3), "sf", 1))
    sync_table(path, hms(metastore, database))
    table = view(metastore, database)["tables"]["trips"]
    assert table["partition_keys"] == [] and table["partitions"] == {}
    assert ["city", "string"] in table["columns"]


def test_hive_style_multi_field_partitions(tmp_path, metastore, database):
    path = trips(
        tmp_path,
        partition_fields=("region", "city"),
        **{"hoodie.datasource.write.hive_style_partitioning": "true"},
    )
    batch = rows(range(2), "sf", 1).append_column("region", pa.array(["us", "us"]))
    HudiTable.open(path).write(batch)
    sync_table(path, hms(metastore, database))
    table = view(metastore, database)["tables"]["trips"]
    assert table["partition_keys"] == [["region", "string"], ["city", "string"]]
    assert table["partitions"] == {"us/sf": f"file:{path}/region=us/city=sf"}


def test_jdbc_mode_quotes_partition_values(tmp_path, metastore, thrift_server, database):
    path = trips(tmp_path)
    HudiTable.open(path).write(rows(range(2), "o'hare; DROP TABLE x", 1))
    options = {
        **hms(metastore, database),
        "hoodie.datasource.hive_sync.mode": "jdbc",
        "hoodie.datasource.hive_sync.jdbcurl": thrift_server.jdbc_url,
        "hoodie.datasource.hive_sync.sync_as_datasource": "false",
    }
    sync_table(path, options)
    partitions = view(metastore, database)["tables"]["trips"]["partitions"]
    assert partitions == {"o'hare; DROP TABLE x": f"file:{path}/o'hare; DROP TABLE x"}
