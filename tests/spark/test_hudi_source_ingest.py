"""The ingest job with a Hudi table as its source (`--source-format hudi`), as Apache Hudi's
HoodieIncrSource reads one: the upstream is a merge-on-read trips table hudi_core writes here;
each round reads the upstream commits after the downstream's checkpoint (the upstream instant
time recorded in the downstream's last commit), drops the upstream's meta columns, optionally
rewrites the rows with a transformer query and upserts them. After every round the
downstream's rows equal a model computed from the upstream's own reads, and hudi-rs reads the
downstream as we do.

The quick tests at the end plan rounds on the upstream's timeline alone (no Spark read): what
a pending upstream write blocks, what a pending clustering does not, and the arguments refused
before Spark starts."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_core import HudiTable, IncrementalHistoryError, InvalidOptionError
from hudi_core.schema.meta_fields import is_meta_field
from hudi_core.timeline import ActiveTimeline
from spark_jobs import ingest, sources
from tests import datagen, oracle
from tests.tables import create_trips_table, request_clustering

pytestmark = pytest.mark.spark

CITIES = ["san_francisco", "chennai"]  # two partitions: fewer Spark tasks per write
TABLE_FLAGS = ["--record-key-field", "uuid", "--partition-path-field", "city"]
NUM_INSTANTS = f"{sources.NUM_INSTANTS}=2"
READ_LATEST = f"{sources.MISSING_CHECKPOINT_STRATEGY}=READ_LATEST"
# Archive all but the last commits of a table soon (clean first, as archival wants).
ARCHIVE_SOON = {
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.cleaner.commits.retained": "1",
}
# The transformer of the tests: some rows filtered out, a column renamed, one derived.
TRANSFORMER = (
    "SELECT uuid, city, ts, fare AS amount, passengers * 10 AS seats "
    "FROM <SRC> WHERE passengers IS NOT NULL"
)


def trips(keys, seed: int) -> pa.Table:
    """datagen trips in two cities, ts = seed (later batches win)."""
    return datagen.trips(list(keys), seed=seed, ts=seed, cities=CITIES)


def upstream(tmp_path: Path) -> tuple[str, HudiTable]:
    """The upstream merge-on-read table (updates to log files)."""
    return create_trips_table(tmp_path, "MERGE_ON_READ", {"hoodie.parquet.small.file.limit": "0"})


def ingest_args(tmp_path: Path, source: str, *extra: str) -> list[str]:
    return [
        *("--base-path", str(tmp_path / "down"), "--table-name", "down"),
        *("--source-path", source, "--source-format", "hudi"),
        *TABLE_FLAGS,
        "--precombine-field",
        "ts",
        "--spark-master",
        "local[2]",
        *extra,
    ]


def conf(*pairs: str) -> list[str]:
    return [arg for pair in pairs for arg in ("--hoodie-conf", pair)]


def data_rows(table: pa.Table) -> list[dict]:
    """The rows without meta columns, in a canonical order."""
    return oracle.sorted_rows(table.select([n for n in table.column_names if not is_meta_field(n)]))


def transformed(rows: pa.Table) -> pa.Table:
    """What TRANSFORMER makes of upstream rows, computed with pyarrow."""
    kept = rows.filter(pc.is_valid(rows["passengers"]))
    seats = pc.multiply(kept["passengers"], pa.scalar(10, pa.int32()))
    return pa.table(
        {
            "uuid": kept["uuid"],
            "city": kept["city"],
            "ts": kept["ts"],
            "amount": kept["fare"],
            "seats": seats,
        }
    )


def writes(path: str) -> list[str]:
    return [i.timestamp for i in HudiTable.open(path).inspect.timeline() if i.is_write]


def checkpoint(path: str) -> str | None:
    return ingest.last_checkpoint(HudiTable.open(path))


def check_downstream(down: str, expected: pa.Table | list[dict], step: str) -> None:
    """The downstream's rows (ours) equal `expected`, and hudi-rs reads what we read."""
    ours = HudiTable.open(down).read()
    wanted = expected if isinstance(expected, list) else data_rows(expected)
    assert data_rows(ours) == wanted, f"{step}: the downstream differs from the model"
    oracle.assert_same_table(ours, oracle.snapshot(down), f"{step}: hudi-rs snapshot")


# ---- rounds through Spark


