"""What a commit records in its extraMetadata besides its write stats.

The options the commit metadata prefix selects, as Apache Hudi's Spark writer copies them
(`hoodie.datasource.write.commitmeta.key.prefix`): every option whose key starts with the
prefix, key and value as given. Pipelines record who made a commit this way (an Airflow
DAG run, a checkpoint of their own) without a field of the commit format for it.

Unlike Apache Hudi, an empty prefix copies nothing: it would copy every option, credentials
included, into a file every reader of the table can read.

The schema of a commit on a table that has none yet. Readers take a table's schema from its
newest commit (`extraMetadata.schema`); a delete or delete_partition on a table no rows were
ever written to has no schema to record, and Apache Hudi's readers then fail (hudi-rs: "no
write status in commit metadata"). Such a commit records a placeholder: the columns the
table's record key and partition fields name, nullable strings, each with PLACEHOLDER_DOC as
its doc. Readers read an empty table with those columns; writers take a placeholder for no
schema at all (the first rows define the columns as a first write's do), and so does a later
commit of no rows, which records the placeholder again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import pyarrow as pa

from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.schema.to_arrow import AVRO_DOC_KEY
from hudi_core.timeline import ActiveTimeline

PLACEHOLDER_DOC = "no rows written yet: a key column of the deletes before the first write"
_MARK = {AVRO_DOC_KEY: PLACEHOLDER_DOC.encode()}


def commit_extra_metadata(options: Mapping[str, str]) -> dict[str, str]:
    """The options the commit metadata prefix selects, sorted by key."""
    prefix = Options(options).get_option(W.COMMIT_METADATA_KEY_PREFIX)
    if not prefix:
        return {}
    return {key: str(options[key]) for key in sorted(options) if key.startswith(prefix)}


def placeholder_schema(key_fields: Iterable[str]) -> pa.Schema:
    """The schema a commit records when the table has none: the record key and partition
    fields as nullable strings (nested fields left out: they name no column of their own)."""
    names = dict.fromkeys(name for name in key_fields if name and "." not in name)
    return pa.schema([pa.field(name, pa.string(), nullable=True, metadata=_MARK) for name in names])


def latest_schema_is_placeholder(timeline: ActiveTimeline) -> bool:
    """Whether the newest schema the timeline's completed writes record is a placeholder
    (see placeholder_schema): the table has no columns yet."""
    for instant in reversed(timeline.completed_writes()):
        schema = CommitMetadata.from_json_bytes(timeline.read_bytes(instant)).schema
        if schema:
            return _is_placeholder(schema)
    return False


def _is_placeholder(schema: str) -> bool:
    try:
        fields = json.loads(schema).get("fields")
    except (ValueError, AttributeError):
        return False  # not ours: whoever reads it as a schema says what is wrong
    return isinstance(fields, list) and all(
        isinstance(field, dict) and field.get("doc") == PLACEHOLDER_DOC for field in fields
    )
