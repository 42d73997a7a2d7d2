"""`spark_jobs.write(df, path, ...)`: a Spark DataFrame into a Hudi table, with save modes.

The explicit write of a DataFrame; it replaces `df.write.format("hudi")...save(path)`, which
would need a shuffle the Python data source API cannot ask for. Modes and table creation are
those of Apache Hudi's Spark datasource; the data moves through the SparkWriter. Apache Hudi's
`bootstrap` operation runs HudiTable.bootstrap on the executors instead (see `write`).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame

from hudi_core import HudiTable, WriteOperation
from hudi_core.config import Options, check_options, table_options, write_options
from hudi_core.config import bootstrap_options as B
from hudi_core.errors import InvalidOptionError, TableExistsError, TableNotFoundError
from hudi_core.storage import Storage
from spark_jobs.datasource import session_fs_options
from spark_jobs.writer import SparkWriter

MODES = ("append", "overwrite", "error", "errorifexists", "ignore")
BOOTSTRAP = "bootstrap"  # Apache Hudi's operation of the Spark writer (BOOTSTRAP_OPERATION_OPT_VAL)


def write(
    df: DataFrame,
    path: str,
    operation: WriteOperation | str | None = None,
    options: Mapping[str, Any] | None = None,
    mode: str = "append",
) -> str | None:
    """Writes `df` into the Hudi table at `path`; returns the instant time (None: nothing
    written). What replaces `df.write.format("hudi").options(**o).mode(m).save(path)`:

        spark_jobs.write(df, path, options=o, mode=m)

    - `operation`: upsert, insert, bulk_insert, delete, insert_overwrite, ...; None takes
      hoodie.datasource.write.operation from `options` (upsert by default). `bootstrap`
      makes the table of the parquet dataset at hoodie.bootstrap.base.path instead, as
      Apache Hudi's writer does (the DataFrame's rows are not used: pass an empty one).
    - `options`: Apache Hudi's hoodie.* write options (booleans become "true"/"false");
      `.partitionBy(c)` is hoodie.datasource.write.partitionpath.field.
    - `mode`, as Apache Hudi's Spark datasource: "append" writes into the table, creating
      it when there is none; "overwrite" deletes an existing table first and creates it anew;
      "error"/"errorifexists" raise TableExistsError when a table exists; "ignore" leaves an
      existing table alone (returns None).

    A new table takes its name, record key, partition and precombine fields and table type
    from hoodie.table.name, hoodie.datasource.write.recordkey.field, ...partitionpath.field,
    ...precombine.field and ...table.type. HudiErrors raised on executors (a null record key,
    say) are raised here as themselves.
    """
    check_options(options)
    given = {key: option_value(value) for key, value in (options or {}).items()}
    given = {**session_fs_options(df.sparkSession), **given}
    mode = mode.lower()
    if mode not in MODES:
        raise InvalidOptionError(f"save mode '{mode}' is not one of {', '.join(MODES)}")
    source = _bootstrap_source(operation, given)  # checked before any mode deletes a table
    table = existing_table(path, given)
    if table is not None and mode in ("error", "errorifexists"):
        raise TableExistsError(f"a Hudi table exists at {path}; write with mode='append' to it")
    if table is not None and mode == "ignore":
        return None
    if table is not None and mode == "overwrite":
        _delete_table(path, given)
        table = None
    if source is not None:
        return _bootstrap(df, path, source, given, exists=table is not None)
    table = table or create_table(path, given)
    chosen = operation or Options(given).get_option(write_options.OPERATION)
    return SparkWriter(df.sparkSession, table).write(df, chosen.lower(), given)


def _bootstrap_source(
    operation: WriteOperation | str | None, options: Mapping[str, str]
) -> str | None:
    """For Apache Hudi's `bootstrap` operation (no WriteOperation: it writes no rows of its
    own), the dataset to bootstrap (hoodie.bootstrap.base.path, required); else None."""
    chosen = operation if operation is not None else options.get(write_options.OPERATION.key)
    if str(chosen or "").strip().lower() != BOOTSTRAP:
        return None
    source = options.get(table_options.BOOTSTRAP_BASE_PATH.key, "").strip()
    if not source:
        raise InvalidOptionError(
            f"operation {BOOTSTRAP} needs {table_options.BOOTSTRAP_BASE_PATH.key}: the parquet "
            "dataset to make the table of"
        )
    return source


def _bootstrap(df: DataFrame, path: str, source: str, options: dict[str, str], exists: bool) -> str:
    """operation=bootstrap, as Apache Hudi's Spark writer runs it: the dataset at `source`
    becomes the table at `path` (created from the usual write options, or an existing one
    without commits); the DataFrame's rows are not written (Apache Hudi's users pass an empty
    one). Returns the newest instant committed (00000000000001 metadata only,
    00000000000002 full record)."""
    from spark_jobs.engine import SparkEngine

    # The operation is not a write operation of the table's, and the source goes as the
    # bootstrap's argument (the table records it as a URI): its writes see neither option.
    passed_on = (write_options.OPERATION.key, table_options.BOOTSTRAP_BASE_PATH.key)
    bootstrap_options = {key: value for key, value in options.items() if key not in passed_on}
    if not exists:
        check_creatable(bootstrap_options)
    opts = Options(bootstrap_options)
    parallelism = opts.get_option(B.PARALLELISM)
    table = HudiTable.bootstrap(
        path,
        source,
        bootstrap_options.get(table_options.TABLE_NAME.key, ""),
        table_type=opts.get_option(write_options.TABLE_TYPE),
        record_key_fields=_fields(opts.get_option(write_options.RECORD_KEY_FIELD)),
        partition_fields=_fields(opts.get_option(write_options.PARTITION_PATH_FIELD)),
        precombine_field=opts.get_option(write_options.PRECOMBINE_FIELD),
        options=bootstrap_options,
        engine=SparkEngine(df.sparkSession, max_slices=max(1, parallelism)),
    )
    done = [i for i in table.inspect.timeline() if i.is_write and i.is_completed]
    return done[-1].timestamp


def existing_table(path: str, options: dict[str, str]) -> HudiTable | None:
    try:
        return HudiTable.open(path, options)
    except TableNotFoundError:
        return None


def check_creatable(options: dict[str, str]) -> None:
    if not options.get(table_options.TABLE_NAME.key) or not Options(options).get_option(
        write_options.RECORD_KEY_FIELD
    ):
        raise InvalidOptionError(
            f"creating a table needs {table_options.TABLE_NAME.key} and "
            f"{write_options.RECORD_KEY_FIELD.key}"
        )


def create_table(path: str, options: dict[str, str]) -> HudiTable:
    opts = Options(options)
    check_creatable(options)
    name = options[table_options.TABLE_NAME.key]
    record_keys = opts.get_option(write_options.RECORD_KEY_FIELD)
    return HudiTable.create(
        path,
        name=name,
        table_type=opts.get_option(write_options.TABLE_TYPE),
        record_key_fields=_fields(record_keys),
        partition_fields=_fields(opts.get_option(write_options.PARTITION_PATH_FIELD)),
        precombine_field=opts.get_option(write_options.PRECOMBINE_FIELD),
        options=options,
    )


def _fields(value: str | list[str] | None) -> list[str]:
    if not value:
        return []
    if isinstance(value, list):
        return value
    return [part.strip() for part in value.split(",") if part.strip()]


def option_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _delete_table(path: str, options: dict[str, str]) -> None:
    """Overwrite mode: the table goes, as Apache Hudi's Spark writer deletes it."""
    storage = Storage(path, options=options)
    if storage.is_local:
        shutil.rmtree(storage.base_path)
    else:
        storage.fs.delete_dir(storage.base_path)