def test_rounds_take_the_upstream_commits_after_the_checkpoint(spark, tmp_path):
    source, table = upstream(tmp_path)
    down = str(tmp_path / "down")
    first = table.write(trips(range(0, 20), seed=1))

    result = ingest.main(ingest_args(tmp_path, source))

    assert result["counts"]["commits"] == 1 and result["counts"]["checkpoint"] == first
    assert result["counts"]["inserts"] == 20
    assert checkpoint(down) == first  # the upstream instant consumed
    check_downstream(down, table.read(), "round 1")
    schema = HudiTable.open(down).schema()
    assert schema is not None and schema.names == datagen.SCHEMA.names  # no upstream meta

    # Two upstream commits (updates to log files, new keys) are taken in one round.
    table.write(trips(range(0, 10), seed=2))
    latest = table.write(trips([*range(5, 15), *range(20, 25)], seed=3))
    result = ingest.main(ingest_args(tmp_path, source))

    assert result["counts"]["commits"] == 2 and result["counts"]["checkpoint"] == latest
    assert (result["counts"]["inserts"], result["counts"]["updates"]) == (5, 15)
    assert checkpoint(down) == latest
    check_downstream(down, table.read(), "round 2")

    # Upstream deletes do not reach the downstream, as with Apache Hudi's HoodieIncrSource:
    # the incremental read returns the upstream's current rows of the commits in range, and
    # a deleted record has none, so the upsert keeps it. The delete commit is consumed still
    # (an empty commit records the checkpoint).
    before = table.read()
    deleted = table.write(trips(range(0, 3), seed=4), "delete")
    result = ingest.main(ingest_args(tmp_path, source))
    assert result["counts"]["commits"] == 1 and checkpoint(down) == deleted
    assert result["counts"]["rows_written"] == 0
    assert table.read().num_rows == before.num_rows - 3
    check_downstream(down, before, "after the upstream delete")

    # No new upstream commit: nothing is written.
    done = writes(down)
    result = ingest.main(ingest_args(tmp_path, source))
    assert result["instant_time"] is None and result["state"] == "NOTHING_TO_DO"
    assert result["counts"] == {"commits": 0, "checkpoint": deleted, "rounds": 1}
    assert writes(down) == done


def test_a_transformer_query_rewrites_each_rounds_rows(spark, tmp_path):
    source, table = upstream(tmp_path)
    down = str(tmp_path / "down")
    first = table.write(trips(range(0, 20), seed=1))
    ingest.main(ingest_args(tmp_path, source, "--transformer-sql", TRANSFORMER))
    model = upserted({}, transformed(table.read()))
    check_downstream(down, transformed(table.read()), "round 1")

    # An update of some keys: the round reads only those (incremental), transformed alike; a
    # key the query now filters out keeps its row (an upsert deletes nothing).
    updated = table.write(trips(range(0, 8), seed=2))
    result = ingest.main(ingest_args(tmp_path, source, "--transformer-sql", TRANSFORMER))
    assert result["counts"]["checkpoint"] == updated
    read = table.read(query_type="incremental", begin=first, end=updated)
    assert read.num_rows == 8
    model = upserted(model, transformed(read))
    check_downstream(down, oracle.sorted_rows(pa.Table.from_pylist(list(model.values()))), "2")
    # The temporary views of the rounds are gone.
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("hoodie_src_tmp")]


def upserted(model: dict[str, dict], rows: pa.Table) -> dict[str, dict]:
    """The model after an upsert of `rows` (each round's ts is larger than the last's)."""
    return {**model, **{row["uuid"]: row for row in rows.to_pylist()}}


def test_num_instants_caps_the_commits_of_a_round(spark, tmp_path):
    source, table = upstream(tmp_path)
    down = str(tmp_path / "down")
    instants = [
        table.write(trips(range(0, 10), seed=1)),
        table.write(trips(range(5, 15), seed=2)),
        table.write(trips(range(10, 20), seed=3)),
    ]
    capped = ingest_args(tmp_path, source, *conf(NUM_INSTANTS))

    result = ingest.main(capped)

    # Without a checkpoint the round reads the snapshot's rows committed up to its end, as
    # HoodieIncrSource does: keys the third commit updated wait for the round reading it.
    assert result["counts"]["commits"] == 2 and checkpoint(down) == instants[1]
    snapshot = table.read()
    committed = pc.less_equal(snapshot["_hoodie_commit_time"], instants[1])
    check_downstream(down, snapshot.filter(committed), "the first two commits")
    assert len(data_rows(HudiTable.open(down).read())) == 10  # keys 0-9; 10-14 wait
    result = ingest.main(capped)
    assert result["counts"]["commits"] == 1 and checkpoint(down) == instants[2]
    check_downstream(down, table.read(), "the third")


