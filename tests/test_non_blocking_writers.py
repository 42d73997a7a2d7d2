"""Two stream writers (separate processes) and a compaction scheduler on one merge-on-read
bucket table under non-blocking concurrency control: no commit fails, every writer's log files
carry its suffix, and the rows (ours, and hudi-rs's read of the compacted table) equal the
per-group model of what the streams wrote."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable, InvalidOptionError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.file_names import LogFileName
from hudi_core.timeline import ActiveTimeline
from tests import oracle
from tests.locks import lock_options
from tests.processes import run_writers_beside

pytestmark = pytest.mark.slow

ROUNDS = 10
KEYS = [f"u{i}" for i in range(24)]
STREAMS = {0: ("job1", "_ts1", "name"), 1: ("job2", "_ts2", "age")}
MAX_COMMITS = "hoodie.compact.inline.max.delta.commits"


def _options(folder: Path) -> dict:
    return {
        "hoodie.datasource.write.payload.class": (
            "org.apache.hudi.common.model.PartialUpdateAvroPayload"
        ),
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.num.buckets": "4",
        "hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL",
        "hoodie.cleaner.policy.failed.writes": "LAZY",
        **lock_options("file_system", folder),
        "hoodie.write.lock.wait_time_ms_between_retry": 20,
    }


def _batch(writer: int, round_: int) -> pa.Table:
    """A stream's round: half the keys, ordering values that go back in time every third round
    (late events, which must not win) and are unique per (writer, round)."""
    _, field, column = STREAMS[writer]
    keys = KEYS[round_ % 2 :: 2]
    ordering = 100 + round_ if round_ % 3 else 10 + round_
    values = [
        f"{k}-r{round_}" if column == "name" else round_ * 100 + i for i, k in enumerate(keys)
    ]
    return pa.table({"uuid": keys, column: values, field: [ordering] * len(keys)})


def _model() -> dict[str, dict]:
    rows: dict[str, dict] = {k: {"uuid": k} for k in KEYS}
    for writer, (_, field, column) in STREAMS.items():
        best: dict[str, tuple[int, object]] = {}
        for round_ in range(ROUNDS):
            batch = _batch(writer, round_).to_pylist()
            for row in batch:
                if row["uuid"] not in best or row[field] >= best[row["uuid"]][0]:
                    best[row["uuid"]] = (row[field], row[column])
        for key in KEYS:
            ordering, value = best.get(key, (None, None))
            rows[key].update({field: ordering, column: value})
    return rows


def _write_rounds(path: str, options: dict, writer: int, start, out: str) -> None:
    suffix = STREAMS[writer][0]
    table = HudiTable.open(path, options)
    start.wait(120)
    log = []
    for round_ in range(ROUNDS):
        try:
            instant = table.write(
                _batch(writer, round_), "upsert", {"hoodie.write.log.suffix": suffix}
            )
            log.append({"instant": instant})
        except Exception as exc:  # recorded, for the test to judge
            log.append({"error": f"{type(exc).__name__}: {exc}"})
    Path(out).write_text(json.dumps(log))


def _compact(path: str, options: dict, start, writers_done, out: str) -> None:
    table = HudiTable.open(path, options)
    start.wait(120)
    done, errors = [], []
    while True:
        last = writers_done.is_set()
        try:
            planned = table.compaction.schedule({MAX_COMMITS: 1})
            if planned is not None:
                table.compaction.run(planned)
                done.append(planned)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        if last:
            break
        time.sleep(0.05)
    Path(out).write_text(json.dumps({"compactions": done, "errors": errors}))


def test_two_streams_and_compaction_never_block_each_other(tmp_path):
    path = str(tmp_path / "wide")
    options = _options(tmp_path)
    HudiTable.create(
        path, "wide", "MERGE_ON_READ", ["uuid"], [], "_ts1:name;_ts2:age", options=options
    )
    context = multiprocessing.get_context("spawn")
    start, writers_done = context.Barrier(3), context.Event()
    outs = [str(tmp_path / f"writer-{w}.json") for w in STREAMS]
    compactor_out = str(tmp_path / "compactor.json")
    writers = [
        context.Process(target=_write_rounds, args=(path, options, w, start, outs[w]))
        for w in STREAMS
    ]
    compactor = context.Process(
        target=_compact, args=(path, options, start, writers_done, compactor_out)
    )
    run_writers_beside(writers, compactor, writers_done, 300, 120)
    logs = [json.loads(Path(out).read_text()) for out in outs]
    compactions = json.loads(Path(compactor_out).read_text())
    assert [e for log in logs for e in log if "error" in e] == []  # no commit failed
    assert compactions["errors"] == []
    assert compactions["compactions"], "the scheduler never compacted while the streams wrote"

    # every log file a writer committed carries its suffix
    timeline = ActiveTimeline.load(HudiTable.open(path).storage)
    for writer, log in enumerate(logs):
        for entry in log:
            metadata = CommitMetadata.from_json_bytes(
                timeline.read_bytes(timeline.find(entry["instant"]))
            )
            names = [s.path.rsplit("/", 1)[-1] for s in metadata.write_stats()]
            assert names and all(
                LogFileName.parse(n) is not None
                and LogFileName.parse(n).suffix == STREAMS[writer][0]
                for n in names
            ), names

    table = HudiTable.open(path, options)
    expected = _model()
    columns = ["uuid", "name", "_ts1", "age", "_ts2"]
    got = {r["uuid"]: r for r in table.read(columns=columns).to_pylist()}
    assert got == expected
    table.compaction.schedule({MAX_COMMITS: 1})
    table.compaction.run()
    assert {r["uuid"]: r for r in table.read(columns=columns).to_pylist()} == expected
    read_optimized = oracle.snapshot(
        path, hudi_options={"hoodie.read.use.read_optimized.mode": "true"}
    )
    assert {r["uuid"]: r for r in read_optimized.select(columns).to_pylist()} == expected


def test_non_blocking_concurrency_needs_merge_on_read_and_the_bucket_index(tmp_path):
    options = {"hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL"}
    table = HudiTable.create(
        str(tmp_path / "t"), "t", "COPY_ON_WRITE", ["uuid"], [], "ts", options=options
    )
    with pytest.raises(
        InvalidOptionError, match="needs a MERGE_ON_READ table with hoodie.index.type=BUCKET"
    ):
        table.write(pa.table({"uuid": ["a"], "ts": [1]}), "upsert")
    assert table.timeline() == []
