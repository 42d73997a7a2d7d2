"""What Airflow learns of the Hudi provider without importing it: its hooks, operators,
sensors, triggers, the `hudi` connection type with its form, and the UI plugin. Airflow
reads this through the `apache_airflow_provider` entry point in pyproject.toml; the package
name must be the distribution's. Kept free of imports: every `airflow` command reads it.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

DISTRIBUTION = "hudi-airflow"
INTEGRATION = "Apache Hudi"
CONN_TYPE = "hudi"
HOOK_CLASS = "hudi_airflow.hooks.HudiTableHook"
PLUGIN_CLASS = "hudi_airflow.plugin.HudiPlugin"

# The `hudi` connection form. The host is the table's base path; these fields land in the
# connection's extra JSON, where HudiTableHook reads them (see EXTRA_OPTIONS there).
CONNECTION_FIELDS: dict[str, dict[str, Any]] = {
    "options": {
        "label": "Hoodie options",
        "description": "hoodie.* options of the table, a JSON object such as "
        '{"hoodie.cleaner.commits.retained": "10"}.',
        "schema": {"type": ["object", "null"]},
    },
    "lock_provider": {
        "label": "Lock provider",
        "description": "hoodie.write.lock.provider: file_system, storage (conditional writes "
        "on object stores), database, in_process, or the dotted path of a "
        "hudi_core.lock.LockProvider class. Empty: database when HUDI_LOCK_DB_URL is set, else "
        "the lock that follows the table's storage (file_system locally and on HDFS, storage "
        "on object stores).",
        "schema": {"type": ["string", "null"]},
    },
    "lock_database_url": {
        "label": "Lock database URL",
        "description": "The database lock's SQLAlchemy URL (default: the HUDI_LOCK_DB_URL "
        "environment variable). Airflow's metadata database is never used: Airflow 3 tasks "
        "may not reach it.",
        "schema": {"type": ["string", "null"], "format": "password"},
    },
}
UI_FIELD_BEHAVIOUR: dict[str, Any] = {
    "hidden-fields": ["schema", "login", "password", "port"],
    "relabeling": {"host": "Base path"},
    "placeholders": {"host": "s3://bucket/lake/trips or /data/lake/trips"},
}


def get_provider_info() -> dict[str, Any]:
    return {
        "package-name": DISTRIBUTION,
        "name": INTEGRATION,
        "description": "Apache Hudi tables written and maintained by Spark jobs from Airflow: "
        "ingestion, compaction, cleaning, archival and Hive sync operators, sensors on the "
        "timeline, and a timeline view in the UI.",
        "versions": [version(DISTRIBUTION)],
        "integrations": [
            {
                "integration-name": INTEGRATION,
                "external-doc-url": "https://hudi.apache.org/",
                "tags": ["apache"],
            }
        ],
        "hooks": _modules("hudi_airflow.hooks"),
        "operators": _modules("hudi_airflow.operators"),
        "sensors": _modules("hudi_airflow.sensors"),
        "triggers": _modules("hudi_airflow.triggers"),
        "connection-types": [
            {
                "connection-type": CONN_TYPE,
                "hook-class-name": HOOK_CLASS,
                "hook-name": "Apache Hudi table",
                "conn-fields": CONNECTION_FIELDS,
                "ui-field-behaviour": UI_FIELD_BEHAVIOUR,
            }
        ],
        "plugins": [{"name": "hudi", "plugin-class": PLUGIN_CLASS}],
    }


def _modules(*names: str) -> list[dict[str, Any]]:
    return [{"integration-name": INTEGRATION, "python-modules": list(names)}]