def test_read_latest_takes_only_the_latest_commit_without_a_checkpoint(spark, tmp_path):
    source, table = upstream(tmp_path)
    down = str(tmp_path / "down")
    table.write(trips(range(0, 10), seed=1))
    latest = table.write(trips(range(8, 14), seed=2))

    result = ingest.main(ingest_args(tmp_path, source, *conf(READ_LATEST)))

    assert result["counts"]["commits"] == 1 and checkpoint(down) == latest
    expected = table.read(begin=writes(source)[0], end=latest, query_type="incremental")
    check_downstream(down, expected, "the latest commit")
    assert sorted(HudiTable.open(down).read(columns=["uuid"])["uuid"].to_pylist()) == [
        f"key-{k:06d}" for k in range(8, 14)
    ]


def test_a_transformer_query_rewrites_files_too(spark, tmp_path):
    """The transformer is the round's, whatever the source: here parquet files (which Python
    reads on the executors, turned into a DataFrame for the query)."""
    landing = tmp_path / "landing"
    landing.mkdir()
    rows = trips(range(0, 12), seed=1)
    pq.write_table(rows, landing / "drop-1.parquet")
    arguments = ingest_args(tmp_path, str(landing), "--transformer-sql", TRANSFORMER)
    arguments[arguments.index("hudi")] = "parquet"

    result = ingest.main(arguments)

    assert result["counts"]["files"] == 1
    check_downstream(str(tmp_path / "down"), transformed(rows), "parquet, transformed")


def test_a_checkpoint_before_the_active_timeline_reads_the_snapshot_after_it(spark, tmp_path):
    """--checkpoint (an upstream instant time) whose next commits were archived upstream:
    the round reads the snapshot's rows committed after it (see the planning test below)."""
    source, table, instants = _written(tmp_path, 5, "COPY_ON_WRITE")
    table.clean(ARCHIVE_SOON)
    table.archive(ARCHIVE_SOON)
    down = str(tmp_path / "down")

    result = ingest.main(ingest_args(tmp_path, source, "--checkpoint", instants[0]))

    assert result["counts"]["checkpoint"] == instants[4] and checkpoint(down) == instants[4]
    snapshot = table.read()
    after = snapshot.filter(pc.greater(snapshot["_hoodie_commit_time"], instants[0]))
    assert after.num_rows == 5  # key 0, written by the first commit only, is not read
    check_downstream(down, after, "after an archived checkpoint")


# ---- planning rounds on the upstream's timeline (no Spark read)


def _written(
    tmp_path: Path, count: int, table_type: str = "MERGE_ON_READ"
) -> tuple[str, HudiTable, list[str]]:
    source, table = create_trips_table(tmp_path, table_type)
    instants = [table.write(trips(range(i, i + 2), seed=i + 1)) for i in range(count)]
    return source, table, instants


def test_a_round_plans_the_commits_after_the_checkpoint(tmp_path):
    source, table, instants = _written(tmp_path, 3)
    size = [table.inspect.commit(i).totals.bytes_written for i in instants]
    # No checkpoint: everything up to the latest, from the snapshot (HoodieIncrSource's).
    everything = sources.Commits(sources.BEGINNING, instants[2], 3, True, sum(size))
    assert sources.new_commits(source, None) == everything
    assert sources.new_commits(source, instants[0]) == sources.Commits(
        instants[0], instants[2], 2, False, size[1] + size[2]
    )
    assert sources.new_commits(source, instants[2]) == sources.Commits(instants[2], None, 0)
    capped = {sources.NUM_INSTANTS: "2"}
    assert sources.new_commits(source, None, capped).end == instants[1]
    older = {"hoodie.deltastreamer.source.hoodieincr.num_instants": "1"}  # its older name
    assert sources.new_commits(source, instants[0], older).end == instants[1]
    # READ_LATEST: from just before the latest commit (Apache Hudi's begin), incrementally.
    latest = {sources.MISSING_CHECKPOINT_STRATEGY: "read_latest"}
    just_before = str(int(instants[2]) - 1)
    assert sources.new_commits(source, None, latest) == sources.Commits(
        just_before, instants[2], 1, False, size[2]
    )


