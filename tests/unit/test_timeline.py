"""Timeline: instant file names of table version 6, state transitions, instant times."""

from __future__ import annotations

import pytest

from hudi_core.errors import TimelineError
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State
from hudi_core.timeline.instant_time import new_instant_time, parse_instant_time


@pytest.mark.parametrize(
    ("name", "action", "state"),
    [
        ("20240101000000000.commit.requested", "commit", State.REQUESTED),
        ("20240101000000000.inflight", "commit", State.INFLIGHT),
        ("20240101000000000.commit", "commit", State.COMPLETED),
        ("20240101000000000.deltacommit.inflight", "deltacommit", State.INFLIGHT),
        ("20240101000000000.replacecommit", "replacecommit", State.COMPLETED),
        ("20240101000000000.rollback.requested", "rollback", State.REQUESTED),
        ("20240101000000.compaction.requested", "compaction", State.REQUESTED),
    ],
)
def test_instant_file_names_round_trip(name, action, state):
    instant = Instant.from_file_name(name)
    assert (instant.action, instant.state) == (action, state)
    assert instant.file_name == name


@pytest.mark.parametrize("name", ["hoodie.properties", "20240101.commit", "x.commit", "1.foo"])
def test_other_files_are_not_instants(name):
    assert Instant.from_file_name(name) is None


def test_compaction_completes_as_a_commit():
    requested = Instant("20240101000000000", "compaction", State.REQUESTED)
    assert requested.with_state(State.COMPLETED).file_name == "20240101000000000.commit"


def test_transitions_create_new_files_and_readers_see_only_completed(tmp_path):
    timeline = ActiveTimeline.load(Storage(str(tmp_path)))
    ts = timeline.new_instant_time()
    requested = timeline.create_requested("commit", ts)
    inflight = timeline.transition(requested, State.INFLIGHT, b"{}")
    assert ActiveTimeline.load(Storage(str(tmp_path))).completed() == []
    timeline.transition(inflight, State.COMPLETED, b'{"a": 1}')
    loaded = ActiveTimeline.load(Storage(str(tmp_path)))
    assert [i.file_name for i in loaded.completed()] == [f"{ts}.commit"]
    assert loaded.read_json(loaded.completed()[0]) == {"a": 1}
    names = sorted(p.name for p in (tmp_path / ".hoodie").iterdir())
    assert names == [f"{ts}.commit", f"{ts}.commit.requested", f"{ts}.inflight"]


def test_instant_files_are_never_overwritten(tmp_path):
    timeline = ActiveTimeline.load(Storage(str(tmp_path)))
    ts = timeline.new_instant_time()
    requested = timeline.create_requested("commit", ts)
    timeline.transition(requested, State.INFLIGHT)
    with pytest.raises(TimelineError, match="already exists"):
        timeline.transition(requested, State.INFLIGHT)


def test_transition_must_follow_the_state_order(tmp_path):
    timeline = ActiveTimeline.load(Storage(str(tmp_path)))
    requested = timeline.create_requested("commit", timeline.new_instant_time())
    with pytest.raises(TimelineError, match="cannot move"):
        timeline.transition(requested, State.COMPLETED)


def test_new_instant_must_come_after_the_latest(tmp_path):
    timeline = ActiveTimeline.load(Storage(str(tmp_path)))
    latest = timeline.new_instant_time()
    timeline.create_requested("commit", latest)
    with pytest.raises(TimelineError, match="strictly increase"):
        timeline.create_requested("commit", "20000101000000000")


def test_instant_times_strictly_increase_even_when_the_clock_does_not():
    future = "29990101000000999"
    first = new_instant_time(future, table_key="t1")
    second = new_instant_time(None, table_key="t1")
    assert future < first < second
    assert len(first) == 17 and parse_instant_time(first)


def test_many_instant_times_in_a_row_are_distinct():
    times = [new_instant_time(None, table_key="t2") for _ in range(200)]
    assert times == sorted(set(times))


@pytest.mark.parametrize(
    ("savepointed", "start"),
    [
        ((), "20240101000000001"),  # the first completed write
        (("20240101000000001",), "20240101000000003"),  # savepointed commits do not count
        (("20240101000000001", "20240101000000003"), "20240101000000003"),  # all: the last
    ],
)
def test_the_timeline_starts_at_the_first_write_not_savepointed(tmp_path, savepointed, start):
    done = State.COMPLETED
    instants = [
        Instant("20240101000000001", "commit", done),
        Instant("20240101000000002", "commit", State.INFLIGHT),
        Instant("20240101000000003", "commit", done),
        Instant("20240101000000004", "clean", done),
        *(Instant(t, "savepoint", done) for t in savepointed),
    ]
    assert ActiveTimeline(Storage(str(tmp_path)), instants).timeline_start() == start
