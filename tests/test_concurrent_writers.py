"""Two writers (separate processes) and a compaction scheduler on one merge-on-read table under
optimistic concurrency, with the file-system lock and the database lock (SQLite, PostgreSQL):
no row is lost or duplicated, no two pending plans share a file group, and a conflicting
commit fails with a clear WriteConflictError, nothing else."""

from __future__ import annotations

import json
import multiprocessing
import re
import time
from itertools import combinations
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.merge.record_merger import DEFAULT_PAYLOAD
from hudi_core.model.compaction_plan import read_plan
from hudi_core.timeline import ActiveTimeline
from hudi_core.write.client import WriteClient
from tests import datagen, oracle
from tests.locks import lock_options
from tests.processes import run_writers_beside
from tests.tables import create_trips_table

pytestmark = pytest.mark.slow

SHARED_KEYS = list(range(20))  # five per city, written first; both writers update them
ROUNDS = 6
NEW_KEYS_PER_ROUND = 4
MAX_COMMITS = "hoodie.compact.inline.max.delta.commits"
CONFLICT = re.compile(
    r"^write (\d{17}) conflicts with (deltacommit|compaction) (\d{17}), which (completed|was "
    r"planned) after the write started and changes the same file groups: .+; the write is "
    r"rolled back, retry it$"
)


def _options(kind: str, folder: Path) -> dict:
    return {
        "hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
        **lock_options(kind, folder),
        "hoodie.write.lock.wait_time_ms_between_retry": 50,
        # Event-time ordering: per key the largest ts wins, whichever commit lands last.
        "hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD,
    }


def _ts(writer: int, round_: int) -> int:
    return 10 + 2 * round_ + writer  # unique per (writer, round): the winner of a key is known


def _batch(writer: int, round_: int) -> pa.Table:
    """Updates of the shared keys of two cities (writer 0 and 1 share one city in a round),
    plus new keys of the writer's own partition."""
    ts = _ts(writer, round_)
    cities = {(round_ + writer) % 4, (round_ + writer + 1) % 4}
    updated = [k for k in SHARED_KEYS if k % 4 in cities]
    first_new = 1000 + 100 * writer + 10 * round_
    new = list(range(first_new, first_new + NEW_KEYS_PER_ROUND))
    return pa.concat_tables(
        [
            datagen.trips(updated, seed=ts, ts=ts),
            datagen.trips(new, seed=ts, ts=ts, cities=[f"writer-{writer}"]),
        ]
    )


# ---- the processes (spawned: they import this module)


def _write_rounds(path, options, writer, start_together, first_round_done, out) -> None:
    """Upserts ROUNDS batches; records per round the instant committed or the error."""
    table = HudiTable.open(path, options)
    client = WriteClient(table.storage, table.config, table.engine)
    log = []
    for round_ in range(ROUNDS):
        job = client.start("upsert", options)  # loads the timeline the commit is checked against
        if round_ == 0:
            start_together.wait(120)  # both have loaded it: their commits must conflict
        try:
            log.append({"round": round_, "instant": job.run(*job.prepare(_batch(writer, round_)))})
        except Exception as exc:  # recorded, for the test to judge
            log.append({"round": round_, "error": type(exc).__name__, "message": str(exc)})
        if round_ == 0:
            first_round_done.wait(120)
    Path(out).write_text(json.dumps(log))


def _schedule_compactions(path, options, first_round_done, writers_done, out) -> None:
    """Plans compactions (never runs them) until the writers are done, then once more."""
    table = HudiTable.open(path, options)
    first_round_done.wait(120)  # round 0 stays a duel between the two writers
    plans, errors = [], []
    while True:
        last = writers_done.is_set()
        try:
            planned = table.compaction.schedule({MAX_COMMITS: 1})
            if planned is not None:
                plans.append(planned)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        if last:
            break
        time.sleep(0.1)
    Path(out).write_text(json.dumps({"plans": plans, "errors": errors}))


