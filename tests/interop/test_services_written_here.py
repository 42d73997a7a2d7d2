"""Us -> Apache Hudi after table services: one history of writes and services per table type,
checked after every step against a plain in-memory model of the expected rows, and against
hudi-rs (snapshot and incremental reads). Every plan and metadata file the services leave on
the timeline is then checked to be an Avro file of Apache Hudi's schema for it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.schema.meta_fields import is_meta_field
from hudi_core.storage import Storage
from hudi_core.timeline import avro_metadata
from hudi_core.timeline.archived_timeline import read_archived_instants
from tests import datagen, oracle

SERVICE_OPTIONS = {
    "hoodie.cleaner.commits.retained": "3",
    "hoodie.keep.min.commits": "4",
    "hoodie.keep.max.commits": "6",
    "hoodie.compact.inline.max.delta.commits": "2",
}


class Model:
    """Expected rows by key, with the commit time of each row's latest version; a copy is
    kept after every commit so that rollbacks and restores can be modelled."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[dict, str]] = {}
        self.history: dict[str, dict[str, tuple[dict, str]]] = {}

    def upsert(self, batch: pa.Table, instant: str) -> None:
        for row in batch.to_pylist():
            known = self.rows.get(row["uuid"])
            if known is None or row["ts"] >= known[0]["ts"]:
                self.rows[row["uuid"]] = (row, instant)
        self.history[instant] = dict(self.rows)

    def delete(self, keys: list[str], instant: str) -> None:
        for key in keys:
            self.rows.pop(key, None)
        self.history[instant] = dict(self.rows)

    def back_to(self, instant: str) -> None:
        self.rows = dict(self.history[instant])
        self.history = {t: rows for t, rows in self.history.items() if t <= instant}

    def snapshot(self) -> list[dict]:
        return oracle.sorted_rows(
            pa.Table.from_pylist([r for r, _ in self.rows.values()], schema=datagen.SCHEMA)
        )

    def changed_after(self, begin: str) -> list[dict]:
        changed = [r for r, instant in self.rows.values() if instant > begin]
        return oracle.sorted_rows(pa.Table.from_pylist(changed, schema=datagen.SCHEMA))


def _data_rows(table: pa.Table) -> list[dict]:
    data = table.select([n for n in table.column_names if not is_meta_field(n)])
    return oracle.sorted_rows(data)


