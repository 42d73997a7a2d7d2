"""The extraMetadata a commit takes from its options, as Apache Hudi's Spark writer does
(`hoodie.datasource.write.commitmeta.key.prefix`): every option whose key starts with the
prefix, key and value as given. Pipelines record who made a commit this way (an Airflow
DAG run, a checkpoint of their own) without a field of the commit format for it.

Unlike Apache Hudi, an empty prefix copies nothing: it would copy every option, credentials
included, into a file every reader of the table can read.
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_core.config import write_options as W
from hudi_core.config.option import Options


def commit_extra_metadata(options: Mapping[str, str]) -> dict[str, str]:
    """The options the commit metadata prefix selects, sorted by key."""
    prefix = Options(options).get_option(W.COMMIT_METADATA_KEY_PREFIX)
    if not prefix:
        return {}
    return {key: str(options[key]) for key in sorted(options) if key.startswith(prefix)}
