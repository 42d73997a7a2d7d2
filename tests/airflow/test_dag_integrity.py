"""The DAGs: they import cleanly (no errors, no warnings), every task retries and has an
owner, every DAG has tags and no cycle, and the tables file alone decides which DAGs exist
(Hive sync ones too)."""

from __future__ import annotations

import datetime
import warnings
from pathlib import Path

import pytest
import yaml

from hudi_airflow import local_run
from hudi_airflow.operators import HudiHiveSyncOperator
from hudi_airflow.tables_config import TablesConfigError, load_tables
from tests.airflow.conftest import table_entry


def _dag_bag():
    from airflow.dag_processing.dagbag import DagBag

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bag = DagBag(dag_folder=str(local_run.DAGS_FOLDER))
    return bag, [w for w in caught if "hudi" in str(w.filename) or "dags" in str(w.filename)]


def _has_cycle(dag) -> bool:
    state: dict[str, str] = {}

    def visit(task_id: str) -> bool:
        state[task_id] = "visiting"
        for child in dag.task_dict[task_id].downstream_task_ids:
            if state.get(child) == "visiting" or (child not in state and visit(child)):
                return True
        state[task_id] = "done"
        return False

    return any(task_id not in state and visit(task_id) for task_id in dag.task_dict)


def test_the_repo_dags_import_without_errors_or_warnings(monkeypatch):
    monkeypatch.delenv("HUDI_TABLES_CONFIG")  # the repo's own dags/tables.yaml
    bag, caught = _dag_bag()
    assert bag.import_errors == {}
    assert caught == [], [str(w.message) for w in caught]
    names = [entry.name for entry in load_tables()]
    assert names and all(f"{name}_ingest" in bag.dag_ids for name in names)


def test_the_compose_stacks_dags_import_and_sync_to_its_metastore(monkeypatch):
    """docker/tables.yaml, the compose stack's tables file: its DAGs build, ingest on a
    schedule, and sync in hms mode to the stack's metastore after every write."""
    stack_tables = Path(__file__).resolve().parents[2] / "docker" / "tables.yaml"
    monkeypatch.setenv("HUDI_TABLES_CONFIG", str(stack_tables))
    bag, caught = _dag_bag()
    assert bag.import_errors == {}
    assert caught == [], [str(w.message) for w in caught]
    for entry in load_tables(stack_tables):
        ingest = bag.dags[f"{entry.name}_ingest"]
        # Runs with data intervals (a backfill run ingests the files of its interval).
        assert entry.schedule and ingest.timetable.expression == entry.schedule
        assert type(ingest.timetable).__name__ == "CronDataIntervalTimetable"
        assert f"{entry.name}_hive_sync" in bag.dag_ids
        sync = ingest.task_dict["hive_sync"]
        assert sync.base_path == entry.base_path and sync.base_path.startswith("s3a://")
        assert sync.hoodie_options["hoodie.datasource.hive_sync.mode"] == "hms"
        uris = sync.hoodie_options["hoodie.datasource.hive_sync.metastore.uris"]
        assert uris == "thrift://hive-metastore:9083"
        assert sync.metastore_dir is None  # no embedded Derby metastore


def test_every_dag_has_retries_owners_tags_and_no_cycle(tables_file, tmp_path):
    tables_file(
        [
            table_entry("rides", tmp_path / "rides", tmp_path / "in", owner="mobility"),
            {
                **table_entry("fares", tmp_path / "fares", tmp_path / "in2"),
                "table_type": "COPY_ON_WRITE",
            },
        ]
    )
    bag, caught = _dag_bag()
    assert bag.import_errors == {} and caught == []
    assert sorted(bag.dag_ids) == [
        "fares_ingest",
        "fares_maintenance",
        "rides_compaction",
        "rides_ingest",
        "rides_maintenance",
    ]
    for dag in bag.dags.values():
        assert {"hudi", dag.dag_id.split("_")[0]} <= set(dag.tags), dag.dag_id
        assert dag.max_active_runs == 1
        assert not _has_cycle(dag), dag.dag_id
        for task in dag.tasks:
            assert task.retries >= 1, f"{dag.dag_id}.{task.task_id} has no retries"
            assert task.owner not in ("", "airflow"), f"{dag.dag_id}.{task.task_id}"
    assert bag.dags["rides_ingest"].tasks[0].owner == "mobility"
    compaction = bag.dags["rides_compaction"]
    assert compaction.task_dict["schedule_compaction"].downstream_task_ids == {"execute_compaction"}


