"""Apache Hudi -> us: every copy-on-write table Apache Hudi wrote reads here as hudi-rs reads it."""

from __future__ import annotations

import pytest

from hudi_core import HudiTable
from tests import oracle
from tests.conftest import fixture_zips

COW_TABLES = [z.stem for z in fixture_zips("cow")]


@pytest.mark.parametrize("name", COW_TABLES)
def test_snapshot_matches_hudi_rs(hudi_fixture, name):
    path = hudi_fixture("cow", name)
    ours = HudiTable.open(str(path)).read()
    oracle.assert_same_table(ours, oracle.snapshot(str(path)), name)


@pytest.mark.parametrize("name", COW_TABLES)
def test_time_travel_to_every_commit_matches_hudi_rs(hudi_fixture, name):
    path = hudi_fixture("cow", name)
    table = HudiTable.open(str(path))
    commits = oracle.completed_commit_times(str(path))
    assert [i.timestamp for i in table.timeline() if i.is_completed] == commits
    for instant in commits:
        ours = table.read(as_of=instant)
        oracle.assert_same_table(
            ours, oracle.snapshot(str(path), as_of=instant), f"{name}@{instant}"
        )


@pytest.mark.parametrize("name", COW_TABLES)
def test_incremental_between_commits_matches_hudi_rs(hudi_fixture, name):
    path = hudi_fixture("cow", name)
    table = HudiTable.open(str(path))
    commits = ["00000000000000000", *oracle.completed_commit_times(str(path))]
    for begin, end in zip(commits, commits[1:], strict=False):
        ours = table.read(query_type="incremental", begin=begin, end=end)
        theirs = oracle.incremental(str(path), begin, end)
        oracle.assert_same_table(ours, theirs, f"{name} ({begin}, {end}]")


def test_fixtures_are_present():
    assert len(COW_TABLES) >= 6
