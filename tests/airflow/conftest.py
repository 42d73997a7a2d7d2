"""Airflow in the test process: its settings are read once, at the first import of airflow,
so they are set when this conftest loads (before any test module imports airflow): a SQLite
metadata database in a temporary Airflow home, this repo's DAGs, the installed Hudi
provider (no plugins folder), local Spark.
Tests choose their tables file through HUDI_TABLES_CONFIG."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from hudi_airflow import local_run

AIRFLOW_HOME = Path(tempfile.mkdtemp(prefix="hudi-airflow-home-"))
local_run.configure(AIRFLOW_HOME, AIRFLOW_HOME / "tables.yaml", spark_master="local[2]")


@pytest.fixture(scope="session")
def airflow_db():
    """The metadata database, migrated once per session."""
    local_run.migrate_database()
    return AIRFLOW_HOME / "airflow.db"


@pytest.fixture
def tables_file(tmp_path, monkeypatch):
    """Writes a tables file and points HUDI_TABLES_CONFIG at it; returns the writer."""
    import yaml

    def write(entries: list[dict]) -> Path:
        path = tmp_path / "tables.yaml"
        path.write_text(yaml.safe_dump({"tables": entries}, sort_keys=False))
        monkeypatch.setenv("HUDI_TABLES_CONFIG", str(path))
        return path

    return write


def table_entry(name: str, base_path: Path, source_path: Path, **extra) -> dict:
    """A merge-on-read trips table entry (tests/datagen.py's trips)."""
    return {
        "name": name,
        "base_path": str(base_path),
        "table_type": "MERGE_ON_READ",
        "record_key_field": "uuid",
        "partition_path_field": "city",
        "precombine_field": "ts",
        "source_path": str(source_path),
        "source_format": "parquet",
        **extra,
    }