def test_adding_a_table_to_the_yaml_adds_its_dags(tables_file, tmp_path):
    first = table_entry("rides", tmp_path / "rides", tmp_path / "in")
    tables_file([first])
    before, _ = _dag_bag()
    tables_file([first, table_entry("scooters", tmp_path / "scooters", tmp_path / "in3")])
    after, _ = _dag_bag()
    added = set(after.dag_ids) - set(before.dag_ids)
    assert added == {"scooters_ingest", "scooters_compaction", "scooters_maintenance"}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"table_type": "MERGE_ON_WRITE"}, "key 'table_type'"),
        ({"source_format": "xml"}, "key 'source_format'"),
        ({"record_key_field": None}, "key 'record_key_field' is required"),
        ({"retries": "three"}, "key 'retries'"),
        ({"options": {"compaction.max": 3}}, "key 'options'"),
        ({"colour": "blue"}, "unknown key 'colour'"),
        ({"name": "bad-name"}, "key 'name'"),
        ({"metastore_dir": 3}, "key 'metastore_dir'"),
        ({"metastore_dir": " "}, "key 'metastore_dir'"),
        ({"hive_sync_schedule": ["@daily"]}, "key 'hive_sync_schedule'"),
        ({"options": {"hoodie.datasource.hive_sync.enable": "yes"}}, "key 'options'"),
        ({"options": {"sink.partition-commit.policy.kind": "email"}}, "key 'options'"),
    ],
)
def test_a_bad_entry_fails_parsing_naming_the_entry_and_key(tables_file, tmp_path, change, named):
    good = table_entry("rides", tmp_path / "rides", tmp_path / "in")
    bad = {**table_entry("broken", tmp_path / "b", tmp_path / "in"), **change}
    bad = {k: v for k, v in bad.items() if v is not None}
    path = tables_file([good, bad])
    with pytest.raises(TablesConfigError) as raised:
        load_tables(path)
    assert "table entry #2" in str(raised.value) and named in str(raised.value)
    bag, _ = _dag_bag()  # and the DAG file reports it as an import error
    errors = " ".join(str(e) for e in bag.import_errors.values())
    assert "table entry #2" in errors and named in errors


def test_relative_paths_are_taken_from_the_tables_file_folder(tmp_path):
    path = tmp_path / "conf" / "tables.yaml"
    path.parent.mkdir()
    entry = table_entry("rides", "../lake/rides", "s3://landing/rides")  # type: ignore[arg-type]
    path.write_text(yaml.safe_dump({"tables": [entry]}))
    (loaded,) = load_tables(path)
    assert loaded.base_path == str(tmp_path / "lake" / "rides")
    assert loaded.source_path == "s3://landing/rides"
    assert loaded.hoodie_options()["hoodie.datasource.write.recordkey.field"] == "uuid"
    assert loaded.metastore_dir is None  # Spark's default metastore
    path.write_text(yaml.safe_dump({"tables": [{**entry, "metastore_dir": "../metastore"}]}))
    (loaded,) = load_tables(path)
    assert loaded.metastore_dir == str(tmp_path / "metastore")


HIVE_SYNC = {"hoodie.datasource.hive_sync.enable": True}


def _downstream(dag, task_id: str) -> set[str]:
    return set(dag.task_dict[task_id].downstream_task_ids)


