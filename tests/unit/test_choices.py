"""The public enums: members equal Apache Hudi's spellings, strings in any case still work."""

from __future__ import annotations

import pytest

from hudi_core import (
    CompactionOrder,
    HudiTable,
    InvalidOptionError,
    QueryType,
    TableType,
    WriteOperation,
)
from hudi_core.config import read_options as R
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from tests import datagen
from tests.tables import create_trips_table


def test_members_are_the_strings_apache_hudi_writes():
    assert WriteOperation.UPSERT == "UPSERT"  # a commit's operationType
    assert TableType.MERGE_ON_READ == "MERGE_ON_READ"  # hoodie.table.type
    assert QueryType.READ_OPTIMIZED == "read_optimized"  # hoodie.datasource.query.type
    assert CompactionOrder.LIFO == "LIFO"


@pytest.mark.parametrize("spelling", ["upsert", "UPSERT", " Upsert "])
def test_strings_in_any_case_parse_to_members(spelling):
    assert WriteOperation.parse(spelling) is WriteOperation.UPSERT
    assert Options({W.OPERATION.key: spelling}).get_option(W.OPERATION) is WriteOperation.UPSERT


def test_an_unknown_choice_names_the_argument_and_the_choices():
    with pytest.raises(InvalidOptionError, match="write operation 'merge' is not one of UPSERT"):
        WriteOperation.parse("merge", "write operation")
    with pytest.raises(InvalidOptionError, match="hoodie.datasource.query.type='fast'"):
        Options({R.QUERY_TYPE.key: "fast"}).get_option(R.QUERY_TYPE)


def test_the_api_takes_members_and_strings_alike(tmp_path):
    path, table = create_trips_table(tmp_path, TableType.MERGE_ON_READ)
    assert table.table_type is TableType.MERGE_ON_READ
    first = table.write(datagen.trips(list(range(8)), seed=1, ts=1), WriteOperation.INSERT)
    table.write(datagen.trips([1, 2], seed=2, ts=2), "upsert")
    snapshot = table.read(query_type=QueryType.SNAPSHOT)
    assert snapshot.equals(table.read(query_type="SNAPSHOT"))
    read_optimized = table.read(query_type="read_optimized")
    assert set(read_optimized.column("_hoodie_commit_time").to_pylist()) == {first}
    assert table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    assert table.compaction.run(order=CompactionOrder.LIFO) is not None
    with pytest.raises(InvalidOptionError, match="query type 'fast'"):
        table.read(query_type="fast")
    with pytest.raises(InvalidOptionError, match="table type 'merge' is not one of"):
        HudiTable.create(str(tmp_path / "other"), "t", table_type="merge", record_key_fields=["k"])
