"""Reports the bad entries of the tables file as this file's import error, shown under "DAG
Import Errors" in the Airflow UI; the good tables' DAGs come from hudi_tables.py. Apart from
it on purpose: Airflow marks every DAG of a file with an import error stale (not scheduled),
and this file has none."""

from hudi_airflow.dag_factory import check_tables_file

check_tables_file()
