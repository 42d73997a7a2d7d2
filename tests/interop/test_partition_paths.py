"""Partition paths with awkward values: url-encoding, nulls, and what hudi-rs makes of them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from tests import oracle

CITIES = ["rio/de:janeiro", "100% sp", None, "sf"]


@pytest.mark.parametrize("hive_style", [True, False])
def test_url_encoded_and_null_partition_values_read_like_hudi_rs(tmp_path, hive_style):
    table = HudiTable.create(
        str(tmp_path / "t"),
        name="t",
        record_key_fields=["id"],
        partition_fields=["city"],
        options={
            "hoodie.datasource.write.partitionpath.urlencode": "true",
            "hoodie.datasource.write.hive_style_partitioning": str(hive_style).lower(),
        },
    )
    batch = pa.table(
        {"id": list(range(8)), "city": CITIES * 2, "fare": [float(i) for i in range(8)]}
    )
    table.write(batch, operation="bulk_insert")
    table.write(pa.table({"id": [2, 9], "city": [None, "sf"], "fare": [20.0, 90.0]}))

    folders = {p.name for p in Path(table.storage.base_path).iterdir() if p.name != ".hoodie"}
    prefix = "city=" if hive_style else ""
    assert folders == {
        f"{prefix}rio%2Fde%3Ajaneiro",
        f"{prefix}100%25 sp",
        f"{prefix}__HIVE_DEFAULT_PARTITION__",
        f"{prefix}sf",
    }
    ours = table.read()
    assert ours.num_rows == 9
    oracle.assert_same_table(ours, oracle.snapshot(table.storage.base_path))
    for value in ("rio/de:janeiro", "100% sp", "sf"):
        filters = [("city", "=", value)]
        oracle.assert_same_table(
            table.read(filters=filters),
            oracle.snapshot(table.storage.base_path, filters=filters),
            value,
        )
