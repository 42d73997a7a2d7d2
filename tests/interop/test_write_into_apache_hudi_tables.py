"""Writing into tables Apache Hudi wrote: upserts and deletes land, and hudi-rs agrees."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core import HudiTable
from tests import oracle

TABLES = [
    "v6_nonpartitioned",
    "v6_simplekeygen_nonhivestyle",
    "v6_simplekeygen_hivestyle_no_metafields",
    "v6_simplekeygen_nonhivestyle_overwritetable",
]


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("index_type", ["SIMPLE", "BLOOM"])
def test_upsert_and_delete_into_a_table_apache_hudi_wrote(hudi_fixture, tmp_path, name, index_type):
    path = str(tmp_path / name)
    shutil.copytree(hudi_fixture("cow", name), path)
    table = HudiTable.open(path, options={"hoodie.index.type": index_type})
    before = table.read()
    data_columns = [c for c in before.column_names if not c.startswith("_hoodie_")]
    rows = before.select(data_columns)
    key = table.config.record_key_fields[0]

    changed = rows.slice(0, 1)
    changed = changed.set_column(
        changed.schema.get_field_index("name"), "name", pa.array(["renamed"], pa.string())
    )
    table.write(changed, operation="upsert")
    doomed = rows.slice(rows.num_rows - 1, 1)
    table.write(doomed, operation="delete")

    after = table.read()
    assert after.num_rows == before.num_rows - 1
    assert doomed[key][0].as_py() not in after[key].to_pylist()
    if rows.num_rows > 1:  # else the one row was renamed, then deleted
        renamed = after.filter(pc.equal(after[key], changed[key][0]))
        assert renamed["name"].to_pylist() == ["renamed"]
    oracle.assert_same_table(after, oracle.snapshot(path), name)
