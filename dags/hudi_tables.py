"""Airflow DAGs for every Hudi table of the tables file (dags/tables.yaml, or the file the
HUDI_TABLES_CONFIG environment variable names): ingest, compaction, maintenance, and
Hive sync for tables that enable it. Tables are
added to the YAML file, never here."""

from hudi_airflow.dag_factory import build_dags

globals().update(build_dags())
