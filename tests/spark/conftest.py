"""One local[2] SparkSession for the whole test session (starting one takes seconds)."""

from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    os.environ["PYSPARK_PYTHON"] = sys.executable  # executors run this venv's interpreter
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from spark_jobs import datasource

    session = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # Not spark-warehouse/ in the checkout the tests run from.
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    # Tests write small inputs: keep them on the executors, the path they test (a test of
    # the driver path for small inputs sets the option on its write).
    session.conf.set("hoodie.spark.local.threshold.bytes", "0")
    datasource.register(session)
    yield session
    session.stop()
