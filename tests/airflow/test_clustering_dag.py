"""The `<table>_clustering` DAG: built only for tables whose entry sets `clustering_schedule`,
`schedule_clustering >> execute_clustering` with one instant through XCom; run end to end with
dag.test() it clusters a copy-on-write table of small commits (spark-submit of
spark_jobs/cluster.py), and the UI summary lists a pending clustering."""

from __future__ import annotations

import pytest

from hudi_airflow import local_run
from hudi_airflow.tables_config import load_tables
from hudi_airflow.ui.app import templates
from hudi_airflow.ui.summary import summarize
from hudi_core import HudiTable
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.timeline import ActiveTimeline
from tests import datagen, oracle
from tests.airflow.conftest import table_entry
from tests.airflow.test_dag_integrity import _dag_bag

SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}


def _entry(tmp_path, **extra) -> dict:
    return {
        **table_entry("fares", tmp_path / "fares", tmp_path / "in"),
        "table_type": "COPY_ON_WRITE",
        "options": SMALL_FILES,
        **extra,
    }


def _small_commits(path: str, commits: int) -> HudiTable:
    table = HudiTable.create(
        path, "fares", "COPY_ON_WRITE", ["uuid"], ["city"], "ts", options=SMALL_FILES
    )
    for n in range(commits):
        table.write(datagen.trips(list(range(8 * n, 8 * n + 8)), seed=n, ts=n))
    return table


def test_only_tables_asking_for_clustering_get_the_dag(tables_file, tmp_path):
    tables_file([_entry(tmp_path), {**_entry(tmp_path / "b"), "name": "rides"}])
    bag, _ = _dag_bag()
    assert "fares_clustering" not in bag.dag_ids and "rides_clustering" not in bag.dag_ids
    tables_file([_entry(tmp_path, clustering_schedule="@daily")])
    bag, caught = _dag_bag()
    assert bag.import_errors == {} and caught == []
    dag = bag.dags["fares_clustering"]
    assert dag.schedule == "@daily"
    assert dag.task_dict["schedule_clustering"].downstream_task_ids == {"execute_clustering"}
    execute = dag.task_dict["execute_clustering"]
    assert "schedule_clustering" in execute.instant_time and execute.job == "cluster"
    (entry,) = load_tables()
    assert entry.dag_ids == ["fares_ingest", "fares_clustering", "fares_maintenance"]


def test_the_ui_summary_lists_pending_clusterings(tables_file, tmp_path):
    path = str(tmp_path / "fares")
    table = _small_commits(path, 3)
    planned = table.clustering.schedule()
    (entry,) = load_tables(tables_file([_entry(tmp_path, clustering_schedule="@daily")]))
    summary = summarize(entry)
    assert [(c.timestamp, c.state, c.file_groups) for c in summary.pending_clusterings] == [
        (planned, "REQUESTED", 12)
    ]
    page = templates.env.get_template("index.html").render(
        tables=[summary], config_error=None, config_path="tables.yaml", user_name="admin"
    )
    row = page.split(f'<tr class="pending-clustering" data-instant="{planned}">')[1]
    assert '<td class="file-groups">12</td>' in row.split("</tr>")[0]


@pytest.mark.spark
@pytest.mark.slow
def test_the_clustering_dag_clusters_a_table_end_to_end(tables_file, tmp_path, airflow_db):
    path = str(tmp_path / "fares")
    table = _small_commits(path, 3)
    before = table.read().drop_columns(["_hoodie_file_name"])
    tables_file([_entry(tmp_path, clustering_schedule="@daily")])
    run = local_run.run_dag("fares_clustering")
    assert str(run.state) == "success", local_run.task_states(run)
    assert local_run.task_states(run) == {
        "schedule_clustering": "success",
        "execute_clustering": "success",
    }
    clustered = local_run.task_xcom(run, "execute_clustering", "instant_time")
    done = ActiveTimeline.load(table.storage).find(clustered)
    assert done is not None and (done.action, done.is_completed) == ("replacecommit", True)
    slices = FileSystemView(table.storage, ActiveTimeline.load(table.storage)).latest_slices()
    assert len(slices) == 4  # one file group per city, from twelve
    after = table.read()
    assert oracle.sorted_rows(after.drop_columns(["_hoodie_file_name"])) == oracle.sorted_rows(
        before
    )
    oracle.assert_same_table(after, oracle.snapshot(path), "clustered by the DAG (hudi-rs)")