def test_a_checkpoint_archived_upstream_is_read_from_the_snapshot(tmp_path):
    """As HoodieIncrSource: a range beginning before the active timeline (its commits
    archived) reads the snapshot's rows committed in it, which archival does not lose
    (copy-on-write here: archival keeps a merge-on-read table's delta commits until a
    compaction)."""
    source, table, instants = _written(tmp_path, 5, "COPY_ON_WRITE")
    table.clean(ARCHIVE_SOON)
    table.archive(ARCHIVE_SOON)
    active = [i.timestamp for i in HudiTable.open(source).inspect.timeline() if i.is_write]
    assert instants[1] < active[0]  # the checkpoint's next commits were archived
    planned = sources.new_commits(source, instants[0])
    assert (planned.begin, planned.end, planned.count) == (instants[0], instants[4], len(active))
    assert planned.snapshot
    assert not sources.new_commits(source, active[0]).snapshot


def test_upstream_files_cleaned_after_the_checkpoint_fail_the_round_clearly(tmp_path):
    """Rows of commits whose files were cleaned are gone from an incremental read: the round
    fails naming the option that reads them from a scan of the table instead."""
    source, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    instants = [table.write(trips([0, 1], seed=i + 1)) for i in range(4)]
    table.clean({"hoodie.cleaner.commits.retained": "1"})
    with pytest.raises(IncrementalHistoryError, match="fallback.fulltablescan.enable=true"):
        sources.new_commits(source, instants[0])
    fallback = {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}
    planned = sources.new_commits(source, instants[0], fallback)
    assert (planned.begin, planned.end, planned.count) == (instants[0], instants[3], 3)


def test_a_pending_upstream_write_blocks_the_commits_after_it(tmp_path):
    """Apache Hudi's hollow-commit handling BLOCK: a write still pending may complete with an
    instant time before a later completed one; a checkpoint past it would skip it."""
    source, table, instants = _written(tmp_path, 2)
    # A writer that started between the two writes and has not completed yet.
    pending = str(int(instants[1]) - 1)
    assert pending > instants[0]
    ActiveTimeline.load(table.storage).create_requested("deltacommit", pending, ordered=False)
    assert sources.new_commits(source, None).end == instants[0]
    assert sources.new_commits(source, instants[0]).end is None


def test_a_pending_clustering_does_not_block(tmp_path):
    source, table, instants = _written(tmp_path, 2)
    request_clustering(source, "chennai")
    later = table.write(trips([50], seed=9))
    planned = sources.new_commits(source, instants[1])
    assert (planned.begin, planned.end, planned.count) == (instants[1], later, 1)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--transformer-sql", "SELECT * FROM trips"), "does not read <SRC>"),
        (conf("hoodie.streamer.transformer.sql=SELECT 1"), "does not read <SRC>"),
        (
            (
                "--transformer-sql",
                "SELECT * FROM <SRC>",
                *conf("hoodie.streamer.transformer.sql=x"),
            ),
            "different queries",
        ),
        (("--checkpoint", "2026-01-01"), "an instant time of the upstream table"),
        (("--modified-since", "2026-01-01"), "--modified-since applies to file sources"),
        (("--source-limit", "100"), "--source-limit applies to file sources"),
        (conf(f"{sources.NUM_INSTANTS}=0"), "num_instants must be a whole number > 0"),
        (conf(f"{sources.MISSING_CHECKPOINT_STRATEGY}=ALL"), "must be READ_UPTO_LATEST_COMMIT"),
        (conf(f"{sources.DROP_ALL_META_FIELDS}=yes"), "must be true or false"),
    ],
)
def test_bad_hudi_source_arguments_fail_before_spark_starts(tmp_path, extra, message):
    source, _, _ = _written(tmp_path, 1)
    with pytest.raises(InvalidOptionError, match=message):
        ingest.main(ingest_args(tmp_path, source, *extra))


def test_the_upstream_must_be_another_hudi_table(tmp_path):
    with pytest.raises(InvalidOptionError, match="no Hudi table|not a Hudi table|hoodie"):
        ingest.main(ingest_args(tmp_path, str(tmp_path / "nothing")))
    source, _, _ = _written(tmp_path, 1)
    itself = [*ingest_args(tmp_path, source)]
    itself[itself.index(str(tmp_path / "down"))] = source
    with pytest.raises(InvalidOptionError, match="is the table itself"):
        ingest.main(itself)
