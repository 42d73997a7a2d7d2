"""Running the table DAGs on one machine with embedded defaults, as the demo and the tests do:
a SQLite metadata database under an Airflow home folder, Spark in local mode, DAGs run through
Airflow's own `dag.test()` (tasks, XCom, retries and all, without a scheduler). Each task
try's log goes to its file under <airflow_home>/logs (local_task_logs), where `airflow
api-server` on the same home shows it.

`configure()` must run before anything imports airflow: Airflow reads its settings once.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from hudi_airflow import local_task_logs

# This repository's DAG files, in a source checkout (or an editable install of it).
DAGS_FOLDER = Path(__file__).resolve().parents[1] / "dags"
_console_level = "INFO"


def configure(
    airflow_home: Path,
    tables_file: Path,
    spark_master: str = "local[2]",
    dags_folder: Path = DAGS_FOLDER,
    *,
    console_level: str = "INFO",
) -> None:
    """Points Airflow at the DAGs, a SQLite database and the task logs in `airflow_home`, the
    tables file, and a local Spark master (connection spark_default). The provider (hooks,
    operators, the UI plugin) comes from the installed package, so the plugins folder is left
    empty. Log lines below `console_level` go to the task log files only."""
    global _console_level
    _console_level = console_level
    airflow_home.mkdir(parents=True, exist_ok=True)
    settings = {
        "AIRFLOW_HOME": str(airflow_home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(airflow_home / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "false",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{airflow_home / 'airflow.db'}",
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(airflow_home / "logs"),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": spark_master}),
        "HUDI_TABLES_CONFIG": str(tables_file),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    os.environ.update(settings)


def migrate_database() -> None:
    """What `airflow db migrate` does (a few seconds on a new SQLite file, quick after), in
    this process: the command's own interpreter would import Airflow a second time, which
    took as long as the migration itself."""
    from airflow.providers_manager import ProvidersManager
    from airflow.utils import db

    ProvidersManager().initialize_providers_configuration()  # as the command's decorator does
    logging.disable(logging.INFO)  # its progress lines (the command's went to /dev/null)
    try:
        db.upgradedb()
    finally:
        logging.disable(logging.NOTSET)


def run_dag(dag_id: str, conf: dict[str, Any] | None = None):
    """Runs one DAG once through dag.test(); returns the finished DagRun."""
    from airflow.configuration import conf as airflow_conf
    from airflow.dag_processing.dagbag import DagBag

    local_task_logs.route_task_logs(_console_level)

    bag = DagBag(dag_folder=airflow_conf.get("core", "dags_folder"))
    if bag.import_errors:
        raise RuntimeError(f"the DAGs do not load: {bag.import_errors}")
    dag = bag.dags.get(dag_id)
    if dag is None:
        raise KeyError(f"no DAG {dag_id}; DAGs: {sorted(bag.dag_ids)}")
    return dag.test(run_conf=conf)


def task_states(dag_run) -> dict[str, str]:
    return {ti.task_id: str(ti.state) for ti in dag_run.get_task_instances()}


def task_xcom(dag_run, task_id: str, key: str = "return_value") -> Any:
    """A task's XCom value in a finished run (read from the metadata database)."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        row = (
            session.query(XComModel)
            .filter_by(dag_id=dag_run.dag_id, run_id=dag_run.run_id, task_id=task_id, key=key)
            .one_or_none()
        )
        # The JSON column gives the value back decoded (deserialize_value would decode it
        # again, turning an instant time such as "20261122011434071" into a number).
        return None if row is None else row.value
