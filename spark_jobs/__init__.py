"""Spark for hudi_core: the engine adapter, the distributed writer, a data source, and one
spark-submit entry point per table service (ingest, compact, cluster, clean, archive, rollback,
savepoint, restore, hive_sync, bootstrap).

The DataFrame API (importing it needs pyspark; `import spark_jobs` alone does not):

    spark_jobs.register(spark)                        # spark.read.format("hudi") in a session
    df = spark_jobs.read(spark, path, options)        # validated, partition-pruned read
    spark_jobs.write(df, path, operation="upsert", options=options, mode="append")
    df.writeStream.foreachBatch(spark_jobs.hudi_sink(path, options))  # streaming.py
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "register": "spark_jobs.datasource",
    "read": "spark_jobs.datasource",
    "write": "spark_jobs.save",
    "hudi_sink": "spark_jobs.streaming",
}

__all__ = ["hudi_sink", "read", "register", "write"]


def __getattr__(name: str) -> Any:
    """The DataFrame API, imported on first use (Airflow's side imports this package to find
    the job files, and has no need of pyspark)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'spark_jobs' has no attribute '{name}'")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