class History:
    """Drives the table and the model together and checks them after every step."""

    def __init__(self, table: HudiTable, path: str) -> None:
        self.table = table
        self.path = path
        self.model = Model()
        self.commits: list[str] = []

    def upsert(self, keys: list[int], seed: int, ts: int, operation: str = "upsert") -> str:
        batch = datagen.trips(keys, seed=seed, ts=ts)
        instant = self.table.write(batch, operation=operation)
        self.model.upsert(batch, instant)
        self.commits.append(instant)
        return instant

    def delete(self, keys: list[int]) -> str:
        batch = datagen.trips(keys, seed=0, ts=0).select(["uuid", "city"])
        instant = self.table.write(batch, operation="delete")
        self.model.delete(batch.column("uuid").to_pylist(), instant)
        self.commits.append(instant)
        return instant

    def check(self, step: str) -> None:
        ours = self.table.read()
        assert _data_rows(ours) == self.model.snapshot(), f"{step}: snapshot differs from model"
        oracle.assert_same_table(ours, oracle.snapshot(self.path), f"{step}: hudi-rs snapshot")
        self._check_incremental(step)

    def _check_incremental(self, step: str) -> None:
        active = oracle.completed_commit_times(self.path)
        latest = active[-1]
        begin = active[len(active) // 2 - 1] if len(active) > 2 else active[0]
        ours = self.table.read(query_type="incremental", begin=begin, end=latest)
        theirs = oracle.incremental(self.path, begin, latest)
        oracle.assert_same_table(ours, theirs, f"{step}: hudi-rs incremental ({begin}, {latest}]")
        assert _data_rows(ours) == self.model.changed_after(begin), f"{step}: incremental"


INDEXES = {
    "simple": {},
    "bucket": {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"},
}


@pytest.fixture(
    params=[(t, i) for t in ("MERGE_ON_READ", "COPY_ON_WRITE") for i in INDEXES], ids=str
)
def history(request, tmp_path) -> History:
    table_type, index = request.param
    path = str(tmp_path / "trips")
    table = HudiTable.create(
        path,
        name="trips",
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options={**SERVICE_OPTIONS, **INDEXES[index]},
    )
    return History(table, path)


def test_reads_agree_with_the_model_after_every_service(history: History):
    table = history.table
    history.upsert(list(range(0, 120)), seed=1, ts=1, operation="insert")
    history.check("insert")
    cleans: list[str | None] = []
    for round_number in range(2, 6):
        history.upsert(list(range(round_number, 120, 7)), seed=round_number, ts=round_number)
        history.delete(list(range(round_number * 3, 120, 29)))
        if table.table_type == "MERGE_ON_READ":
            planned = table.compaction.schedule()
            assert planned is not None, "two delta commits make a compaction due"
            assert table.compaction.run() == planned
            history.check(f"compaction {round_number}")
        cleans.append(table.clean())
        history.check(f"clean {round_number}")
        if round_number == 3:
            savepoint = history.commits[-1]
            table.savepoint(savepoint)
        archived = table.archive()
        history.check(f"archive {round_number} ({len(archived)} instants)")
    assert any(cleans), "the history is long enough for the cleaner to delete old slices"
    assert any(i.timestamp == history.commits[0] for i in table.timeline(archived=True))
    assert all(i.timestamp != history.commits[0] for i in table.timeline())

    doomed = history.upsert(list(range(50, 70)), seed=50, ts=50)
    table.rollback(doomed)
    history.model.back_to(history.commits[-2])
    history.commits.pop()
    history.check("rollback")

    history.upsert(list(range(0, 200, 3)), seed=60, ts=60)
    table.restore(savepoint)
    history.model.back_to(savepoint)
    history.check("restore")

    history.upsert(list(range(100, 140)), seed=70, ts=70)
    history.check("write after restore")
    _assert_plans_and_metadata_are_hudi_avro(Path(history.path) / ".hoodie")


# ---- every plan and metadata file is an Avro file of Apache Hudi's schema

# Which Avro record each Avro timeline file holds, by its suffix.
AVRO_FILES = {
    ".compaction.requested": "HoodieCompactionPlan",
    ".clean.requested": "HoodieCleanerPlan",
    ".clean.inflight": "HoodieCleanerPlan",
    ".clean": "HoodieCleanMetadata",
    ".rollback.requested": "HoodieRollbackPlan",
    ".rollback": "HoodieRollbackMetadata",
    ".savepoint": "HoodieSavepointMetadata",
    ".restore.requested": "HoodieRestorePlan",
    ".restore": "HoodieRestoreMetadata",
}


def _assert_plans_and_metadata_are_hudi_avro(metafolder: Path) -> None:
    seen = set()
    for file in sorted(metafolder.iterdir()):
        suffix = next(
            (s for s in sorted(AVRO_FILES, key=len, reverse=True) if file.name.endswith(s)), None
        )
        if suffix is None or not file.name[:17].isdigit() or file.stat().st_size == 0:
            continue
        _assert_schema(file.read_bytes(), AVRO_FILES[suffix], file.name)
        seen.add(AVRO_FILES[suffix])
    expected = {"HoodieCleanerPlan", "HoodieCleanMetadata", "HoodieRollbackPlan"}
    expected |= {"HoodieRollbackMetadata", "HoodieSavepointMetadata", "HoodieRestorePlan"}
    expected |= {"HoodieRestoreMetadata"}
    assert expected <= seen, f"not found on the timeline: {expected - seen}"
    archived = read_archived_instants(Storage(str(metafolder.parent)), ".hoodie/archived")
    archived_actions = {e.instant.action for e in archived}
    assert archived_actions & {"commit", "deltacommit"}, "archival wrote no commits"


def _assert_schema(data: bytes, record_name: str, file_name: str) -> None:
    """The file's own schema has Apache Hudi's record name, field names and types."""
    reader = fastavro.reader(io.BytesIO(data))
    written = json.loads(reader.metadata["avro.schema"])
    expected = avro_metadata.schema_of(record_name)
    name = written["name"]
    full_name = name if "." in name else f"{written.get('namespace')}.{name}"
    assert full_name == f"org.apache.hudi.avro.model.{record_name}", file_name
    assert [f["name"] for f in written["fields"]] == [f["name"] for f in expected["fields"]]
    assert _types(written) == _types(expected), file_name
    assert list(reader), f"{file_name} holds no record"


def _types(schema: dict) -> list[str]:
    """Field types with record names unqualified (writers may qualify them or not)."""
    return [json.dumps(_unqualified(f["type"]), sort_keys=True) for f in schema["fields"]]


def _unqualified(node):
    if isinstance(node, list):
        return [_unqualified(n) for n in node]
    if isinstance(node, str):
        return node.rsplit(".", 1)[-1]
    if not isinstance(node, dict):
        return node
    cleaned = {k: _unqualified(v) for k, v in node.items() if k not in ("namespace", "doc")}
    if "fields" in node:
        cleaned["fields"] = [{**f, "type": _unqualified(f["type"])} for f in node["fields"]]
    return cleaned


def test_incremental_reads_from_archived_commits_fall_back_to_a_full_scan(tmp_path):
    path = str(tmp_path / "trips")
    table = HudiTable.create(
        path, "trips", "COPY_ON_WRITE", ["uuid"], ["city"], "ts", options=SERVICE_OPTIONS
    )
    history = History(table, path)
    for number in range(8):  # each commit writes its own city: its own file group
        cities = [datagen.CITIES[number % 4] + str(number)]
        batch = datagen.trips(list(range(number * 10, number * 10 + 10)), 1, 1, cities)
        history.model.upsert(batch, table.write(batch))
    assert table.archive(), "eight commits exceed hoodie.keep.max.commits"
    begin = "0" * 17
    everything = history.model.changed_after(begin)
    active_only = table.read(query_type="incremental", begin=begin)
    latest = table.timeline()[-1].timestamp
    oracle.assert_same_table(active_only, oracle.incremental(path, begin, latest))
    assert len(_data_rows(active_only)) < len(everything), "archived commits are not looked at"
    fallback = {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}
    full = table.read(query_type="incremental", begin=begin, options=fallback)
    assert _data_rows(full) == everything
