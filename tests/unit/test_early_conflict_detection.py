"""Early conflict detection under optimistic concurrency
(hoodie.write.concurrency.early.conflict.detection.*), writes interleaved by hand in one
process: a write whose file groups a live writer's markers name (or, with the transaction
strategy, a commit completed since it started changed) fails with WriteConflictError before
it makes any marker or data file, and is rolled back; a dead writer's markers block nothing;
without the option the conflict is found at commit, as before; a strategy we cannot run is
refused before the write's instant exists."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.config import lock_options as L
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, WriteConflictError
from hudi_core.index.bucket_id import bucket_ids
from hudi_core.lock.early_conflicts import EarlyConflictDetection
from hudi_core.model.commit_metadata import CommitMetadata, WriteStat
from hudi_core.model.file_names import base_file_name
from hudi_core.services.heartbeat import HEARTBEAT_FOLDER
from hudi_core.timeline import ActiveTimeline, State, avro_metadata
from hudi_core.write.client import WriteClient, WriteJob
from hudi_core.write.markers import TEMP_FOLDER, Markers
from hudi_core.write.transaction import WriteTransaction
from tests import datagen
from tests.tables import create_trips_table, data_files

OCC = {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL"}
ENABLE = L.EARLY_CONFLICT_DETECTION_ENABLE.key
STRATEGY = L.EARLY_CONFLICT_DETECTION_STRATEGY.key
EARLY = {ENABLE: "true"}  # the default strategy: live writers' markers
TRANSACTION = {ENABLE: "true", STRATEGY: L.TRANSACTION_DETECTION}
BUCKETS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}
KEYS = list(range(40))  # ten keys per city: key k lives in datagen.CITIES[k % 4]
SF, NY = datagen.CITIES[:2]
FOUND_EARLY = "found by early conflict detection, before the write wrote any data file"
IN_FLIGHT = re.compile(
    r"^write (\d{17}) conflicts with (\w+) (\d{17}), which is in flight \(its writer is "
    r"alive\) and writes the same file groups: (.+); " + re.escape(FOUND_EARLY)
)
COMPLETED = re.compile(r"write (\d{17}) conflicts with (\w+) (\d{17}), which completed")


def _keys_in(city: str) -> list[int]:
    return [k for k in KEYS if datagen.CITIES[k % len(datagen.CITIES)] == city]


def _create(tmp_path: Path, table_type: str, options: dict | None = None) -> tuple[str, HudiTable]:
    path, table = create_trips_table(tmp_path, table_type, {**OCC, **(options or {})})
    table.write(datagen.trips(KEYS, seed=1, ts=1))
    return path, table


def _start(table: HudiTable, options: dict | None = None) -> WriteJob:
    """An upsert that has loaded the timeline, as a writer does before it plans."""
    client = WriteClient(table.storage, table.config, table.engine)
    return client.start("upsert", {**table.options, **(options or {})})


def _run(job: WriteJob, batch: pa.Table) -> str:
    return job.run(*job.prepare(batch))


def _rows(table: HudiTable) -> dict[str, int]:
    """Each key's ts, as our reader sees the table."""
    read = table.read().select(["uuid", "ts"]).to_pylist()
    return {row["uuid"]: row["ts"] for row in read}


def _file_id(path: str, city: str) -> str:
    """The one file group of `city` (each city's ten keys fill one)."""
    names = [f.split("/")[-1] for f in data_files(path) if f.startswith(f"{city}/")]
    ids = {name.lstrip(".").split("_")[0] for name in names}
    assert len(ids) == 1, ids
    return ids.pop()


def _rollback_of(table: HudiTable, instant_time: str) -> dict | None:
    """The completed rollback's metadata if `instant_time` left the timeline through one (and
    its marker folder is gone), else None."""
    timeline = table.timeline()
    if any(i.timestamp == instant_time for i in timeline):
        return None
    hoodie = Path(table.storage.base_path) / ".hoodie"
    if (hoodie / ".temp" / instant_time).exists():
        return None
    for rollback in (i for i in timeline if i.action == "rollback" and i.is_completed):
        metadata = avro_metadata.deserialize((hoodie / rollback.file_name).read_bytes())
        if metadata["commitsRollback"] == [instant_time]:
            return metadata
    return None


