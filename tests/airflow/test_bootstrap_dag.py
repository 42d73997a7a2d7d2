"""The `<table>_bootstrap` DAG: built only for entries naming a `bootstrap_source_path`
(resolved like the other paths), run by hand only (no schedule, no catchup), a `bootstrap`
task (then `hive_sync` for tables that sync to Hive) spark-submitting spark_jobs/bootstrap.py
with the entry's table, fields and options; run end to end with dag.test() it makes the table
of a parquet dataset (metadata only, instant 00000000000001), records its task instance in the
commit, and the UI labels the instant."""

from __future__ import annotations

import pytest

from hudi_airflow import local_run
from hudi_airflow.tables_config import TablesConfigError, load_tables
from hudi_airflow.ui.summary import summarize
from hudi_core import HudiTable
from tests import bootstrap_source
from tests.airflow.conftest import table_entry
from tests.airflow.test_dag_integrity import _dag_bag


def _entry(tmp_path, **extra) -> dict:
    return {
        **table_entry("fares", tmp_path / "fares", tmp_path / "in"),
        "table_type": "COPY_ON_WRITE",
        **extra,
    }


def test_only_tables_naming_a_bootstrap_source_get_the_dag(tables_file, tmp_path):
    tables_file([_entry(tmp_path)])
    bag, _ = _dag_bag()
    assert "fares_bootstrap" not in bag.dag_ids
    tables_file(
        [
            _entry(
                tmp_path,
                bootstrap_source_path="warehouse/fares",
                options={"hoodie.bootstrap.parallelism": "4"},
            )
        ]
    )
    bag, caught = _dag_bag()
    assert bag.import_errors == {} and caught == []
    dag = bag.dags["fares_bootstrap"]
    assert dag.schedule is None and dag.catchup is False and dag.max_active_runs == 1
    assert {"hudi", "fares", "bootstrap"} <= set(dag.tags)
    (task,) = dag.tasks
    assert task.task_id == "bootstrap" and task.job == "bootstrap"
    assert task.application.endswith("spark_jobs/bootstrap.py")
    assert task.source_path == str(tmp_path / "warehouse" / "fares")  # from the file's folder
    assert task.job_arguments({}) == [
        "--source-path",
        str(tmp_path / "warehouse" / "fares"),
        "--table-name",
        "fares",
        "--table-type",
        "COPY_ON_WRITE",
        "--record-key-fields",
        "uuid",
        "--partition-fields",
        "city",
        "--precombine-field",
        "ts",
    ]
    assert task.hoodie_options["hoodie.bootstrap.parallelism"] == "4"
    assert task.records_task_instance and "_hoodie.airflow.dag_id" in task.hoodie_options
    (entry,) = load_tables()
    assert entry.dag_ids == ["fares_ingest", "fares_maintenance", "fares_bootstrap"]


def test_a_table_syncing_to_hive_syncs_after_its_bootstrap(tables_file, tmp_path):
    options = {"hoodie.datasource.hive_sync.enable": "true"}
    tables_file([_entry(tmp_path, bootstrap_source_path="warehouse/fares", options=options)])
    bag, _ = _dag_bag()
    dag = bag.dags["fares_bootstrap"]
    assert sorted(t.task_id for t in dag.tasks) == ["bootstrap", "hive_sync"]
    assert dag.get_task("bootstrap").downstream_task_ids == {"hive_sync"}


def test_an_empty_bootstrap_source_path_is_a_bad_entry(tables_file, tmp_path):
    path = tables_file([_entry(tmp_path, bootstrap_source_path=" ")])
    with pytest.raises(TablesConfigError, match="key 'bootstrap_source_path'"):
        load_tables(path)


@pytest.mark.spark
@pytest.mark.slow
def test_the_bootstrap_dag_makes_the_table_of_the_dataset_end_to_end(
    tables_file, tmp_path, airflow_db
):
    source = tmp_path / "warehouse"
    expected = bootstrap_source.write_source(source)
    (entry,) = load_tables(tables_file([_entry(tmp_path, bootstrap_source_path=str(source))]))
    run = local_run.run_dag("fares_bootstrap")
    assert str(run.state) == "success", local_run.task_states(run)
    assert local_run.task_states(run) == {"bootstrap": "success"}
    assert local_run.task_xcom(run, "bootstrap", "instant_time") == "00000000000001"
    result = local_run.task_xcom(run, "bootstrap")
    assert result["counts"]["instants"] == ["00000000000001"]
    table = HudiTable.open(str(tmp_path / "fares"))
    assert table.name == "fares" and table.table_type == "COPY_ON_WRITE"
    rows = table.read()
    assert bootstrap_source.data_rows(rows) == bootstrap_source.data_rows(expected)
    (row,) = summarize(entry).instants
    assert (row.timestamp, row.label) == ("00000000000001", "bootstrap (metadata only)")
    assert row.airflow is not None
    assert (row.airflow.dag_id, row.airflow.task_id) == ("fares_bootstrap", "bootstrap")
