"""Rollback of the latest write, savepoints and restore.

Every check reads the table twice (our reader and hudi-rs) against an in-memory model of the
rows it should hold, and looks at the timeline files Apache Hudi 0.14 writes for each service.
Crashes are real: a child process SIGKILLs itself at a chosen step, as in killed_writer.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hudi_core import HudiTable
from hudi_core.errors import HudiError, InvalidOptionError
from hudi_core.io.log_format import BlockType, HeaderKey, read_log_block_headers
from hudi_core.model.file_names import BaseFileName, LogFileName
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, State, avro_metadata
from hudi_core.write import transaction
from hudi_core.write.markers import Markers
from tests import datagen, oracle
from tests.tables import data_files

ROOT = Path(__file__).resolve().parents[2]
COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
# Small enough that archive() moves instants, within Hudi's min > retained < max rule.
ARCHIVAL = {
    "hoodie.keep.min.commits": 2,
    "hoodie.keep.max.commits": 3,
    "hoodie.cleaner.commits.retained": 1,
}


# ---- the model: what the table should read


class Model:
    """The rows a table should hold (keyed by uuid, meta columns left out), kept in step with
    each write made through it."""

    def __init__(self, table: HudiTable) -> None:
        self.table = table
        self.rows: dict[str, dict] = {}

    @property
    def path(self) -> str:
        return self.table.storage.base_path

    def write(
        self, keys: list[int], seed: int, operation: str = "upsert", cities: list[str] | None = None
    ) -> str:
        """Writes trips of `keys` (ts = seed, so later writes win) and applies them here."""
        batch = datagen.trips(keys, seed=seed, ts=seed, cities=cities)
        instant = self.table.write(batch, operation)
        assert instant is not None
        rows = {row["uuid"]: row for row in batch.to_pylist()}
        if operation == "delete":
            for key in rows:
                self.rows.pop(key, None)
        elif operation == "insert_overwrite":
            overwritten = {row["city"] for row in rows.values()}
            self.rows = {k: r for k, r in self.rows.items() if r["city"] not in overwritten}
            self.rows.update(rows)
        else:
            self.rows.update(rows)
        return instant

    def snapshot(self) -> dict[str, dict]:
        return dict(self.rows)

    def check(self, context: str, hudi_rs: bool = True) -> None:
        """Our snapshot holds exactly the model's rows, and hudi-rs reads the same table."""
        ours = self.table.read()
        _assert_rows(ours.to_pylist(), self.rows, context)
        if hudi_rs:
            oracle.assert_same_table(ours, oracle.snapshot(self.path), f"hudi-rs, {context}")


def _assert_rows(actual_rows: list[dict], expected: dict[str, dict], context: str) -> None:
    actual = {
        row["uuid"]: {k: v for k, v in row.items() if not k.startswith("_hoodie_")}
        for row in actual_rows
    }
    assert len(actual) == len(actual_rows), f"{context}: a key is read twice"
    missing, extra = expected.keys() - actual.keys(), actual.keys() - expected.keys()
    assert not missing and not extra, f"{context}: missing {sorted(missing)}, extra {sorted(extra)}"
    changed = sorted(k for k in expected if actual[k] != expected[k])
    assert not changed, f"{context}: rows differ for {changed[:5]}"


def _table(tmp_path: Path, table_type: str, **options) -> Model:
    table = HudiTable.create(
        str(tmp_path / "trips"),
        name="trips",
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        # New inserts get their own file groups, so each write's files are easy to tell apart.
        options={"hoodie.parquet.small.file.limit": "0", **options},
    )
    return Model(table)


# ---- files


def _timeline_files(path: str) -> set[str]:
    return {p.name for p in (Path(path) / ".hoodie").iterdir() if p.is_file()}


def _files_of(path: str, instant: str) -> set[str]:
    """Base files written at `instant` and log files of slices it started."""
    found = set()
    for relative in data_files(path):
        name = relative.rsplit("/", 1)[-1]
        base, log = BaseFileName.parse(name), LogFileName.parse(name)
        if (base and base.instant_time == instant) or (log and log.base_instant_time == instant):
            found.add(relative)
    return found


def _avro(path: str, file_name: str) -> dict:
    return avro_metadata.deserialize((Path(path) / ".hoodie" / file_name).read_bytes())


