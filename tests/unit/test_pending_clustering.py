"""Writes beside a clustering plan another engine scheduled (Apache Hudi's default update
strategy): updates and deletes of the file groups it rewrites are refused and rolled back,
inserts never top those file groups up, and everything else writes as usual."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_core.errors import InvalidOptionError, WriteConflictError
from hudi_core.model.file_names import BaseFileName
from tests import datagen, oracle
from tests.tables import create_trips_table, data_files, request_clustering

SF, CH = "san_francisco", "chennai"
ROOMY = {"hoodie.parquet.small.file.limit": str(100 << 20)}  # every file is small


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("operation", ["upsert", "delete"])
def test_changes_to_file_groups_under_clustering_are_refused(tmp_path, table_type, operation):
    path, table = create_trips_table(tmp_path, table_type, ROOMY)
    table.write(datagen.trips(list(range(8)), seed=1, ts=1, cities=[SF, CH]))
    request_clustering(path, SF)
    rows, files = table.read(), data_files(path)
    timeline = [i for i in table.timeline() if i.action != "rollback"]

    with pytest.raises(WriteConflictError, match="pending clustering rewrites .*san_francisco/"):
        table.write(datagen.trips([0], seed=2, ts=2, cities=[SF]), operation)
    assert data_files(path) == files and table.read() == rows
    assert [i for i in table.timeline() if i.action != "rollback"] == timeline

    # The other partition's file group is free to change.
    table.write(datagen.trips([1], seed=3, ts=3, cities=[CH]), operation)
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


def test_inserts_do_not_top_up_file_groups_under_clustering(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE", ROOMY)
    table.write(datagen.trips(list(range(4)), seed=1, ts=1, cities=[SF]))
    clustered = {f for f in data_files(path)}
    request_clustering(path, SF)
    instant = table.write(datagen.trips([100, 101], seed=2, ts=2, cities=[SF]))
    new_files = data_files(path) - clustered
    assert len(new_files) == 1 and instant in next(iter(new_files))
    (new_file,) = new_files
    groups = {BaseFileName.parse(Path(f).name).file_id for f in data_files(path)}
    assert len(groups) == 2  # a new file group, not a new version of the clustered one
    assert table.read().num_rows == 6
    assert new_file.startswith(SF)


def test_an_unsupported_index_type_is_refused_before_any_instant(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    table.write(datagen.trips([1], seed=1, ts=1))
    timeline = table.timeline()
    for index_type in ("RECORD_INDEX", "HBASE", "INMEMORY"):
        with pytest.raises(InvalidOptionError, match=f"hoodie.index.type='{index_type}'"):
            table.write(datagen.trips([2], seed=2, ts=2), options={"hoodie.index.type": index_type})
    assert table.timeline() == timeline
