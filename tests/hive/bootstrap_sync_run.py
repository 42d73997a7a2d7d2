"""Syncs bootstrapped tables through spark_jobs/hive_sync.py in spark mode, in a driver of its
own (the job's Hive-enabled local Spark session on an embedded Derby metastore under the given
folder), then prints, as JSON, each job's result and what the metastore holds, read with Spark
SQL (not our sync code).

    python tests/hive/bootstrap_sync_run.py METASTORE_FOLDER DATABASE TABLE_PATH...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from spark_jobs import hive_sync
from tests.hive.views import spark_view


def main(metastore: str, database: str, paths: list[str]) -> None:
    options = {
        "hoodie.datasource.hive_sync.enable": "true",
        "hoodie.datasource.hive_sync.mode": "spark",
        "hoodie.datasource.hive_sync.database": database,
        # Spark SQL cannot describe a table whose provider is hudi without Apache Hudi's jars.
        "hoodie.datasource.hive_sync.sync_as_datasource": "false",
    }
    conf = [arg for pair in options.items() for arg in ("--hoodie-conf", "=".join(pair))]
    results = [
        hive_sync.main(
            ["--base-path", path, "--metastore-dir", metastore, "--spark-master", "local[1]", *conf]
        )
        for path in paths
    ]
    # The job opens the metastore without a Spark session: read it with one of the same folder.
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.catalogImplementation", "hive")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={Path(metastore).resolve() / 'metastore_db'};create=true",
        )
        .config("spark.sql.warehouse.dir", str(Path(metastore).resolve() / "warehouse"))
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    print(json.dumps({"results": results, "view": spark_view(spark, database)}))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
