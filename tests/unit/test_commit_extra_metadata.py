"""hoodie.datasource.write.commitmeta.key.prefix on hudi_core's local writes and compactions:
options whose keys start with the prefix ("_" by default) land in the commit's extraMetadata,
key and value as given; others do not; a write's own extra metadata wins."""

from __future__ import annotations

from hudi_core.write.commit_extra import commit_extra_metadata
from tests.datagen import trips
from tests.tables import create_trips_table

PREFIX = "hoodie.datasource.write.commitmeta.key.prefix"
RUN = {"_hoodie.airflow.dag_id": "trips_ingest", "_hoodie.airflow.run_id": "manual__1"}


def _extra(table, instant_time: str) -> dict[str, str]:
    return table.inspect.commit(instant_time).extra_metadata


def test_prefixed_options_are_copied_into_the_commit(tmp_path):
    _, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    first = table.write(trips([1, 2], seed=1, ts=1), "upsert", {**RUN, "hoodie.x": "1"})

    extra = _extra(table, first)
    assert {k: v for k, v in extra.items() if k.startswith("_")} == RUN
    assert "hoodie.x" not in extra and PREFIX not in extra
    assert "schema" in extra  # the commit's own keys stay

    second = table.write(trips([1], seed=2, ts=2), "upsert")
    assert not any(k.startswith("_") for k in _extra(table, second))


def test_a_custom_prefix_and_the_writes_own_metadata(tmp_path):
    _, table = create_trips_table(tmp_path, "MERGE_ON_READ")
    options = {PREFIX: "pipeline.", "pipeline.run": "r7", **RUN}
    instant = table.write(
        trips([1], seed=1, ts=1), "upsert", options, extra_metadata={"pipeline.run": "own"}
    )

    extra = _extra(table, instant)
    assert extra["pipeline.run"] == "own"  # what the writer passes wins over its options
    assert not any(k.startswith("_hoodie") for k in extra)


def test_an_empty_prefix_copies_nothing():
    assert commit_extra_metadata({PREFIX: "", "a": "1", "_b": "2"}) == {}
    assert commit_extra_metadata({"_b": "2", "_a": 1}) == {"_a": "1", "_b": "2"}  # type: ignore[dict-item]


def test_compactions_run_with_options_record_them(tmp_path):
    _, table = create_trips_table(
        tmp_path, "MERGE_ON_READ", {"hoodie.compact.inline.max.delta.commits": "1"}
    )
    table.write(trips([1, 2], seed=1, ts=1), "upsert")
    table.write(trips([1, 2], seed=2, ts=2), "upsert")
    planned = table.compaction.schedule()
    assert planned is not None

    done = table.compaction.run(planned, options={"_hoodie.airflow.task_id": "execute_compaction"})

    commit = table.inspect.commit(done)
    assert commit.compacted
    assert commit.extra_metadata["_hoodie.airflow.task_id"] == "execute_compaction"
