"""Spark for hudi_core: the engine adapter, the distributed writer, a data source, and one
spark-submit entry point per table service (ingest, compact, clean, archive, rollback,
savepoint, restore, hive_sync)."""
