"""One bad entry of the tables file costs only its own tables: `read_tables` keeps the good
entries and reports each bad one; dags/hudi_tables.py builds the good tables' DAGs, and
dags/hudi_tables_check.py reports the bad entries as its import error (what Airflow shows
under "DAG Import Errors"), so that the good DAGs stay active in Airflow's database."""

from __future__ import annotations

import warnings

import pytest

from hudi_airflow import local_run
from hudi_airflow.tables_config import (
    EntryError,
    TableEntry,
    TablesConfigError,
    load_tables,
    read_tables,
)
from tests.airflow.conftest import table_entry

GOOD_DAGS = [
    "fares_compaction",
    "fares_ingest",
    "fares_maintenance",
    "rides_compaction",
    "rides_ingest",
    "rides_maintenance",
]
BUNDLE = "dags-folder"  # Airflow's default bundle of the DAGs folder


def _dag_bag(**bundle):
    from airflow.dag_processing.dagbag import DagBag

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DagBag(dag_folder=str(local_run.DAGS_FOLDER), **bundle)


def _entries(tmp_path) -> list:
    return [
        table_entry("rides", tmp_path / "rides", tmp_path / "in"),
        {**table_entry("broken", tmp_path / "b", tmp_path / "in"), "table_type": "MERGE_ON_WRITE"},
        "not a mapping",
        table_entry("rides", tmp_path / "again", tmp_path / "in"),  # a repeated name
        {**table_entry("fares", tmp_path / "fares", tmp_path / "in"), "source_format": "json"},
    ]


def test_reading_keeps_the_good_entries_and_reports_each_bad_one(tables_file, tmp_path):
    path = tables_file(_entries(tmp_path))

    tables = read_tables(path)

    assert [type(item) for item in tables.items] == [
        TableEntry,
        EntryError,
        EntryError,
        EntryError,
        TableEntry,
    ]
    assert [entry.name for entry in tables.entries] == ["rides", "fares"]
    assert [(e.number, e.name) for e in tables.errors] == [(2, "broken"), (3, None), (4, "rides")]
    broken, not_mapping, repeated = (e.message for e in tables.errors)
    assert "table entry #2 ('broken'): key 'table_type'" in broken
    assert "table entry #3: must be a mapping" in not_mapping
    assert "table entry #4 ('rides'): key 'name' repeats" in repeated
    with pytest.raises(TablesConfigError, match="table entry #2"):
        load_tables(path)  # the strict reading refuses the file


def test_the_good_tables_get_their_dags_and_the_bad_ones_an_import_error(tables_file, tmp_path):
    tables_file(_entries(tmp_path))

    bag = _dag_bag()

    assert sorted(bag.dag_ids) == GOOD_DAGS
    ((source, error),) = bag.import_errors.items()
    assert source.endswith("hudi_tables_check.py")
    assert "3 bad table entries" in error
    for named in ("#2 ('broken'): key 'table_type'", "#3: must be", "#4 ('rides'): key 'name'"):
        assert named in error


def test_a_good_file_has_no_import_error(tables_file, tmp_path):
    tables_file([table_entry("rides", tmp_path / "rides", tmp_path / "in")])
    bag = _dag_bag()
    assert bag.import_errors == {} and len(bag.dag_ids) == 3


def test_a_file_that_is_no_list_of_entries_fails_the_dag_file(tables_file, tmp_path):
    tables_file([]).write_text("tables: 3\n")
    ((source, error),) = _dag_bag().import_errors.items()  # reported once, by hudi_tables.py
    assert source.endswith("hudi_tables.py") and "must hold 'tables:'" in error


@pytest.mark.airflow
def test_in_airflows_database_the_good_dags_stay_active(tables_file, tmp_path, airflow_db):
    """What the DAG processor records: the good DAGs active, the error on the check file."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import sync_bag_to_db
    from airflow.models import DagModel
    from airflow.models.errors import ParseImportError
    from airflow.utils.session import create_session

    tables_file(_entries(tmp_path))
    DagBundlesManager().sync_bundles_to_db()
    bag = _dag_bag(bundle_path=local_run.DAGS_FOLDER, bundle_name=BUNDLE)

    sync_bag_to_db(bag, BUNDLE, None)

    with create_session() as session:
        dags = session.query(DagModel).filter(DagModel.dag_id.in_(GOOD_DAGS)).all()
        assert sorted(d.dag_id for d in dags) == GOOD_DAGS
        assert not any(d.is_stale or d.has_import_errors for d in dags)
        errors = session.query(ParseImportError).filter_by(bundle_name=BUNDLE).all()
        assert [e.filename for e in errors] == ["hudi_tables_check.py"]
        assert "table entry #2 ('broken')" in errors[0].stacktrace
