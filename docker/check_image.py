"""Build-time check of the stack's image (docker/Dockerfile runs it as its last step).

Fails the build when the image would only fail later, inside a task: a version other than the
pinned one, Java or Spark's launcher missing where the environment points, a module the stack
needs missing (pyarrow's S3 file system for the lake on MinIO, hmsclient for the metastore),
an executor Python other than the one holding the project, the Hudi provider not registered
with Airflow, or a pyspark whose files pyspark-client overwrote (plain DataFrames still work
then; Python UDFs and mapInArrow do not, so one of each runs).

    python docker/check_image.py --airflow 3.3.2 --pyspark 4.3.0
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from importlib.metadata import version
from pathlib import Path

MODULES = (
    "hudi_core",
    "spark_jobs",
    "hudi_airflow.operators",
    "airflow.providers.apache.spark",
    "psycopg2",
    "asyncpg",  # Airflow's async sessions on PostgreSQL (the postgres extra, docs/deploy.md)
    "fastavro",
    # The stack's lake is on MinIO: hudi_core and the sample-data service reach it through
    # pyarrow's S3 file system (a pyarrow built without S3 lacks this module).
    "hudi_core.filesystems",
    "pyarrow._s3fs",
    # Hive sync in hms mode (the stack's tables) talks thrift to the metastore with hmsclient.
    "hmsclient",
)
HUDI_PROVIDER = "hudi-airflow"


def problems(airflow_version: str, pyspark_version: str) -> list[str]:
    found = []
    for dist, wanted in (("apache-airflow", airflow_version), ("pyspark", pyspark_version)):
        if version(dist) != wanted:
            found.append(f"{dist} {version(dist)} is installed, the image pins {wanted}")
    for module in MODULES:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            found.append(f"cannot import {module}: {exc}")
    from airflow.providers_manager import ProvidersManager

    if HUDI_PROVIDER not in ProvidersManager().providers:
        found.append(f"Airflow does not list the {HUDI_PROVIDER} provider (its entry point)")
    import pyspark

    spark_home = Path(os.environ.get("SPARK_HOME", "/nonexistent"))
    if spark_home.resolve() != Path(pyspark.__file__).resolve().parent:
        found.append(f"SPARK_HOME={spark_home} is not the installed pyspark's folder")
    for tool in ("spark-class", "spark-submit"):
        if not os.access(spark_home / "bin" / tool, os.X_OK):
            found.append(f"{spark_home / 'bin' / tool} is missing or not executable")
    java = Path(os.environ.get("JAVA_HOME", "/nonexistent")) / "bin" / "java"
    if not os.access(java, os.X_OK):
        found.append(f"{java} is missing: JAVA_HOME does not point at a Java runtime")
    python = os.environ.get("PYSPARK_PYTHON", "")
    if os.path.realpath(python) != os.path.realpath(sys.executable):
        found.append(f"PYSPARK_PYTHON={python!r} is not this interpreter ({sys.executable})")
    return found


def run_python_on_spark() -> None:
    """A Python UDF and a mapInArrow on local[1]: both fail on a clobbered pyspark."""
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import udf

    spark = SparkSession.builder.master("local[1]").appName("image-check").getOrCreate()
    try:
        plus_one = udf(lambda n: n + 1, "long")
        rows = spark.range(3).select(plus_one("id").alias("n")).collect()
        assert [row.n for row in rows] == [1, 2, 3], rows

        def doubled(batches):
            import pyarrow as pa
            import pyarrow.compute as pc

            for batch in batches:
                yield pa.RecordBatch.from_arrays([pc.multiply(batch.column(0), 2)], ["id"])

        rows = spark.range(3).mapInArrow(doubled, "id long").collect()
        assert sorted(row.id for row in rows) == [0, 2, 4], rows
    finally:
        spark.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--airflow", required=True, help="the apache-airflow version pinned")
    parser.add_argument("--pyspark", required=True, help="the pyspark version pinned")
    args = parser.parse_args(argv)
    found = problems(args.airflow, args.pyspark)
    if found:
        print("image check failed:\n  " + "\n  ".join(found), file=sys.stderr)
        return 1
    run_python_on_spark()
    print("image check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
