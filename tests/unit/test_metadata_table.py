"""Tables with Apache Hudi's metadata table: every write and table service removes it first
(folder, then the properties announcing it), as Apache Hudi does with hoodie.metadata.enable=
false; a removal cut off by SIGKILL completes on the next run; hoodie.metadata.enable=true is
refused with nothing changed."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.config.table_config import format_properties, parse_properties, table_checksum
from hudi_core.errors import InvalidOptionError
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline
from tests import datagen, oracle
from tests.killed_writer import ROOT
from tests.tables import create_trips_table

OPTIONS = {
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.compact.inline.max.delta.commits": "1",
}
METADATA_TIME = "00000000000000010"  # Apache Hudi's first metadata table instant
PROPERTIES = ".hoodie/hoodie.properties"


def lay_out_metadata_table(base: Path) -> dict[str, str]:
    """The files of a metadata table as Apache Hudi 0.14 lays them out under .hoodie/metadata
    (its own hoodie.properties and timeline, the `files` partition with one file group), and the
    data table's properties line announcing it. Returns the data table's properties before."""
    folder = base / ".hoodie" / "metadata"
    meta = {
        "hoodie.table.name": "trips_metadata",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.populate.meta.fields": "false",
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.table.recordkey.fields": "key",
    }
    meta["hoodie.table.checksum"] = str(table_checksum(meta))
    (folder / ".hoodie").mkdir(parents=True)
    (folder / ".hoodie" / "hoodie.properties").write_bytes(format_properties(meta))
    for name in (f"{METADATA_TIME}.deltacommit.requested", f"{METADATA_TIME}.deltacommit"):
        (folder / ".hoodie" / name).write_text("{}")
    files = folder / "files"
    files.mkdir()
    (files / ".hoodie_partition_metadata").write_text(f"commitTime={METADATA_TIME}\n")
    (files / f"files-0000-0_0-0-0_{METADATA_TIME}.hfile").write_bytes(b"HFILE")
    (files / f".files-0000-0_{METADATA_TIME}.log.1_0-0-0").write_bytes(b"#HUDI#")
    before = parse_properties((base / PROPERTIES).read_bytes())
    announced = {
        **before,
        "hoodie.table.metadata.partitions": "files",
        "hoodie.table.metadata.partitions.inflight": "",
    }
    (base / PROPERTIES).write_bytes(format_properties(announced))
    return before


def _properties(base: Path) -> dict[str, str]:
    return parse_properties((base / PROPERTIES).read_bytes())


def _assert_removed(base: Path, before: dict[str, str]) -> None:
    assert not (base / ".hoodie" / "metadata").exists()
    after = _properties(base)
    assert after == before  # every other key kept, the announcing ones gone
    assert int(after["hoodie.table.checksum"]) == table_checksum(after)
    assert not (base / ".hoodie" / "hoodie.properties.backup").exists()


def _data_rows(table: pa.Table) -> list[dict]:
    data = table.drop_columns([c for c in table.column_names if c.startswith("_hoodie_")])
    return oracle.sorted_rows(data)


def _upsert(table: HudiTable, keys: list[int], seed: int) -> str:
    return table.write(datagen.trips(keys, seed=seed, ts=seed), operation="upsert")


# ---- a scenario per service: its table before the metadata table appears, and the change


def _upsert_setup(table: HudiTable) -> None:
    _upsert(table, list(range(8)), 1)


def _upsert_action(table: HudiTable) -> object:
    return _upsert(table, [0, 1, 20], 2)


def _compaction_setup(table: HudiTable) -> None:
    _upsert(table, list(range(8)), 1)
    _upsert(table, [0, 1], 2)


def _compaction_action(table: HudiTable) -> object:
    planned = table.compaction.schedule()
    return planned and table.compaction.run(planned)


def _history_setup(table: HudiTable) -> None:
    _upsert(table, list(range(8)), 1)
    for seed in range(2, 6):
        _upsert(table, [0, 1], seed)


def _savepointed_setup(table: HudiTable) -> None:
    first = _upsert(table, list(range(8)), 1)
    table.savepoint(first)
    _upsert(table, [0, 1, 30], 2)


def _latest_write(table: HudiTable) -> str:
    return table.timeline()[-1].timestamp


def _savepoint_of_table(table: HudiTable) -> str:
    return next(i.timestamp for i in table.timeline() if i.action == "savepoint")


Scenario = tuple[str, Callable[[HudiTable], None], Callable[[HudiTable], object]]
SCENARIOS: list[Scenario] = [
    ("COPY_ON_WRITE", _upsert_setup, _upsert_action),
    ("MERGE_ON_READ", _upsert_setup, _upsert_action),
    ("MERGE_ON_READ", _compaction_setup, _compaction_action),
    ("COPY_ON_WRITE", _history_setup, lambda t: t.clean()),
    ("COPY_ON_WRITE", _history_setup, lambda t: t.archive()),
    ("COPY_ON_WRITE", _history_setup, lambda t: t.rollback(_latest_write(t))),
    ("MERGE_ON_READ", _history_setup, lambda t: t.savepoint(_latest_write(t))),
    ("COPY_ON_WRITE", _savepointed_setup, lambda t: t.restore(_savepoint_of_table(t))),
]
IDS = ["upsert-cow", "upsert-mor", "compaction", "clean", "archive", "rollback", "savepoint",
       "restore"]  # fmt: skip


def _recording_changes(monkeypatch) -> list[str]:
    """Every change the run makes to the table's files, in order: timeline instants and folder
    deletions (the metadata table's is the first there must be)."""
    changes: list[str] = []
    create, delete_dir = ActiveTimeline._create, Storage.delete_dir

    def recorded_create(self, instant, content):
        changes.append(f"instant {instant.timestamp}.{instant.action}.{instant.state.value}")
        return create(self, instant, content)

    def recorded_delete_dir(self, relative):
        changes.append(f"delete {relative}")
        return delete_dir(self, relative)

    monkeypatch.setattr(ActiveTimeline, "_create", recorded_create)
    monkeypatch.setattr(Storage, "delete_dir", recorded_delete_dir)
    return changes


@pytest.mark.parametrize(("table_type", "setup", "action"), SCENARIOS, ids=IDS)
def test_every_write_and_service_removes_the_metadata_table_first(
    tmp_path, monkeypatch, table_type, setup, action
):
    path, table = create_trips_table(tmp_path / "with", table_type, OPTIONS)
    twin_path, twin = create_trips_table(tmp_path / "twin", table_type, OPTIONS)
    for each in (table, twin):
        setup(each)
    before = lay_out_metadata_table(Path(path))
    rows_before = table.read()
    assert _data_rows(rows_before) == _data_rows(twin.read())
    timeline_before = table.timeline()

    changes = _recording_changes(monkeypatch)
    done = action(HudiTable.open(path, options=OPTIONS))
    monkeypatch.undo()

    assert done, "the service had work to do"
    assert changes[0] == "delete .hoodie/metadata", changes
    assert len(changes) > 1 or table.timeline() != timeline_before, "it then did its work"
    _assert_removed(Path(path), before)
    assert action(twin)
    ours = table.read()
    assert _data_rows(ours) == _data_rows(twin.read())  # as before, plus the change
    oracle.assert_same_table(ours, oracle.snapshot(path))


def test_a_table_without_one_is_left_as_it_is(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    _upsert(table, [1, 2], 1)
    written = (Path(path) / PROPERTIES).read_bytes()
    _upsert(table, [2, 3], 2)
    table.clean()
    assert (Path(path) / PROPERTIES).read_bytes() == written


def _tree(base: Path) -> dict[str, bytes]:
    return {str(p.relative_to(base)): p.read_bytes() for p in base.rglob("*") if p.is_file()}


REFUSED: list[tuple[str, Callable[[HudiTable], object]]] = [
    ("upsert", lambda t: _upsert(t, [1], 2)),
    ("compaction", lambda t: t.compaction.schedule()),
    ("clean", lambda t: t.clean()),
    ("archive", lambda t: t.archive()),
    ("rollback", lambda t: t.rollback(_latest_write(t))),
    ("savepoint", lambda t: t.savepoint(_latest_write(t))),
]


@pytest.mark.parametrize(("what", "action"), REFUSED, ids=[w for w, _ in REFUSED])
def test_metadata_enable_true_is_refused_and_nothing_changes(tmp_path, what, action):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", OPTIONS)
    _compaction_setup(table)
    lay_out_metadata_table(Path(path))
    tree = _tree(Path(path))
    asking = HudiTable.open(path, options={**OPTIONS, "hoodie.metadata.enable": "true"})
    with pytest.raises(InvalidOptionError, match="hoodie.metadata.enable=true.*not maintain"):
        action(asking)
    assert _tree(Path(path)) == tree
    with pytest.raises(InvalidOptionError, match="hoodie.metadata.enable"):
        table.write(datagen.trips([1], seed=3, ts=3), options={"hoodie.metadata.enable": True})
    assert _tree(Path(path)) == tree


# ---- a removal cut off by SIGKILL


_KILLED = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from hudi_core import HudiTable
    from hudi_core.config.table_config import TableConfig
    from hudi_core.storage import Storage
    from tests import datagen

    def dying_after(owner, name):
        original = getattr(owner, name)
        def wrapped(*args, **kwargs):
            result = original(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)
            return result
        setattr(owner, name, wrapped)

    dying_after({owner}, {name!r})
    HudiTable.open({path!r}).write(datagen.trips([0, 1, 20], seed=2, ts=2))
    """
)


@pytest.mark.parametrize(
    ("owner", "name", "announced_after_kill"),
    [("Storage", "delete_dir", True), ("TableConfig", "save_update", False)],
    ids=["after-the-folder-delete", "after-the-properties-update"],
)
def test_a_removal_killed_midway_completes_on_the_next_run(
    tmp_path, owner, name, announced_after_kill
):
    path, table = create_trips_table(tmp_path / "with", "MERGE_ON_READ")
    twin_path, twin = create_trips_table(tmp_path / "twin", "MERGE_ON_READ")
    for each in (table, twin):
        _upsert_setup(each)
    before = lay_out_metadata_table(Path(path))
    rows_before = _data_rows(table.read())

    code = _KILLED.format(root=str(ROOT), owner=owner, name=name, path=path)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()[-2000:]

    assert not (Path(path) / ".hoodie" / "metadata").exists()
    still_announced = "hoodie.table.metadata.partitions" in _properties(Path(path))
    assert still_announced == announced_after_kill
    reopened = HudiTable.open(path)  # the properties file reads whole, checksum valid
    assert _data_rows(reopened.read()) == rows_before  # the killed run wrote nothing

    _upsert_action(reopened)
    _assert_removed(Path(path), before)
    _upsert_action(twin)
    ours = reopened.read()
    assert _data_rows(ours) == _data_rows(twin.read())
    oracle.assert_same_table(ours, oracle.snapshot(path))