@pytest.fixture
def paused_write(monkeypatch) -> Callable[[Callable[[str], object]], None]:
    """paused_write(action) runs `action(instant_time)` once inside the next write, when its
    data files are written (its markers name them, its heartbeat beats) and it has not yet
    committed: a live writer at work."""

    def arrange(action: Callable[[str], object]) -> None:
        original = WriteTransaction.complete
        fired = []

        def hooked(self, *args, **kwargs):
            if not fired:
                fired.append(self.instant_time)  # first, so a write inside `action` passes
                action(self.instant_time)
            original(self, *args, **kwargs)

        monkeypatch.setattr(WriteTransaction, "complete", hooked)

    return arrange


@pytest.fixture
def marking(monkeypatch) -> list[str]:
    """The instant times that made a marker (every data file of a write follows its marker),
    in order."""
    made: list[str] = []
    original = Markers.create

    def create(self, data_file, io_type):
        made.append(self.folder.rsplit("/", 1)[-1])
        original(self, data_file, io_type)

    monkeypatch.setattr(Markers, "create", create)
    return made


# ---- a live writer's markers


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_live_writers_markers_fail_a_write_on_their_file_group_before_it_writes(
    tmp_path, table_type, paused_write, marking
):
    path, table = _create(tmp_path, table_type)
    group = _file_id(path, SF)
    seen: dict = {}

    def second_writer(first: str) -> None:
        assert Markers(table.storage, first).all(), "the first write is at work"
        before = data_files(path)
        with pytest.raises(WriteConflictError) as caught:
            _run(_start(table, EARLY), datagen.trips(_keys_in(SF)[:5], 3, ts=3))
        # At once, while the first write still runs: nothing of the second is left.
        loser, action, other, groups = IN_FLIGHT.search(str(caught.value)).groups()
        seen.update(loser=loser, first=first, other=other, action=action, groups=groups)
        assert data_files(path) == before
        assert not [f for f in data_files(path) if loser in f]
        assert not (Path(path) / TEMP_FOLDER / loser).exists()
        assert loser not in marking
        rollback = _rollback_of(table, loser)
        assert rollback is not None and rollback["totalFilesDeleted"] == 0

    paused_write(second_writer)
    first = _run(_start(table), datagen.trips(_keys_in(SF), 2, ts=2))

    assert seen["other"] == seen["first"] == first, seen
    [committed] = [i for i in table.timeline() if i.timestamp == first]
    assert committed.is_completed and seen["action"] == committed.action
    assert seen["groups"] == f"{SF}/{group}"
    assert _rows(table) == {
        **{f"key-{k:06d}": 1 for k in KEYS},
        **{f"key-{k:06d}": 2 for k in _keys_in(SF)},
    }


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_without_early_detection_the_conflict_is_found_at_commit_after_the_files(
    tmp_path, table_type, paused_write
):
    """As before the option: the second write goes ahead and commits (the first is still in
    flight), and the first write, whose data files were all written, fails at its commit."""
    path, table = _create(tmp_path, table_type)
    seen: dict = {}

    def second_writer(first: str) -> None:
        written = [m.data_file for m in Markers(table.storage, first).all()]
        seen["first_written"] = written and all(table.storage.exists(f) for f in written)
        seen["second"] = _run(_start(table), datagen.trips(_keys_in(SF)[:5], 3, ts=3))

    paused_write(second_writer)
    with pytest.raises(WriteConflictError) as caught:
        _run(_start(table), datagen.trips(_keys_in(SF), 2, ts=2))

    loser, _, other = COMPLETED.search(str(caught.value)).groups()
    assert other == seen["second"] and seen["first_written"]
    assert FOUND_EARLY not in str(caught.value)
    rollback = _rollback_of(table, loser)
    assert rollback is not None
    if table_type == "COPY_ON_WRITE":
        assert rollback["totalFilesDeleted"] > 0  # its merged base file
    assert _rows(table) == {
        **{f"key-{k:06d}": 1 for k in KEYS},
        **{f"key-{k:06d}": 3 for k in _keys_in(SF)[:5]},
    }


