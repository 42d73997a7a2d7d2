"""The table's schema at an instant: what its newest completed write recorded.

Each write records its schema in the commit metadata (`extraMetadata.schema`), so schema
evolution is visible there first; the create schema in hoodie.properties is the fallback
for a table without commits.
"""

from __future__ import annotations

import pyarrow as pa

from hudi_core.config.table_config import TableConfig
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.schema.to_arrow import table_schema_from_commit
from hudi_core.timeline import ActiveTimeline


def committed_schema(timeline: ActiveTimeline, as_of: str | None = None) -> pa.Schema | None:
    """The data schema of the newest completed write (as of `as_of`) that records one."""
    for instant in reversed(timeline.completed_writes()):
        if as_of is not None and instant.timestamp > as_of:
            continue
        schema = CommitMetadata.from_json_bytes(timeline.read_bytes(instant)).schema
        if schema:
            return table_schema_from_commit(schema)
    return None


def latest_table_schema(
    timeline: ActiveTimeline, config: TableConfig, as_of: str | None = None
) -> pa.Schema | None:
    """Data schema (no meta columns) as of `as_of` (default: now); None for a new table."""
    committed = committed_schema(timeline, as_of)
    if committed is not None:
        return committed
    if config.create_schema:
        return table_schema_from_commit(config.create_schema)
    return None


def with_concurrent_columns(
    data_schema: pa.Schema, started_from: ActiveTimeline, current: ActiveTimeline
) -> pa.Schema:
    """The write's schema with the columns writes completed since it started added (nullable,
    at the end): it must not drop them from the table schema (streams of a multi-stream table
    each add their own)."""
    now = committed_schema(current)
    if now is None:
        return data_schema
    before = committed_schema(started_from)
    known = set(data_schema.names) | set(before.names if before is not None else ())
    added = [f.with_nullable(True) for f in now if f.name not in known]
    return (
        pa.schema([*data_schema, *added], metadata=data_schema.metadata) if added else data_schema
    )