def _name(location: str) -> str:
    return location.rsplit("/", 1)[-1]


def _blocks(path: str, relative: str) -> list:
    return read_log_block_headers(Storage(path), relative)


def _is_rollback_of(block, rollback: str | None, target: str) -> bool:
    return (
        block.block_type is BlockType.COMMAND
        and block.is_rollback
        and block.header.get(HeaderKey.TARGET_INSTANT_TIME) == target
        and (rollback is None or block.instant_time == rollback)
    )


# ---- child processes that die at a chosen step


def _run_killed(function: str, *args: str) -> None:
    """Runs `function(*args)` of this module in a child process, which must SIGKILL itself."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
        f"from tests.unit.test_rollback_restore import {function}; {function}(*{args!r})"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def rollback_dying_at_first_data_delete(path: str, instant: str) -> None:
    """Child: rolls back `instant`, dying once its completed file is gone but before any data
    file is deleted."""
    original = Storage.delete

    def delete(self, relative: str) -> bool:
        if not relative.startswith(".hoodie"):
            _die()
        return original(self, relative)

    Storage.delete = delete
    HudiTable.open(path).rollback(instant)


def restore_dying_after_rollbacks(path: str, savepoint: str, done: str, where: str) -> None:
    """Child: restores to `savepoint`, dying after `done` of its rollbacks completed, either
    before the next rollback is planned or inside it, right before it would complete."""
    completed = []
    original_transition = ActiveTimeline.transition
    original_requested = ActiveTimeline.create_requested

    def transition(self, instant, state, content=b""):
        if instant.action == "rollback" and state is State.COMPLETED:
            if where == "inside" and len(completed) == int(done):
                _die()
            completed.append(instant.timestamp)
        return original_transition(self, instant, state, content)

    def create_requested(self, action, timestamp, content=b""):
        if action == "rollback" and where == "between" and len(completed) == int(done):
            _die()
        return original_requested(self, action, timestamp, content)

    ActiveTimeline.transition = transition
    ActiveTimeline.create_requested = create_requested
    HudiTable.open(path).restore(savepoint)


# ---- 1. rollback of the latest completed commit (copy-on-write)


@pytest.mark.parametrize("operation", ["upsert", "insert_overwrite"])
def test_rolling_back_the_latest_cow_commit_deletes_its_files_and_reads_as_before(
    tmp_path, operation
):
    model = _table(tmp_path, COW)
    first = model.write(list(range(40)), seed=1, operation="bulk_insert")
    second = model.write(list(range(0, 40, 3)) + [100, 101], seed=2)
    before, files_before = model.snapshot(), data_files(model.path)
    latest = model.write(list(range(0, 40, 4)) + [200, 201, 202, 203], seed=3, operation=operation)
    written = data_files(model.path) - files_before
    assert written and written == _files_of(model.path, latest)

    rollback = model.table.rollback(latest)

    assert data_files(model.path) == files_before
    model.rows = before
    model.check("after the rollback")
    assert not {f for f in _timeline_files(model.path) if f.startswith(latest)}
    plan = _avro(model.path, f"{rollback}.rollback.requested")
    assert plan["instantToRollback"] == {"commitTime": latest, "action": _action(operation)}
    planned = {_name(f) for r in plan["RollbackRequests"] for f in r["filesToBeDeleted"]}
    assert planned == {_name(f) for f in written}
    metadata = _avro(model.path, f"{rollback}.rollback")
    assert metadata["commitsRollback"] == [latest]
    assert metadata["startRollbackTime"] == rollback
    deleted = {
        _name(f) for m in metadata["partitionMetadata"].values() for f in m["successDeleteFiles"]
    }
    assert deleted == {_name(f) for f in written}
    assert metadata["totalFilesDeleted"] == len(written)
    _check_incremental(model.path, model.table, first, second)


def _action(operation: str) -> str:
    return "replacecommit" if operation == "insert_overwrite" else "commit"


def _check_incremental(path: str, table: HudiTable, begin: str, end: str) -> None:
    ours = table.read(query_type="incremental", begin=begin, end=end)
    assert ours.num_rows > 0
    oracle.assert_same_table(ours, oracle.incremental(path, begin, end), "incremental")


def test_the_next_write_after_a_rollback_reads_with_the_rolled_back_rows_gone(tmp_path):
    model = _table(tmp_path, COW)
    model.write(list(range(30)), seed=1, operation="bulk_insert")
    before = model.snapshot()
    latest = model.write([0, 1, 2, 50], seed=2)
    model.table.rollback(latest)
    model.rows = before
    model.write([1, 60], seed=3)
    model.check("a write after the rollback")
    assert all(i.is_completed for i in model.table.timeline())


# ---- 2. merge-on-read: rollback blocks, and a rolled-back compaction


def test_rolling_back_a_mor_deltacommit_cancels_its_log_blocks_with_rollback_blocks(tmp_path):
    model = _table(tmp_path, MOR)
    model.write(list(range(40)), seed=1, operation="bulk_insert")
    model.write(list(range(0, 40, 3)), seed=2)
    before, files_before = model.snapshot(), data_files(model.path)
    latest = model.write(list(range(0, 40, 4)) + [300, 301], seed=3)
    appended = _log_paths_of(model.path, latest)
    created = _files_of(model.path, latest)
    assert appended and created, "the write should both append logs and create base files"

    rollback = model.table.rollback(latest)

    for log_path in appended:
        cancel = _next_log_version(log_path)
        assert cancel in data_files(model.path), f"no rollback block after {log_path}"
        blocks = _blocks(model.path, cancel)
        assert len(blocks) == 1 and _is_rollback_of(blocks[0], rollback, latest)
    # What stays: the files before, the cancelled logs, and one rollback log after each.
    cancels = {_next_log_version(p) for p in appended}
    assert data_files(model.path) == files_before | set(appended) | cancels
    model.rows = before
    model.check("after the deltacommit's rollback")
    metadata = _avro(model.path, f"{rollback}.rollback")
    rollback_logs = {
        _name(f) for m in metadata["partitionMetadata"].values() for f in m["rollbackLogFiles"]
    }
    assert rollback_logs == {_name(p) for p in cancels}
    assert not {f for f in _timeline_files(model.path) if f.startswith(latest)}


def _log_paths_of(path: str, instant: str) -> list[str]:
    """The log files a deltacommit appended to slices older than itself (its write stats)."""
    timeline = ActiveTimeline.load(Storage(path))
    metadata = timeline.read_json(timeline.find(instant))
    paths = [s["path"] for stats in metadata["partitionToWriteStats"].values() for s in stats]
    return sorted(p for p in paths if LogFileName.parse(_name(p)))


def _next_log_version(relative: str) -> str:
    """The log file a rollback writes after `relative`: same file group and base instant,
    version + 1, Apache Hudi's rollback write token."""
    partition, _, name = relative.rpartition("/")
    log = LogFileName.parse(name)
    assert log is not None
    return f"{partition}/.{log.file_id}_{log.base_instant_time}.log.{log.version + 1}_1-0-1"