def _run_everyone(path: str, options: dict, folder: Path) -> tuple[list[list[dict]], dict]:
    context = multiprocessing.get_context("spawn")
    start_together, first_round_done = context.Barrier(2), context.Barrier(3)
    writers_done = context.Event()
    outs = [folder / f"writer-{w}.json" for w in (0, 1)]
    writers = [
        context.Process(
            target=_write_rounds,
            args=(path, options, w, start_together, first_round_done, str(outs[w])),
        )
        for w in (0, 1)
    ]
    scheduled = folder / "scheduler.json"
    scheduler = context.Process(
        target=_schedule_compactions,
        args=(path, options, first_round_done, writers_done, str(scheduled)),
    )
    run_writers_beside(writers, scheduler, writers_done, 180, 60)
    return [json.loads(out.read_text()) for out in outs], json.loads(scheduled.read_text())


# ---- checks


def _expected_rows(committed: list[tuple[int, int]]) -> dict[str, dict]:
    """Per key, the row with the largest ts among the first batch and the committed ones."""
    rows = {row["uuid"]: row for row in datagen.trips(SHARED_KEYS, seed=1, ts=1).to_pylist()}
    for writer, round_ in committed:
        for row in _batch(writer, round_).to_pylist():
            if row["uuid"] not in rows or row["ts"] > rows[row["uuid"]]["ts"]:
                rows[row["uuid"]] = row
    return rows


def _assert_rows(table: HudiTable, expected: dict[str, dict], context: str) -> pa.Table:
    ours = table.read()
    keys = ours["uuid"].to_pylist()
    assert len(keys) == len(set(keys)), f"{context}: duplicated keys"
    data = ours.drop_columns([c for c in ours.column_names if c.startswith("_hoodie_")])
    wanted = pa.Table.from_pylist(list(expected.values()), schema=datagen.SCHEMA)
    assert oracle.sorted_rows(data) == oracle.sorted_rows(wanted), f"{context}: rows differ"
    return ours


@pytest.mark.parametrize("kind", ["file_system", "sqlite", "postgresql"])
def test_two_writers_and_a_compaction_scheduler(kind, tmp_path):
    options = _options(kind, tmp_path)
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", options)
    first = table.write(datagen.trips(SHARED_KEYS, seed=1, ts=1))

    logs, scheduler = _run_everyone(path, options, tmp_path)

    # Round 0: both writers loaded the same timeline, then updated a shared file group.
    duel = [log[0] for log in logs]
    [winner] = [entry["instant"] for entry in duel if "instant" in entry]
    [loser] = [entry for entry in duel if "error" in entry]
    assert loser["error"] == "WriteConflictError", loser
    match = CONFLICT.match(loser["message"])
    assert match and match.group(2, 3, 4) == ("deltacommit", winner, "completed"), loser

    # Every failure is a clear conflict, and its instant was rolled back.
    timeline = ActiveTimeline.load(table.storage)
    on_timeline = {i.timestamp for i in timeline.instants}
    failures = [entry for log in logs for entry in log if "error" in entry]
    for failure in failures:
        assert failure["error"] == "WriteConflictError", failure
        failed_instant = CONFLICT.match(failure["message"]).group(1)
        assert failed_instant not in on_timeline, failure
    committed = [(w, e["round"]) for w, log in enumerate(logs) for e in log if "instant" in e]
    assert len(committed) + len(failures) == 2 * ROUNDS
    completed_writes = {i.timestamp for i in timeline.completed(["deltacommit"])}
    assert completed_writes == {first} | {
        e["instant"] for log in logs for e in log if "instant" in e
    }

    # (a) No compaction ran: every plan is still pending, and no two share a file group.
    assert scheduler["errors"] == []
    assert scheduler["plans"], "the scheduler never found a compaction to plan"
    assert [i.timestamp for i in timeline.pending(["compaction"])] == scheduler["plans"]
    groups = {plan: read_plan(timeline, plan).file_groups() for plan in scheduler["plans"]}
    for one, other in combinations(groups, 2):
        assert not groups[one] & groups[other], f"plans {one} and {other} share file groups"

    # (b) The rows are those of the committed rounds, each key once.
    expected = _expected_rows(committed)
    _assert_rows(table, expected, f"rounds {committed} committed, plans pending")

    # (c) Running every plan changes nothing, and hudi-rs reads the same rows.
    while table.compaction.run() is not None:
        pass
    assert table.compaction.pending() == []
    after = _assert_rows(table, expected, "after the compactions")
    oracle.assert_same_table(after, oracle.snapshot(path), "after the compactions (hudi-rs)")
