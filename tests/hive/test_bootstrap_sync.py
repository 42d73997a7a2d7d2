"""Hive sync of bootstrapped tables through spark_jobs/hive_sync.py (spark mode, the driver's
embedded metastore): a metadata-only bootstrap (copy-on-write) and a mixed one (merge-on-read:
one partition referenced, one rewritten) register their tables, columns and partitions, and
last_commit_time_sync holds the bootstrap's instant: 00000000000001, or 00000000000002 when a
full-record partition was rewritten after the skeletons."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hudi_core import HudiTable
from hudi_core.schema.meta_fields import META_FIELDS
from tests import bootstrap_source

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "bootstrapped"
DATA_COLUMNS = [["uuid", "string"], ["ts", "bigint"], ["fare", "double"]]


def _bootstrap(tmp_path: Path, name: str, table_type: str, options: dict) -> str:
    path = str(tmp_path / name)
    HudiTable.bootstrap(
        path,
        str(tmp_path / "source"),
        name,
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options=options,
    )
    return path


def test_bootstrapped_tables_sync_to_their_bootstrap_instant(tmp_path):
    bootstrap_source.write_source(tmp_path / "source")
    cow = _bootstrap(tmp_path, "meta_trips", "COPY_ON_WRITE", {})
    mor = _bootstrap(tmp_path, "mixed_trips", "MERGE_ON_READ", bootstrap_source.MIXED_MODES)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests/hive/bootstrap_sync_run.py"),
            str(tmp_path / "metastore"),
            DATABASE,
            cow,
            mor,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    cow_result, mor_result = outcome["results"]
    assert (cow_result["instant_time"], cow_result["state"]) == ("00000000000001", "COMPLETED")
    assert (mor_result["instant_time"], mor_result["state"]) == ("00000000000002", "COMPLETED")
    tables = outcome["view"]["tables"]
    assert sorted(tables) == ["meta_trips", "mixed_trips_ro", "mixed_trips_rt"]
    for name, path, synced_to in (
        ("meta_trips", cow, "00000000000001"),
        ("mixed_trips_ro", mor, "00000000000002"),
        ("mixed_trips_rt", mor, "00000000000002"),
    ):
        table = tables[name]
        assert table["table_properties"]["last_commit_time_sync"] == synced_to, name
        assert table["columns"] == [[f, "string"] for f in META_FIELDS] + DATA_COLUMNS, name
        assert table["partition_keys"] == [["city", "string"]]
        assert table["partitions"] == {
            city: f"file:{path}/city={city}" for city in bootstrap_source.CITIES
        }, name
