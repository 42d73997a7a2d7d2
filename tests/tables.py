"""Test tables: the trips table every service test starts from, and what lies in it."""

from __future__ import annotations

from pathlib import Path

from hudi_core import HudiTable


def create_trips_table(
    folder: Path, table_type: str, options: dict | None = None
) -> tuple[str, HudiTable]:
    """A table of datagen.trips at `folder`/trips: keyed by uuid, partitioned by city,
    ts as the precombine field."""
    path = str(folder / "trips")
    table = HudiTable.create(
        path,
        "trips",
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options=options,
    )
    return path, table


def data_files(path: str) -> set[str]:
    """Relative paths of every base and log file of the table at `path`."""
    root = Path(path)
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file()
        and ".hoodie" not in p.relative_to(root).parts
        and not p.name.startswith(".hoodie_partition_metadata")
    }
