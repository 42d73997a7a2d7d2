"""The independent oracle: Apache Hudi's own reader (the `hudi` package, hudi-rs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder


def _read(path: str, options: HudiReadOptions, hudi_options: dict[str, str] | None) -> pa.Table:
    builder = HudiTableBuilder.from_base_uri(str(path))
    if hudi_options:
        builder = builder.with_hudi_options(hudi_options)
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
) -> pa.Table:
    options = HudiReadOptions(filters=list(filters) if filters else None)
    if as_of:
        options = options.with_as_of_timestamp(as_of)
    return _read(path, options, hudi_options)


def incremental(path: str, begin: str, end: str) -> pa.Table:
    options = (
        HudiReadOptions()
        .with_query_type(HudiQueryType.Incremental)
        .with_start_timestamp(begin)
        .with_end_timestamp(end)
    )
    return _read(path, options, None)


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
