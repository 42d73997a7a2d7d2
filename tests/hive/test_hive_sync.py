"""Hive sync against real metastores, in each mode, through the same scenario (see
scenario.py): a standalone Hive metastore over thrift (hms), a Spark Thrift Server over
HiveServer2 (jdbc), and the metastore embedded in a Spark driver (spark). What the metastore
holds is read back without our sync code: through thrift, or through Spark SQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_core.errors import SyncError
from hudi_core.schema.meta_fields import META_FIELDS
from hudi_core.sync import sync_table
from tests.hive.scenario import DATABASE, STEPS, TABLES, rows, run_scenario, sync_options
from tests.hive.views import thrift_view

RO_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
RT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
DATA_COLUMNS = [["id", "string"], ["ts", "bigint"], ["fare", "double"], ["passengers", "int"]]
ROOT = Path(__file__).resolve().parents[2]


def hive_tables(table_type: str) -> dict[str, str]:
    """Hive table name -> its input format, for one Hudi table."""
    name = TABLES[table_type]
    if table_type == "COPY_ON_WRITE":
        return {name: RO_FORMAT}
    return {f"{name}_ro": RO_FORMAT, f"{name}_rt": RT_FORMAT}


def check_step(outcome: dict, step: str, cities: set[str], new_columns: list, datasource: bool):
    view = outcome[step]["view"]
    assert DATABASE in view["databases"]
    expected_names = {n for t in TABLES for n in hive_tables(t)}
    assert set(view["tables"]) == expected_names
    for table_type, path in outcome["paths"].items():
        for name, input_format in hive_tables(table_type).items():
            table = view["tables"][name]
            meta = [[field, "string"] for field in META_FIELDS]
            assert table["columns"] == meta + DATA_COLUMNS + new_columns, name
            assert table["partition_keys"] == [["city", "string"]]
            assert table["location"] == f"file:{path}"
            assert table["table_type"] in ("EXTERNAL_TABLE", "EXTERNAL")
            assert table["input_format"] == input_format
            assert table["output_format"] == OUTPUT_FORMAT
            assert table["serde"] == SERDE
            synced_to = table["table_properties"]["last_commit_time_sync"]
            assert synced_to == outcome[step]["commits"][table_type]
            assert table["partitions"] == {city: f"file:{path}/{city}" for city in cities}
            if datasource:
                check_datasource_properties(table, path, read_optimized=name.endswith("_ro"))


def check_datasource_properties(table: dict, path: str, read_optimized: bool) -> None:
    serde = table["serde_properties"]
    assert serde["path"] == f"file:{path}"
    assert serde["hoodie.query.as.ro.table"] == str(read_optimized).lower()
    props = table["table_properties"]
    assert props["spark.sql.sources.provider"] == "hudi"
    assert props["spark.sql.sources.schema.numPartCols"] == "1"
    assert props["spark.sql.sources.schema.partCol.0"] == "city"
    parts = int(props["spark.sql.sources.schema.numParts"])
    schema = json.loads("".join(props[f"spark.sql.sources.schema.part.{i}"] for i in range(parts)))
    names = [f["name"] for f in schema["fields"]]
    assert names[: len(META_FIELDS)] == META_FIELDS
    assert names[-1] == "city"  # partition columns last, as Spark lays them out


def check_scenario(outcome: dict, datasource: bool) -> None:
    tip = [["tip", "double"]]
    check_step(outcome, "initial", {"sf", "nyc"}, [], datasource)
    check_step(outcome, "new_partition", {"sf", "nyc", "chennai"}, [], datasource)
    # Nothing committed: the sync changes nothing (not even a table's last DDL time).
    assert outcome["no_change"]["view"] == outcome["new_partition"]["view"]
    for result in outcome["no_change"]["results"].values():
        assert not result["hive"]["created"] and not any(
            result["hive"]["partitions_added"].values()
        )
    check_step(outcome, "new_column", {"sf", "nyc", "chennai"}, tip, datasource)
    check_step(outcome, "overwrite", {"sf", "nyc"}, tip, datasource)
    for table_type, result in outcome["overwrite"]["results"].items():
        for name in hive_tables(table_type):
            assert result["hive"]["partitions_dropped"][f"{DATABASE}.{name}"] == ["chennai"]
    assert list(outcome) == ["paths", *STEPS]


@pytest.fixture
def fresh_database(metastore):
    """The scenario's database, dropped (with its tables) before and after a test."""

    def drop() -> None:
        with metastore.client() as client:
            if DATABASE in client.get_all_databases():
                client.drop_database(DATABASE, True, True)

    drop()
    yield
    drop()


def test_hms_mode_syncs_cow_and_mor_through_commits(tmp_path, metastore, fresh_database):
    mode = {
        "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.datasource.hive_sync.metastore.uris": metastore.uri,
    }

    def view() -> dict:
        with metastore.client() as client:
            return thrift_view(client, DATABASE)

    outcome = run_scenario(tmp_path, mode, lambda p, o: sync_table(p, o).to_json(), view)
    check_scenario(outcome, datasource=True)


def test_jdbc_mode_syncs_through_the_spark_thrift_server(
    tmp_path, metastore, thrift_server, fresh_database
):
    mode = {
        "hoodie.datasource.hive_sync.mode": "jdbc",
        "hoodie.datasource.hive_sync.jdbcurl": thrift_server.jdbc_url,
        "hoodie.datasource.hive_sync.sync_as_datasource": "false",
    }

    def view() -> dict:
        with metastore.client() as client:
            return thrift_view(client, DATABASE)

    outcome = run_scenario(tmp_path, mode, lambda p, o: sync_table(p, o).to_json(), view)
    check_scenario(outcome, datasource=False)


def test_jdbc_mode_explains_what_the_spark_thrift_server_refuses(
    tmp_path, metastore, thrift_server, fresh_database
):
    from tests.hive.scenario import create_tables

    path = create_tables(tmp_path)["COPY_ON_WRITE"]
    from hudi_core import HudiTable

    HudiTable.open(path).write(rows(range(2), "sf", 1))
    options = sync_options(
        "COPY_ON_WRITE",
        {
            "hoodie.datasource.hive_sync.mode": "jdbc",
            "hoodie.datasource.hive_sync.jdbcurl": thrift_server.jdbc_url,
        },
    )
    with pytest.raises(SyncError, match="sync_as_datasource=false"):
        sync_table(path, options)
    with metastore.client() as client:
        assert client.get_all_tables(DATABASE) == []


def test_spark_mode_syncs_into_the_drivers_embedded_metastore(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    run = subprocess.run(
        [sys.executable, str(ROOT / "tests/hive/spark_mode_run.py"), tmp_path / "t", tmp_path],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    check_scenario(outcome, datasource=False)
    assert (tmp_path / "metastore_db").is_dir()  # Derby under the folder given, no server