def _pending_writer(table: HudiTable, group: str, heartbeat: str) -> str:
    """A write in flight by hand, whose marker names `group` of SF; its heartbeat is fresh
    ("alive"), an hour old ("stale") or was never written ("none")."""
    storage = table.storage
    timeline = ActiveTimeline.load(storage)
    instant_time = timeline.new_instant_time()
    requested = timeline.create_requested("commit", instant_time)
    workload = CommitMetadata(operation_type="upsert")
    workload.add(WriteStat(group, SF, "", "0"))
    timeline.transition(requested, State.INFLIGHT, workload.to_json_bytes())
    Markers(storage, instant_time).create(
        f"{SF}/{base_file_name(group, '0-0-0', instant_time)}", "MERGE"
    )
    if heartbeat != "none":
        beat = f"{HEARTBEAT_FOLDER}/{instant_time}"
        storage.write_bytes(beat, b"")  # as Apache Hudi's: only its time counts
        if heartbeat == "stale":
            an_hour_ago = time.time() - 3600
            os.utime(Path(storage.base_path) / beat, (an_hour_ago, an_hour_ago))
    return instant_time


@pytest.mark.parametrize("heartbeat", ["none", "stale", "alive"])
def test_a_dead_writers_markers_block_nothing(tmp_path, heartbeat, marking):
    path, table = _create(tmp_path, "COPY_ON_WRITE")
    dead = _pending_writer(table, _file_id(path, SF), heartbeat)
    job = _start(table, EARLY)
    batch = datagen.trips(_keys_in(SF)[:5], 3, ts=3)

    if heartbeat == "alive":  # the same markers, but their writer beats: they block
        with pytest.raises(WriteConflictError, match=IN_FLIGHT) as caught:
            _run(job, batch)
        assert IN_FLIGHT.search(str(caught.value)).group(3) == dead
        return
    written = _run(job, batch)
    assert written in marking and table.timeline()[-1].timestamp == written
    assert _rows(table)[f"key-{_keys_in(SF)[0]:06d}"] == 3


# ---- commits completed since the write started


@pytest.mark.parametrize(
    ("options", "early"),
    [
        (TRANSACTION, True),
        ({**EARLY, L.EARLY_CONFLICT_CHECK_COMMIT_CONFLICT.key: "true"}, True),
        (EARLY, False),  # the simple strategy alone looks at markers only
        ({}, False),
    ],
    ids=["transaction", "simple-checking-commits", "simple", "off"],
)
def test_a_commit_completed_since_the_write_started_fails_it_early(
    tmp_path, options, early, marking
):
    path, table = _create(tmp_path, "COPY_ON_WRITE")
    late = _start(table, options)  # loads the timeline the conflict is judged against
    committed = _run(_start(table), datagen.trips(_keys_in(SF), 2, ts=2))
    with pytest.raises(WriteConflictError) as caught:
        _run(late, datagen.trips(_keys_in(SF)[:5], 3, ts=3))

    message = str(caught.value)
    loser, action, other = COMPLETED.search(message).groups()
    assert (action, other) == ("commit", committed), message
    assert f"{SF}/{_file_id(path, SF)}" in message
    rollback = _rollback_of(table, loser)
    assert rollback is not None
    if early:
        assert FOUND_EARLY in message
        assert loser not in marking and rollback["totalFilesDeleted"] == 0
    else:
        assert FOUND_EARLY not in message
        assert loser in marking and rollback["totalFilesDeleted"] > 0
    assert set(_rows(table).values()) == {1, 2}


def test_a_commit_on_other_file_groups_lets_the_write_go_on(tmp_path):
    path, table = _create(tmp_path, "COPY_ON_WRITE")
    late = _start(table, TRANSACTION)
    _run(_start(table), datagen.trips(_keys_in(NY), 2, ts=2))
    written = _run(late, datagen.trips(_keys_in(SF), 3, ts=3))
    assert table.timeline()[-1].timestamp == written
    assert set(_rows(table).values()) == {1, 2, 3}  # two cities untouched


# ---- the bucket index