def test_rolling_back_a_completed_compaction_drops_its_base_files_and_plan(tmp_path):
    model = _table(tmp_path, MOR)
    model.write(list(range(40)), seed=1, operation="bulk_insert")
    model.write(list(range(0, 40, 3)), seed=2)
    files_before = data_files(model.path)
    compaction = model.table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    assert compaction is not None
    model.table.compaction.run(compaction)
    assert _files_of(model.path, compaction)

    rollback = model.table.rollback(compaction)

    assert data_files(model.path) == files_before
    assert not {f for f in _timeline_files(model.path) if f.startswith(compaction)}
    assert model.table.compaction.pending() == []
    model.check("after the compaction's rollback")
    metadata = _avro(model.path, f"{rollback}.rollback")
    assert metadata["commitsRollback"] == [compaction]
    model.write([0, 1, 99], seed=3)
    model.check("a write after the compaction's rollback")


# ---- 3. what cannot be rolled back


def test_rolling_back_an_older_commit_names_the_later_one(tmp_path):
    model = _table(tmp_path, COW)
    first = model.write(list(range(10)), seed=1, operation="bulk_insert")
    later = model.write([1, 2], seed=2)
    with _unchanged(model):
        with pytest.raises(HudiError, match=later):
            model.table.rollback(first)


def test_rolling_back_a_savepointed_commit_is_refused(tmp_path):
    model = _table(tmp_path, COW)
    model.write(list(range(10)), seed=1, operation="bulk_insert")
    latest = model.write([1, 2], seed=2)
    model.table.savepoint(latest)
    with _unchanged(model):
        with pytest.raises(HudiError, match="savepoint"):
            model.table.rollback(latest)


