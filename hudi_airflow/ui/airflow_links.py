"""Which Airflow task made a commit, recorded in the commit and read back by the view.

The ingest and compaction operators give their Spark jobs three options named with the
commit metadata prefix (`hoodie.datasource.write.commitmeta.key.prefix`, "_" by default),
templated with the task instance's ids; hudi_core copies such options into the commit's
extraMetadata. The view reads them back and links the instant to the task instance's page of
the Airflow UI (`/dags/<dag_id>/runs/<run_id>/tasks/<task_id>`, Airflow 3's route).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from hudi_core.config import Options
from hudi_core.config import write_options as W

# Key -> template, each key after the prefix.
DAG_ID = "hoodie.airflow.dag_id"
RUN_ID = "hoodie.airflow.run_id"
TASK_ID = "hoodie.airflow.task_id"
TEMPLATES = {DAG_ID: "{{ ti.dag_id }}", RUN_ID: "{{ ti.run_id }}", TASK_ID: "{{ ti.task_id }}"}


@dataclass(frozen=True)
class AirflowTask:
    dag_id: str
    run_id: str
    task_id: str

    @property
    def path(self) -> str:
        """The task instance's page, relative to the Airflow UI's root."""
        parts = (self.dag_id, self.run_id, self.task_id)
        dag, run, task = (quote(part, safe="") for part in parts)
        return f"dags/{dag}/runs/{run}/tasks/{task}"


def _prefix(options: Mapping[str, Any]) -> str:
    return Options(options).get_option(W.COMMIT_METADATA_KEY_PREFIX)


def commit_options(options: Mapping[str, Any]) -> dict[str, str]:
    """The templated options recording the task instance in its commits; none when the
    table's options turn the commit metadata prefix off (empty)."""
    prefix = _prefix(options)
    return {f"{prefix}{key}": value for key, value in TEMPLATES.items()} if prefix else {}


def made_by(extra_metadata: Mapping[str, str], options: Mapping[str, Any]) -> AirflowTask | None:
    """The Airflow task a commit records (its extraMetadata, the table's options), if any."""
    prefix = _prefix(options)
    ids = [extra_metadata.get(f"{prefix}{key}") for key in (DAG_ID, RUN_ID, TASK_ID)]
    if not prefix or not all(ids):
        return None
    dag_id, run_id, task_id = (str(i) for i in ids)
    return AirflowTask(dag_id, run_id, task_id)
