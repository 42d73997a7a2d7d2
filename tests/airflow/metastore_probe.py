"""Prints, as JSON, what an embedded (Derby) Hive metastore holds for some tables, read in a
driver of its own: a Hive-enabled local Spark session on the metastore under the given folder
(never creating one), the way a Spark user would open it.

    python tests/airflow/metastore_probe.py METASTORE_FOLDER DATABASE TABLE [TABLE ...]

Output: {"tables": [names spark.catalog.listTables(DATABASE) shows], "<table>": {"input_format",
"location", "parameters", "partitions": [{"values", "location"}]} or null when missing}.
The tables are read through the metastore itself (spark_jobs.hive_metastore): Spark's own
DESCRIBE would load their provider (hudi, from sync_as_datasource), whose jars are not here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hmsclient.genthrift.hive_metastore import ttypes
from pyspark.sql import SparkSession

from spark_jobs.hive_metastore import EmbeddedMetastoreClient


def probe(metastore: Path, database: str, tables: list[str]) -> dict:
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("metastore-probe")
        .config("spark.sql.catalogImplementation", "hive")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={metastore / 'metastore_db'};create=false",
        )
        .config("spark.sql.warehouse.dir", str(metastore / "warehouse"))
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        # Derby's log next to the metastore, not in the working directory.
        spark._jvm.java.lang.System.setProperty(
            "derby.stream.error.file", str(metastore / "derby.log")
        )
        found: dict = {"tables": sorted(t.name for t in spark.catalog.listTables(database))}
        client = EmbeddedMetastoreClient.of_session(spark)
        for name in tables:
            found[name] = _table(client, database, name)
        client.close()
        return found
    finally:
        spark.stop()


def _table(client: EmbeddedMetastoreClient, database: str, name: str) -> dict | None:
    try:
        table = client.get_table(database, name)
    except ttypes.NoSuchObjectException:
        return None
    partitions = client.get_partitions(database, name, -1)
    return {
        "input_format": table.sd.inputFormat,
        "location": table.sd.location,
        "parameters": dict(table.parameters or {}),
        "partitions": sorted(
            ({"values": list(p.values), "location": p.sd.location} for p in partitions),
            key=lambda p: p["values"],
        ),
    }


if __name__ == "__main__":
    folder, db, *names = sys.argv[1:]
    print(json.dumps(probe(Path(folder).resolve(), db, names), sort_keys=True))
