"""The independent oracle: Apache Hudi's own reader (the `hudi` package, hudi-rs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder


def _read(
    path: str,
    options: HudiReadOptions,
    hudi_options: dict[str, str] | None,
    storage_options: dict[str, str] | None = None,
) -> pa.Table:
    builder = HudiTableBuilder.from_base_uri(str(path))
    if hudi_options:
        builder = builder.with_hudi_options(hudi_options)
    if storage_options:
        builder = builder.with_storage_options(storage_options)
    table = builder.build()
    batches = table.read(options)
    if batches:
        return pa.Table.from_batches(batches)
    with_meta = _has_meta(table)
    return (table.get_schema_with_meta_fields() if with_meta else table.get_schema()).empty_table()


def _has_meta(table: Any) -> bool:
    return table.hudi_options().get("hoodie.populate.meta.fields", "true").lower() != "false"


def snapshot(
    path: str,
    as_of: str | None = None,
    filters: Sequence[tuple[str, str, str]] | None = None,
    hudi_options: dict[str, str] | None = None,
    storage_options: dict[str, str] | None = None,
) -> pa.Table:
    options = HudiReadOptions(filters=list(filters) if filters else None)
    if as_of:
        options = options.with_as_of_timestamp(as_of)
    return _read(path, options, hudi_options, storage_options)


def incremental(path: str, begin: str, end: str) -> pa.Table:
    options = (
        HudiReadOptions()
        .with_query_type(HudiQueryType.Incremental)
        .with_start_timestamp(begin)
        .with_end_timestamp(end)
    )
    return _read(path, options, None)


def incremental_base_instants(path: str, begin: str, end: str) -> dict[tuple[str, str], str]:
    """(partition path, file id) -> the instant of the base file hudi-rs reads in each file
    slice of its incremental read (begin, end] ("" for a slice without a base file)."""
    options = (
        HudiReadOptions()
        .with_query_type(HudiQueryType.Incremental)
        .with_start_timestamp(begin)
        .with_end_timestamp(end)
    )
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    return {
        (s.partition_path, s.file_id): s.creation_instant_time if s.base_file_name else ""
        for s in table.get_file_slices(options)
    }


def completed_commit_times(path: str) -> list[str]:
    timeline = HudiTableBuilder.from_base_uri(str(path)).build().get_timeline()
    instants = (
        timeline.get_completed_commits()
        + timeline.get_completed_deltacommits()
        + timeline.get_completed_replacecommits()
    )
    return sorted(i.timestamp for i in instants)


def sorted_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows in a canonical order, so two readers' outputs compare regardless of file order."""
    rows = table.to_pylist()
    return sorted(rows, key=lambda row: repr(sorted(row.items())))


def assert_same_table(ours: pa.Table, theirs: pa.Table, context: str = "") -> None:
    """Same column names and types, and the same rows in any order."""
    assert ours.schema.names == theirs.schema.names, f"{context}: columns differ"
    for mine, other in zip(ours.schema, theirs.schema, strict=True):
        assert mine.type == other.type, (
            f"{context}: column {mine.name}: {mine.type} != {other.type}"
        )
    assert ours.num_rows == theirs.num_rows, f"{context}: {ours.num_rows} != {theirs.num_rows} rows"
    assert sorted_rows(ours) == sorted_rows(theirs), f"{context}: rows differ"


def assert_time_travel_matches(table, path: str, instants: list[str], label: str) -> None:
    """hudi-rs sees the same completed commits, and time travel to each reads the same rows."""
    assert completed_commit_times(path) == instants
    for instant in instants:
        assert_same_table(
            table.read(as_of=instant), snapshot(path, as_of=instant), f"{label}@{instant}"
        )


def assert_incrementals_match(table, path: str, instants: list[str], label: str) -> None:
    """Incremental reads between consecutive commits (from the start) equal hudi-rs's."""
    starts = ["00000000000000000", *instants]
    for begin, end in zip(starts, instants, strict=False):
        ours = table.read(query_type="incremental", begin=begin, end=end)
        assert_same_table(ours, incremental(path, begin, end), f"{label} ({begin},{end}]")
