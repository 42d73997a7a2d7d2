"""Airflow DAGs for every Hudi table of the tables file (dags/tables.yaml, or the file the
HUDI_TABLES_CONFIG environment variable names): ingest, compaction, maintenance, and
Hive sync for tables that enable it. Tables are
added to the YAML file, never here. The DAG factory comes from the installed Hudi provider
(`pip install hudi-airflow[airflow]`), not from the plugins folder."""

from hudi_airflow.dag_factory import build_dags

globals().update(build_dags())
