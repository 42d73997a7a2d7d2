"""A key that would live only in a log, where SIMPLE and BLOOM never look.

On merge-on-read a key deleted in a log stays in its file group's base file until compaction.
Once a compaction of that slice is scheduled, writes go to the logs of the next slice, whose
base file (the compaction's) will lack the key. An upsert of the key then must not update
that file group: the key would live only in a log after the compaction, and the next lookup
in base files would not find it (a second copy on upsert, a dropped delete). The index treats
a key located only where it is deleted as new: an insert, into a base file.

Without a pending compaction the update is fine (the next compaction merges base, delete and
update, and the key stays in the base file), and so are the global indexes and BUCKET: each
case is checked against a model of the table, by our reader and by hudi-rs once the
compaction has run (hudi-rs 0.5 hides a pending compaction's new logs).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests import datagen
from tests.trips_model import INDEXES, TripsModel, trips_table_on_index

KEYS = list(range(8))  # two keys in each of the four city partitions
DELETED = KEYS[::2]


def _schedule_compaction(table: Any) -> str:
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    assert planned is not None
    return str(planned)


@pytest.mark.parametrize("then", ["upsert", "delete"])
@pytest.mark.parametrize("pending_compaction", [True, False], ids=["pending", "no_pending"])
@pytest.mark.parametrize(
    "table_type, index",
    [("COPY_ON_WRITE", "SIMPLE"), *(("MERGE_ON_READ", index) for index in INDEXES)],
)
def test_a_key_upserted_after_its_delete_is_found_after_compaction(
    tmp_path, table_type, index, pending_compaction, then
):
    """Write, delete, (schedule a compaction), upsert the deleted keys, run the compaction;
    the next upsert updates them (read once), the next delete removes them."""
    table = trips_table_on_index(tmp_path, table_type, index)
    model = TripsModel()
    first = datagen.trips(KEYS, seed=1, ts=1)
    table.write(first)
    model.upsert(first)
    deleted = datagen.trips(DELETED, seed=2, ts=2)
    table.write(deleted, operation="delete")
    model.delete(deleted)
    planned = None
    if table_type == "MERGE_ON_READ" and pending_compaction:
        planned = _schedule_compaction(table)
    again = datagen.trips(DELETED, seed=3, ts=3)
    table.write(again)
    model.upsert(again)
    model.check(table, "after the upsert of the deleted keys", oracle_too=planned is None)
    if table_type == "MERGE_ON_READ":
        table.compaction.run(planned or _schedule_compaction(table))
    model.check(table, "after the compaction")
    if then == "upsert":
        batch = datagen.trips(KEYS, seed=4, ts=4)
        table.write(batch)
        model.upsert(batch)
    else:
        batch = datagen.trips(KEYS[:6], seed=4, ts=4)
        table.write(batch, operation="delete")
        model.delete(batch)
    model.check(table, f"after the {then}")


@pytest.mark.parametrize("index", ["SIMPLE", "BLOOM", "GLOBAL_SIMPLE"])
def test_a_key_deleted_after_the_schedule_is_found_after_compaction(tmp_path, index):
    """The delete lands in the new slice's log (after the schedule): the compaction's base
    file keeps the key, the log deletes it; an upsert then, and one after the compaction,
    leave it once."""
    table = trips_table_on_index(tmp_path, "MERGE_ON_READ", index)
    model = TripsModel()
    first = datagen.trips(KEYS, seed=1, ts=1)
    table.write(first)
    model.upsert(first)
    table.write(datagen.trips(KEYS[1::2], seed=2, ts=2))  # logs, for the plan to compact
    model.upsert(datagen.trips(KEYS[1::2], seed=2, ts=2))
    planned = _schedule_compaction(table)
    deleted = datagen.trips(DELETED, seed=3, ts=3)
    table.write(deleted, operation="delete")
    model.delete(deleted)
    again = datagen.trips(DELETED, seed=4, ts=4)
    table.write(again)
    model.upsert(again)
    model.check(table, "after the upsert of the deleted keys", oracle_too=False)
    table.compaction.run(planned)
    model.check(table, "after the compaction")
    batch = datagen.trips(KEYS, seed=5, ts=5)
    table.write(batch)
    model.upsert(batch)
    model.check(table, "after the upsert")


@pytest.mark.parametrize("index", INDEXES)
def test_a_delete_of_keys_the_pending_plan_deletes_changes_nothing(tmp_path, index):
    """Deleting again keys the planned slice already deleted (found in its base file only):
    nothing to delete, nothing is brought back; a live key of the same batch is deleted."""
    table = trips_table_on_index(tmp_path, "MERGE_ON_READ", index)
    model = TripsModel()
    first = datagen.trips(KEYS, seed=1, ts=1)
    table.write(first)
    model.upsert(first)
    deleted = datagen.trips(DELETED, seed=2, ts=2)
    table.write(deleted, operation="delete")
    model.delete(deleted)
    planned = _schedule_compaction(table)
    again = datagen.trips([*DELETED, 1], seed=3, ts=3)
    table.write(again, operation="delete")
    model.delete(again)
    model.check(table, "after the second delete", oracle_too=False)
    table.compaction.run(planned)
    model.check(table, "after the compaction")
    batch = datagen.trips(KEYS, seed=4, ts=4)
    table.write(batch)
    model.upsert(batch)
    model.check(table, "after the upsert")