def test_hive_sync_tables_sync_after_every_write_and_on_their_schedule(tables_file, tmp_path):
    tables_file(
        [
            table_entry(
                "rides",
                tmp_path / "rides",
                tmp_path / "in",
                options=HIVE_SYNC,
                metastore_dir=str(tmp_path / "metastore"),
            ),
            {  # partition commit alone (success files) runs the sync job too
                **table_entry("fares", tmp_path / "fares", tmp_path / "in2"),
                "table_type": "COPY_ON_WRITE",
                "hive_sync_schedule": "@daily",
                "options": {"sink.partition-commit.policy.kind": "success-file"},
            },
            table_entry("plain", tmp_path / "plain", tmp_path / "in3"),
        ]
    )
    bag, caught = _dag_bag()
    assert bag.import_errors == {} and caught == []
    assert sorted(bag.dag_ids) == [
        "fares_hive_sync",
        "fares_ingest",
        "fares_maintenance",
        "plain_compaction",
        "plain_ingest",
        "plain_maintenance",
        "rides_compaction",
        "rides_hive_sync",
        "rides_ingest",
        "rides_maintenance",
    ]
    rides = {kind: bag.dags[f"rides_{kind}"] for kind in ("ingest", "compaction", "hive_sync")}
    assert _downstream(rides["ingest"], "ingest") == {"hive_sync"}
    assert _downstream(rides["compaction"], "schedule_compaction") == {"execute_compaction"}
    assert _downstream(rides["compaction"], "execute_compaction") == {"hive_sync"}
    assert list(rides["hive_sync"].task_dict) == ["hive_sync"]
    assert set(rides["hive_sync"].tags) == {"hudi", "rides", "hive_sync"}
    assert rides["hive_sync"].schedule == "@hourly"  # the default schedule
    assert bag.dags["fares_hive_sync"].schedule == "@daily"
    assert _downstream(bag.dags["fares_ingest"], "ingest") == {"hive_sync"}
    for dag in rides.values():
        sync = dag.task_dict["hive_sync"]
        assert isinstance(sync, HudiHiveSyncOperator) and sync.retries == 2
        assert sync.metastore_dir == str(tmp_path / "metastore")
        assert sync.base_path == str(tmp_path / "rides")
        assert sync.hoodie_options["hoodie.datasource.hive_sync.enable"] == "true"
        assert sync.trigger_rule == "all_success"  # skipped when the compaction is
    assert bag.dags["fares_hive_sync"].task_dict["hive_sync"].metastore_dir is None
    # Only the scheduled sync moves the partition-time watermark.
    assert not rides["ingest"].task_dict["hive_sync"].watermark
    assert not rides["compaction"].task_dict["hive_sync"].watermark
    # Tables without Hive sync keep exactly their DAGs and tasks.
    for kind, tasks in (
        ("ingest", ["ingest"]),
        ("compaction", ["schedule_compaction", "execute_compaction"]),
        ("maintenance", ["clean", "archive"]),
    ):
        assert list(bag.dags[f"plain_{kind}"].task_dict) == tasks


def test_the_scheduled_sync_passes_the_data_interval_end_as_watermark(tables_file, tmp_path):
    tables_file([table_entry("rides", tmp_path / "rides", tmp_path / "in", options=HIVE_SYNC)])
    bag, _ = _dag_bag()
    dag = bag.dags["rides_hive_sync"]
    template = dag.task_dict["hive_sync"].watermark
    environment = dag.get_template_env()  # Airflow's: undefined names raise
    end = datetime.datetime(2026, 11, 21, 1, 0, tzinfo=datetime.UTC)
    scheduled = environment.from_string(template).render(data_interval_end=end)
    assert scheduled == "2026-11-21T01:00:00+00:00"
    # A manual run without a logical date has no data interval (Airflow 3): no watermark.
    assert environment.from_string(template).render() == ""
    assert environment.from_string(template).render(data_interval_end=None) == ""


def test_syncs_to_hive_follows_the_options(tmp_path):
    path = tmp_path / "tables.yaml"
    cases = {
        "hive": {"hoodie.datasource.hive_sync.enable": "true"},
        "meta": {"hoodie.datasource.meta.sync.enable": True},
        "commit": {"sink.partition-commit.policy.kind": "success-file"},
        "both": {
            "hoodie.datasource.hive_sync.enable": "true",
            "sink.partition-commit.policy.kind": "metastore, success-file",
        },
        "off": {"hoodie.datasource.hive_sync.enable": False},
        "empty": {"sink.partition-commit.policy.kind": ""},
        "none": {},
    }
    entries = [
        table_entry(name, tmp_path / name, tmp_path / "in", options=options)
        for name, options in cases.items()
    ]
    path.write_text(yaml.safe_dump({"tables": entries}))
    syncing = {entry.name for entry in load_tables(path) if entry.syncs_to_hive}
    assert syncing == {"hive", "meta", "commit", "both"}


@pytest.mark.airflow
def test_the_compaction_dags_sync_is_skipped_with_the_compaction(tables_file, tmp_path, airflow_db):
    """No table yet: planning skips, and the skip reaches the sync (no Spark job runs)."""
    tables_file([table_entry("rides", tmp_path / "rides", tmp_path / "in", options=HIVE_SYNC)])
    dag_run = local_run.run_dag("rides_compaction")
    assert local_run.task_states(dag_run) == {
        "schedule_compaction": "skipped",
        "execute_compaction": "skipped",
        "hive_sync": "skipped",
    }
    assert str(dag_run.state) == "success"