def _keys_of_bucket(bucket: int, count: int) -> list[int]:
    """Keys (from 100 on) whose record key falls in `bucket` of 4."""
    keys = list(range(100, 200))
    buckets = bucket_ids(pa.array([f"key-{k:06d}" for k in keys]), ["uuid"], 4)
    return [k for k, b in zip(keys, buckets, strict=True) if b == bucket][:count]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_two_writers_making_the_same_new_bucket_conflict_early(
    tmp_path, table_type, paused_write, marking
):
    """The first write makes bucket 3's first file group of a new partition; a second write
    making it too (another file id: its own new file group) fails before it writes, while a
    write making bucket 1 goes on."""
    path, table = _create(tmp_path, table_type, BUCKETS)
    (first_key, second_key), (other_key,) = _keys_of_bucket(3, 2), _keys_of_bucket(1, 1)
    lisbon = ["lisbon"]
    seen: dict = {}

    def second_writers(first: str) -> None:
        with pytest.raises(WriteConflictError) as caught:
            _run(_start(table, EARLY), datagen.trips([second_key], 3, ts=3, cities=lisbon))
        loser, _, other, groups = IN_FLIGHT.search(str(caught.value)).groups()
        assert other == first and groups.startswith("lisbon/00000003-"), groups
        assert loser not in marking and _rollback_of(table, loser) is not None
        seen["bucket_1"] = _run(
            _start(table, EARLY), datagen.trips([other_key], 4, ts=4, cities=lisbon)
        )

    paused_write(second_writers)
    first = _run(_start(table), datagen.trips([first_key], 2, ts=2, cities=lisbon))

    writes = [i for i in table.timeline() if i.action in ("commit", "deltacommit")]
    assert {i.timestamp for i in writes if i.is_completed} >= {seen["bucket_1"], first}
    lisbon_groups = {f.split("/")[1].lstrip(".")[:8] for f in data_files(path) if "lisbon" in f}
    assert lisbon_groups == {"00000001", "00000003"}
    rows = _rows(table)
    assert (rows[f"key-{first_key:06d}"], rows[f"key-{other_key:06d}"]) == (2, 4)
    assert f"key-{second_key:06d}" not in rows


# ---- options


@pytest.mark.parametrize(
    ("strategy", "why"),
    [
        (L.TIMELINE_SERVER_DETECTION, "timeline-server-based early conflict detection is not"),
        ("com.example.MyDetectionStrategy", "not an early conflict detection strategy"),
    ],
)
def test_a_strategy_we_cannot_run_is_refused_before_the_instant(tmp_path, strategy, why):
    path, table = _create(tmp_path, "COPY_ON_WRITE")
    before = [i.file_name for i in table.timeline()]
    with pytest.raises(InvalidOptionError) as caught:
        _run(_start(table, {ENABLE: "true", STRATEGY: strategy}), datagen.trips([1], 2, ts=2))

    message = str(caught.value)
    assert STRATEGY in message and why in message, message
    assert L.SIMPLE_DETECTION in message and L.TRANSACTION_DETECTION in message, message
    assert [i.file_name for i in table.timeline()] == before
    assert not list((Path(path) / TEMP_FOLDER).glob("*"))


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, None),
        ({ENABLE: "true"}, (False, False)),
        (
            {ENABLE: "true", STRATEGY: "SimpleTransactionDirectMarkerBasedDetectionStrategy"},
            (True, True),
        ),
        # RFC-56's draft names, which some configurations carry.
        (
            {
                "hoodie.write.lock.early.conflict.detection.enable": "true",
                "hoodie.write.lock.early.conflict.detection.strategy": (
                    "org.apache.hudi.client.transaction."
                    "SimpleTransactionDirectMarkerBasedEarlyConflictDetectionStrategy"
                ),
            },
            (True, True),
        ),
        (
            {
                ENABLE: "true",
                STRATEGY: "org.apache.hudi.table.marker."
                "SimpleDirectMarkerBasedEarlyConflictDetectionStrategy",
                L.EARLY_CONFLICT_CHECK_COMMIT_CONFLICT.key: "true",
            },
            (False, True),
        ),
    ],
)
def test_the_options_choose_the_detection(options, expected):
    detection = EarlyConflictDetection.from_options(Options(OCC, options))
    if expected is None:
        assert detection is None
    else:
        assert detection is not None
        assert (detection.transactional, detection.check_commits) == expected


@pytest.mark.parametrize("mode", ["SINGLE_WRITER", "NON_BLOCKING_CONCURRENCY_CONTROL"])
def test_early_detection_is_ignored_without_optimistic_concurrency(tmp_path, mode):
    """As in Apache Hudi: the option is read under optimistic concurrency only."""
    options = {L.CONCURRENCY_MODE.key: mode, ENABLE: "true"}
    assert EarlyConflictDetection.from_options(Options(options)) is None
    if mode == "SINGLE_WRITER":
        path, table = create_trips_table(tmp_path, "COPY_ON_WRITE", options)
        written = table.write(datagen.trips(KEYS, seed=1, ts=1))
        assert table.timeline()[-1].timestamp == written