def test_rolling_back_an_unknown_instant_is_refused(tmp_path):
    model = _table(tmp_path, COW)
    latest = model.write(list(range(10)), seed=1, operation="bulk_insert")
    unknown = str(int(latest) + 1)
    with _unchanged(model):
        with pytest.raises(HudiError, match=unknown):
            model.table.rollback(unknown)


class _unchanged:
    """Asserts a refused rollback touched neither the timeline nor the data files."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def __enter__(self) -> None:
        self.state = (_timeline_files(self.model.path), data_files(self.model.path))

    def __exit__(self, *exc) -> None:
        after = (_timeline_files(self.model.path), data_files(self.model.path))
        assert after == self.state
        self.model.check("after the refused rollback")


# ---- 4. a rollback cut off midway


@pytest.mark.parametrize(
    ("table_type", "finisher"), [(COW, "next write"), (MOR, "next write"), (MOR, "rollback")]
)
def test_a_rollback_killed_after_unpublishing_is_finished_later(tmp_path, table_type, finisher):
    model = _table(tmp_path, table_type)
    model.write(list(range(40)), seed=1, operation="bulk_insert")
    model.write(list(range(0, 40, 3)), seed=2)
    before, files_before = model.snapshot(), data_files(model.path)
    latest = model.write(list(range(0, 40, 5)) + [400], seed=3)
    appended = _log_paths_of(model.path, latest) if table_type == MOR else []

    _run_killed("rollback_dying_at_first_data_delete", model.path, latest)

    pending = [i for i in model.table.timeline() if not i.is_completed]
    assert [(i.timestamp, i.action, i.state) for i in pending] == [
        (latest, _write_action(table_type), State.INFLIGHT),
        (pending[1].timestamp, "rollback", State.INFLIGHT),
    ]
    model.rows = before
    model.check("while the rollback is cut off")

    if finisher == "rollback":  # rolling back again finishes the cut-off rollback
        assert model.table.rollback(latest) == pending[1].timestamp
    model.write([1, 401], seed=4)

    rollbacks = [i for i in model.table.timeline() if i.action == "rollback"]
    assert [i.timestamp for i in rollbacks] == [pending[1].timestamp]
    assert all(i.is_completed for i in model.table.timeline())
    assert not _files_of(model.path, latest)
    assert not {f for f in _timeline_files(model.path) if f.startswith(latest)}
    assert data_files(model.path) >= files_before
    for log_path in appended:
        assert _cancelled(model.path, log_path, latest), log_path
    model.check(f"after the {finisher}")


def _write_action(table_type: str) -> str:
    return "deltacommit" if table_type == MOR else "commit"


def test_a_rollback_failing_before_completion_is_finished_by_the_next_write(tmp_path, monkeypatch):
    model = _table(tmp_path, MOR)
    model.write(list(range(40)), seed=1, operation="bulk_insert")
    model.write(list(range(0, 40, 3)), seed=2)
    before = model.snapshot()
    latest = model.write(list(range(0, 40, 4)) + [500], seed=3)
    original = ActiveTimeline.transition

    def failing(self, instant, state, content=b""):
        if instant.action == "rollback" and state is State.COMPLETED:
            raise OSError("connection lost")
        return original(self, instant, state, content)

    monkeypatch.setattr(ActiveTimeline, "transition", failing)
    with pytest.raises(OSError, match="connection lost"):
        model.table.rollback(latest)
    monkeypatch.setattr(ActiveTimeline, "transition", original)
    pending = [i for i in model.table.timeline() if not i.is_completed]
    assert [(i.action, i.state) for i in pending] == [("rollback", State.INFLIGHT)]
    model.rows = before
    model.check("while the rollback is pending")

    model.write([2, 501], seed=4)

    assert all(i.is_completed for i in model.table.timeline())
    rollbacks = [i for i in model.table.timeline() if i.action == "rollback"]
    assert [i.timestamp for i in rollbacks] == [pending[0].timestamp]
    assert _avro(model.path, rollbacks[0].file_name)["commitsRollback"] == [latest]
    model.check("after the next write")


# ---- 5. savepoints


def test_a_savepoint_records_the_latest_files_as_of_its_commit(tmp_path):
    model = _table(tmp_path, COW)
    model.write(list(range(40)), seed=1, operation="bulk_insert")
    savepointed = model.write(list(range(0, 40, 3)) + [100], seed=2)
    model.write(list(range(0, 40, 2)), seed=3)  # newer versions the savepoint must not list
    started_ms = int(time.time() * 1000)

    assert model.table.savepoint(savepointed, comment="before the backfill") == savepointed

    ended_ms = int(time.time() * 1000)
    hoodie = Path(model.path) / ".hoodie"
    assert (hoodie / f"{savepointed}.savepoint.inflight").read_bytes() == b""
    metadata = _avro(model.path, f"{savepointed}.savepoint")
    assert isinstance(metadata["savepointedBy"], str) and metadata["savepointedBy"]
    assert started_ms <= metadata["savepointedAt"] <= ended_ms
    assert metadata["comments"] == "before the backfill"
    partitions = metadata["partitionMetadata"]
    assert set(partitions) == {f.split("/")[0] for f in data_files(model.path)}
    for partition, entry in partitions.items():
        assert entry["partitionPath"] == partition
        assert sorted(entry["savepointDataFile"]) == _latest_base_files(
            model.path, partition, savepointed
        )


def _latest_base_files(path: str, partition: str, as_of: str) -> list[str]:
    """Per file group, the name of its newest base file written at or before `as_of`."""
    newest: dict[str, BaseFileName] = {}
    names: dict[str, str] = {}
    for relative in data_files(path):
        folder, _, name = relative.rpartition("/")
        base = BaseFileName.parse(name)
        if folder != partition or base is None or base.instant_time > as_of:
            continue
        if base.file_id not in newest or base.instant_time > newest[base.file_id].instant_time:
            newest[base.file_id], names[base.file_id] = base, name
    return sorted(names.values())


def test_savepoints_of_pending_unknown_or_savepointed_instants_are_refused(tmp_path):
    model = _table(tmp_path, MOR)
    first = model.write(list(range(20)), seed=1, operation="bulk_insert")
    model.write(list(range(0, 20, 2)), seed=2)
    compaction = model.table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    assert compaction is not None
    with pytest.raises(HudiError, match=compaction):
        model.table.savepoint(compaction)
    with pytest.raises(HudiError, match="99990101000000000"):
        model.table.savepoint("99990101000000000")
    model.table.savepoint(first)
    with pytest.raises(HudiError, match="already"):
        model.table.savepoint(first)
    assert {f for f in _timeline_files(model.path) if ".savepoint" in f} == {
        f"{first}.savepoint.inflight",
        f"{first}.savepoint",
    }


def test_deleting_a_savepoint_removes_both_of_its_files(tmp_path):
    model = _table(tmp_path, COW)
    first = model.write(list(range(20)), seed=1, operation="bulk_insert")
    model.table.savepoint(first)
    model.table.delete_savepoint(first)
    assert not {f for f in _timeline_files(model.path) if ".savepoint" in f}
    with pytest.raises(HudiError, match=first):
        model.table.delete_savepoint(first)
    model.check("after deleting the savepoint")


def test_a_savepoint_cut_off_midway_can_be_deleted_or_finished(tmp_path, monkeypatch):
    model = _table(tmp_path, COW)
    first = model.write(list(range(20)), seed=1, operation="bulk_insert")
    _cut_off_savepoint(model.table, first, monkeypatch)
    model.table.delete_savepoint(first)
    assert not {f for f in _timeline_files(model.path) if ".savepoint" in f}

    _cut_off_savepoint(model.table, first, monkeypatch)
    model.table.savepoint(first)

    assert f"{first}.savepoint" in _timeline_files(model.path)
    assert _avro(model.path, f"{first}.savepoint")["partitionMetadata"]


def _cut_off_savepoint(table: HudiTable, instant: str, monkeypatch) -> None:
    """Savepoints `instant`, failing before the savepoint completes."""
    original = ActiveTimeline.transition

    def failing(self, pending, state, content=b""):
        if pending.action == "savepoint":
            raise OSError("connection lost")
        return original(self, pending, state, content)

    monkeypatch.setattr(ActiveTimeline, "transition", failing)
    with pytest.raises(OSError, match="connection lost"):
        table.savepoint(instant)
    monkeypatch.setattr(ActiveTimeline, "transition", original)
    savepoint_files = {f for f in _timeline_files(table.storage.base_path) if ".savepoint" in f}
    assert savepoint_files == {f"{instant}.savepoint.inflight"}


def test_a_savepoint_older_than_the_cleaners_window_is_refused(tmp_path):
    model = _table(tmp_path, COW)
    first = model.write(list(range(20)), seed=1, operation="bulk_insert")
    for seed in (2, 3, 4):
        model.write(list(range(0, 20, 2)), seed=seed)
    options = {"hoodie.cleaner.commits.retained": 1}
    assert model.table.clean(options) is not None
    with pytest.raises(HudiError, match=first):
        model.table.savepoint(first)
    model.check("after the refused savepoint")


# ---- 6. restore


class Scenario:
    """A merge-on-read table savepointed after upserts and deletes, then given more of both,
    an insert_overwrite, a completed compaction with logs on its slices, and a pending one
    with logs on its slices."""

    def __init__(self, tmp_path: Path) -> None:
        self.model = _table(tmp_path, MOR)
        m = self.model
        m.write(list(range(80)), seed=1, operation="bulk_insert")
        m.write(list(range(0, 40, 2)) + [100, 101], seed=2)
        self.savepoint = m.write([1, 3, 5], seed=3, operation="delete")
        m.table.savepoint(self.savepoint)
        self.at_savepoint = m.snapshot()
        self.files_at_savepoint = data_files(m.path)
        deltas = [m.write(list(range(0, 80, 5)) + [102], seed=4)]
        deltas.append(m.write([7, 9, 11], seed=5, operation="delete"))
        overwrite = m.write(
            [200, 204, 208], seed=6, operation="insert_overwrite", cities=["chennai"]
        )
        due = {"hoodie.compact.inline.max.delta.commits": 1}
        self.compacted = m.table.compaction.schedule(due)
        m.table.compaction.run(self.compacted)
        # Logs on the compacted slices, and on the slice key 102's insert started.
        deltas.append(m.write(list(range(0, 80, 3)) + [102], seed=7))
        self.pending = m.table.compaction.schedule(due)
        deltas.append(m.write(list(range(0, 80, 4)), seed=8))  # logs on the pending ones
        failed = _failed_write(m.table, list(range(0, 80, 7)) + [103], seed=9)
        # Newest first, as the restore plan lists them.
        self.later = [
            (failed, "deltacommit"),
            (deltas[3], "deltacommit"),
            (self.pending, "compaction"),
            (deltas[2], "deltacommit"),
            (self.compacted, "commit"),
            (overwrite, "replacecommit"),
            (deltas[1], "deltacommit"),
            (deltas[0], "deltacommit"),
        ]
        assert [t for t, _ in self.later] == sorted((t for t, _ in self.later), reverse=True)
        assert _files_of(m.path, self.compacted) and _files_of(m.path, self.pending)
        m.check("before the restore", hudi_rs=False)  # hudi-rs hides logs of pending slices

    @property
    def later_times(self) -> set[str]:
        return {t for t, _ in self.later}


def _failed_write(table: HudiTable, keys: list[int], seed: int) -> str:
    """A deltacommit that wrote its files but failed to complete and was not rolled back, as
    when its writer dies; returns its instant time."""
    with pytest.MonkeyPatch.context() as patch:
        original = ActiveTimeline.transition

        def failing(self, instant, state, content=b""):
            if instant.action == "deltacommit" and state is State.COMPLETED:
                raise OSError("writer lost")
            return original(self, instant, state, content)

        patch.setattr(ActiveTimeline, "transition", failing)
        patch.setattr(transaction, "_roll_back_after", lambda *args: None)
        with pytest.raises(OSError, match="writer lost"):
            table.write(datagen.trips(keys, seed=seed, ts=seed), "upsert")
    (failed,) = [i for i in table.timeline() if not i.is_completed and i.action == "deltacommit"]
    assert Markers(table.storage, failed.timestamp).exist()
    return failed.timestamp


def test_restore_reads_as_the_savepoint_and_leaves_only_the_restore_instant(tmp_path):
    scenario = Scenario(tmp_path)
    model, savepoint = scenario.model, scenario.savepoint
    files_before = data_files(model.path)

    restore = model.table.restore(savepoint)

    model.rows = scenario.at_savepoint
    model.check("after the restore")
    _check_restore_timeline(scenario, restore)
    ours = [i.timestamp for i in model.table.timeline() if i.action == "deltacommit"]
    assert oracle.completed_commit_times(model.path) == ours
    assert ours[-1] == savepoint
    for slice_start in (scenario.compacted, scenario.pending):
        assert not _files_of(model.path, slice_start), "a rolled-back slice's file remains"
    assert data_files(model.path) - files_before, "rollback blocks should have been appended"
    assert scenario.files_at_savepoint <= data_files(model.path)

    latest = model.write(list(range(0, 80, 6)) + [600], seed=9)
    model.write([600, 601], seed=10, operation="delete")
    model.check("writes after the restore")
    _check_incremental(model.path, model.table, savepoint, latest)


def _check_restore_timeline(scenario: Scenario, restore: str) -> None:
    path = scenario.model.path
    files = _timeline_files(path)
    assert {f"{restore}.restore.requested", f"{restore}.restore.inflight"} <= files
    assert not {f for f in files if ".rollback" in f}, "the restore's rollbacks should be gone"
    assert not {f for f in files if f.split(".")[0] in scenario.later_times}
    markers = Path(path) / ".hoodie" / ".temp"
    assert not {p.name for p in markers.iterdir()} & scenario.later_times
    plan = _avro(path, f"{restore}.restore.requested")
    assert plan["savepointToRestoreTimestamp"] == scenario.savepoint
    expected = [{"commitTime": t, "action": a} for t, a in scenario.later]
    assert plan["instantsToRollback"] == expected
    metadata = _avro(path, f"{restore}.restore")
    assert metadata["startRestoreTime"] == restore
    assert metadata["instantsToRollback"] == [t for t, _ in scenario.later]
    assert metadata["restoreInstantInfo"] == expected
    by_instant = metadata["hoodieRestoreMetadata"]
    assert set(by_instant) == scenario.later_times
    for instant, rollbacks in by_instant.items():
        assert [r["commitsRollback"] for r in rollbacks] == [[instant]]


def test_restore_of_a_cow_table_undoes_upserts_deletes_and_an_overwrite(tmp_path):
    model = _table(tmp_path, COW)
    model.write(list(range(40)), seed=1, operation="bulk_insert")
    savepoint = model.write(list(range(0, 40, 3)), seed=2)
    model.table.savepoint(savepoint)
    at_savepoint, files_at_savepoint = model.snapshot(), data_files(model.path)
    model.write(list(range(0, 40, 2)) + [90], seed=3)
    model.write([4, 5, 6], seed=4, operation="delete")
    model.write([300, 304], seed=5, operation="insert_overwrite", cities=["chennai"])

    restore = model.table.restore(savepoint)

    assert data_files(model.path) == files_at_savepoint
    model.rows = at_savepoint
    model.check("after the restore")
    assert f"{restore}.restore" in _timeline_files(model.path)
    model.write([1, 91], seed=6)
    model.check("a write after the restore")


def test_restoring_past_a_later_savepoint_is_refused_until_it_is_deleted(tmp_path):
    model = _table(tmp_path, COW)
    first = model.write(list(range(20)), seed=1, operation="bulk_insert")
    at_first = model.snapshot()
    model.write(list(range(0, 20, 2)), seed=2)
    later = model.write([1, 2, 30], seed=3)
    model.table.savepoint(first)
    model.table.savepoint(later)
    with _unchanged(model):
        with pytest.raises(HudiError, match=later):
            model.table.restore(first)

    model.table.delete_savepoint(later)
    model.table.restore(first)

    model.rows = at_first
    model.check("after the restore")
    assert [i.action for i in model.table.timeline()] == ["commit", "savepoint", "restore"]


# ---- 7. a restore cut off midway


@pytest.mark.parametrize(("where", "rolled_back"), [("between", 3), ("inside", 4)])
def test_a_restore_killed_midway_blocks_writes_until_it_is_run_again(tmp_path, where, rolled_back):
    scenario = Scenario(tmp_path)
    model, savepoint = scenario.model, scenario.savepoint

    _run_killed("restore_dying_after_rollbacks", model.path, savepoint, "3", where)

    timeline = model.table.timeline()
    (restoring,) = [i for i in timeline if i.action == "restore"]
    assert restoring.state is State.INFLIGHT
    remaining = {i.timestamp for i in timeline} & scenario.later_times
    assert remaining == {t for t, _ in scenario.later[rolled_back:]}
    with pytest.raises(HudiError, match="restore .* in progress"):
        model.table.write(datagen.trips([1], seed=11, ts=11), "upsert")
    with pytest.raises(HudiError, match="restore .* in progress"):
        model.table.savepoint(min(remaining))  # it would pin a commit about to go
    with pytest.raises(HudiError, match="restore .* in progress"):
        model.table.delete_savepoint(savepoint)  # the restore needs it to finish
    with pytest.raises(HudiError, match="restore .* in progress"):
        model.table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    with pytest.raises(HudiError, match="restore .* in progress"):
        model.table.compaction.run()  # it would build on deltacommits about to go
    with pytest.raises(HudiError, match="restore .* in progress"):
        model.table.clean()
    with pytest.raises(HudiError, match="restore .* in progress"):
        model.table.archive()

    assert model.table.restore(savepoint) == restoring.timestamp

    model.rows = scenario.at_savepoint
    model.check("after the restore is run again")
    _check_restore_timeline(scenario, restoring.timestamp)
    model.write([1, 700], seed=12)
    model.check("a write after the finished restore")


# ---- 8. archival past a restored range


def test_reads_stay_right_once_archival_passes_the_restored_range(tmp_path):
    scenario = Scenario(tmp_path)
    model, savepoint = scenario.model, scenario.savepoint
    model.table.restore(savepoint)
    model.rows = scenario.at_savepoint
    cancelled = _logs_with_blocks_of(model.path, scenario.later_times)
    assert cancelled, "rolled-back deltacommits should have left cancelled blocks in logs"
    model.table.delete_savepoint(savepoint)  # archival stops at the first savepoint
    for seed in range(20, 24):
        model.write([2 * seed, 1000 + seed], seed=seed)
    options = {**ARCHIVAL, "hoodie.compact.inline.max.delta.commits": 1}
    model.table.clean(options)

    archived = {i.timestamp for i in model.table.archive(options)}

    assert savepoint in archived
    active = [i.timestamp for i in model.table.timeline() if i.action == "deltacommit"]
    assert min(active) > max(scenario.later_times), "archival should pass the restored range"
    assert _logs_with_blocks_of(model.path, scenario.later_times) == cancelled
    model.check("after archival")


def _logs_with_blocks_of(path: str, instants: set[str]) -> set[str]:
    """Log files holding data or delete blocks of `instants`, each cancelled by a rollback
    block in a later version of the same log."""
    found = set()
    for relative in sorted(data_files(path)):
        log = LogFileName.parse(_name(relative))
        if log is None:
            continue
        for block in _blocks(path, relative):
            if block.block_type is not BlockType.COMMAND and block.instant_time in instants:
                assert _cancelled(path, relative, block.instant_time), relative
                found.add(relative)
    return found


def _cancelled(path: str, relative: str, instant: str) -> bool:
    partition, _, name = relative.rpartition("/")
    log = LogFileName.parse(name)
    assert log is not None
    later = [
        f"{partition}/{p.name}"
        for p in (Path(path) / partition).iterdir()
        if (other := LogFileName.parse(p.name))
        and (other.file_id, other.base_instant_time) == (log.file_id, log.base_instant_time)
        and other.version > log.version
    ]
    return any(_is_rollback_of(b, None, instant) for f in later for b in _blocks(path, f))


def test_restore_is_refused_when_archival_may_go_beyond_savepoints(tmp_path):
    path = str(tmp_path / "trips")
    options = {"hoodie.archive.beyond.savepoint": "true"}
    table = HudiTable.create(
        path, "trips", "COPY_ON_WRITE", ["uuid"], ["city"], "ts", options=options
    )
    first = table.write(datagen.trips([1, 2, 3], seed=1, ts=1))
    table.savepoint(first)
    table.write(datagen.trips([4], seed=2, ts=2))
    with pytest.raises(InvalidOptionError, match="hoodie.archive.beyond.savepoint"):
        table.restore(first)
    assert sorted(table.read().column("uuid").to_pylist()) == [
        "key-000001",
        "key-000002",
        "key-000003",
        "key-000004",
    ]
