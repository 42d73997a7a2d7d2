"""The Spark writer tags keys deleted in a log, or stored twice, as hudi_core's local writer.

On merge-on-read a base file keeps a key its file group deleted in a log until compaction, and
an `insert` may store the key again in a new file group. SIMPLE, BLOOM and the global indexes
find keys in base files only; the Spark writer (spark_jobs.writer), as the local one, counts a
key only where its merged slice holds it live (an upsert keeps one live copy, an insert
dropping duplicates keeps keys deleted in a log), and reads the slices of file groups under a
pending compaction for the keys it finds there (an upsert of a key deleted there is an insert:
after the compaction it would live in a log only, where these indexes never look).

Every sequence writes through spark_jobs.write and checks a model of the table, by our reader
and by hudi-rs (which hides a pending compaction's logs: it judges once compactions ran).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import spark_jobs
from hudi_core import HudiTable
from tests import datagen
from tests.trips_model import TripsModel

KEYS = list(range(8))  # two keys in each of the four city partitions
DELETED = KEYS[::2]
TABLE_OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.parquet.small.file.limit": "0",  # an insert makes new file groups
}


def _schedule_compaction(path: str) -> str:
    planned = HudiTable.open(path).compaction.schedule(
        {"hoodie.compact.inline.max.delta.commits": "1"}
    )
    assert planned is not None
    return str(planned)


def _run_compaction(path: str, planned: str) -> None:
    HudiTable.open(path).compaction.run(planned)


@dataclass(frozen=True)
class Started:
    """A table of every key, the even ones deleted (in logs: their base files keep them),
    written through Spark under `index`; each test runs on a copy of it."""

    spark: Any
    index: str
    path: Path
    model: TripsModel

    def copy(self, to: Path) -> tuple[str, TripsModel]:
        shutil.copytree(self.path, to)
        model = TripsModel()
        model.rows = dict(self.model.rows)
        return str(to), model

    def write(self, path: str, batch: pa.Table, operation: str, **extra: str) -> None:
        options = {**TABLE_OPTIONS, "hoodie.index.type": self.index, **extra}
        spark_jobs.write(self.spark.createDataFrame(batch), path, operation, options)


@pytest.fixture(scope="module", params=["SIMPLE", "BLOOM", "GLOBAL_SIMPLE"])
def started(request, spark, tmp_path_factory) -> Started:
    path = tmp_path_factory.mktemp(f"started_{request.param}") / "trips"
    table = Started(spark, request.param, path, TripsModel())
    first = datagen.trips(KEYS, seed=1, ts=1)
    table.write(str(path), first, "upsert")
    table.model.upsert(first)
    deleted = datagen.trips(DELETED, seed=2, ts=2)
    table.write(str(path), deleted, "delete")
    table.model.delete(deleted)
    return table


def test_an_insert_dropping_duplicates_keeps_keys_deleted_in_a_log(started, tmp_path) -> None:
    """Only the keys live somewhere are dropped: the deleted ones are inserted again."""
    path, model = started.copy(tmp_path / "trips")
    inserted = datagen.trips(KEYS, seed=3, ts=3)
    started.write(
        path, inserted, "insert", **{"hoodie.datasource.write.insert.drop.duplicates": "true"}
    )
    model.upsert(inserted.filter(pa.array([k in DELETED for k in KEYS])))
    model.check(HudiTable.open(path), "after the insert")


def test_an_upsert_after_delete_then_inserts_leaves_the_key_once(started, tmp_path) -> None:
    """The deleted keys sit in their old base files (deleted in a log, under a pending
    compaction) and live in the new file groups of two inserts (an insert may store a key
    twice): the upsert keeps one live copy, deletes the other and does not bring the deleted
    one back."""
    path, model = started.copy(tmp_path / "trips")
    for seed in (3, 4):  # read twice now, as Apache Hudi documents: the upsert decides
        started.write(path, datagen.trips(DELETED, seed=seed, ts=3), "insert")
    planned = _schedule_compaction(path)
    upserted = datagen.trips(KEYS, seed=5, ts=5)
    started.write(path, upserted, "upsert")
    model.upsert(upserted)
    model.check(HudiTable.open(path), "after the upsert", oracle_too=False)
    _run_compaction(path, planned)
    model.check(HudiTable.open(path), "after the compaction")


def test_an_upsert_of_keys_deleted_under_a_pending_compaction_inserts_them(
    started, tmp_path
) -> None:
    """Found only in a file group under a pending compaction that deleted them, the keys are
    new: updated there, after the compaction they would live in a log only and the next
    upsert would store them a second time."""
    path, model = started.copy(tmp_path / "trips")
    planned = _schedule_compaction(path)
    again = datagen.trips(DELETED, seed=4, ts=4)
    started.write(path, again, "upsert")
    model.upsert(again)
    model.check(HudiTable.open(path), "after the upsert", oracle_too=False)
    _run_compaction(path, planned)
    model.check(HudiTable.open(path), "after the compaction")
    upserted = datagen.trips(KEYS, seed=5, ts=5)
    started.write(path, upserted, "upsert")
    model.upsert(upserted)
    model.check(HudiTable.open(path), "after the next upsert")
