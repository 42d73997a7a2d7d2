"""Runs the sync scenario in spark mode, in a driver of its own (a Hive-enabled local Spark
session on an embedded Derby metastore under the given folder), and prints the outcome as JSON:
each sync went through the driver's embedded metastore, each view is read with Spark SQL.

    python tests/hive/spark_mode_run.py TABLES_FOLDER METASTORE_FOLDER
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from hudi_core.sync import sync_table
from spark_jobs.hive_metastore import EmbeddedMetastoreClient
from tests.hive.scenario import DATABASE, run_scenario
from tests.hive.views import spark_view

MODE = {
    "hoodie.datasource.hive_sync.mode": "spark",
    # Spark SQL cannot describe a table whose provider is hudi without Apache Hudi's jars.
    "hoodie.datasource.hive_sync.sync_as_datasource": "false",
}


def main(tables: Path, metastore: Path) -> None:
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.catalogImplementation", "hive")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={metastore / 'metastore_db'};create=true",
        )
        .config("spark.sql.warehouse.dir", str(metastore / "warehouse"))
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )

    def sync(path: str, options: dict) -> dict:
        embedded = EmbeddedMetastoreClient.of_session(spark)
        return sync_table(path, options, embedded=embedded).to_json()

    outcome = run_scenario(tables, MODE, sync, lambda: spark_view(spark, DATABASE))
    print(json.dumps(outcome))
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
