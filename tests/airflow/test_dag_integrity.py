"""The DAGs: they import cleanly (no errors, no warnings), every task retries and has an
owner, every DAG has tags and no cycle, and the tables file alone decides which DAGs exist."""

from __future__ import annotations

import warnings

import pytest
import yaml
from hudi_airflow.tables_config import TablesConfigError, load_tables

from tests.airflow.conftest import table_entry


def _dag_bag():
    from airflow.dag_processing.dagbag import DagBag
    from hudi_airflow.local_run import REPO

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bag = DagBag(dag_folder=str(REPO / "dags"))
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
