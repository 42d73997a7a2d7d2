"""Ingest new source files into a Hudi table, as Apache Hudi's streamer does for a DFS source.

    spark-submit spark_jobs/ingest.py --base-path /data/trips --table-name trips \\
        --source-path /landing/trips --source-format json --op upsert \\
        --table-type MERGE_ON_READ --record-key-field uuid \\
        --partition-path-field city --precombine-field ts

Each run reads the files modified since the checkpoint in the table's last commit
(`deltastreamer.checkpoint.key` in its extraMetadata, as Apache Hudi records it), writes them
with `--op`, and records the new checkpoint in that commit; a run with no new files writes
nothing. The table is created (from --table-type and the field flags) if absent.
`--continuous` repeats, a round at most every --min-sync-interval-seconds.
A backfill takes the files modified in [--modified-since, --modified-until) instead (ISO dates
or times); it moves the checkpoint only when it covered everything after it, and never with
--keep-checkpoint (a native Airflow backfill run: its commit records no checkpoint, so the
table's stays the newest one recorded before, for us and for Apache Hudi's streamer alike).

HoodieStreamer's flag names work too: --target-base-path, --target-table, --source-ordering-field
(= --precombine-field), --checkpoint (resume from it instead of the table's) and --filter-dupes
(insert: drop the records whose key the table holds).

Several sources writing one table (a multi-stream wide table: each source its own group of
columns of the same rows) each run with `--source-id NAME` (or, as Apache Hudi's multi-writer
streamer takes it, `--hoodie-conf hoodie.deltastreamer.multiwriter.source.checkpoint.id=NAME`).
A source's commits record its checkpoint as Apache Hudi's multi-writer checkpoints do: a JSON
object from source id to checkpoint under `deltastreamer.checkpoint.key`
(`{"orders": "1767225600000"}`), and a source resumes from the newest completed commit whose
object holds its id: another source's commits never move it (looked up on the archived
timeline too when the active one has none, so a source that runs rarely keeps its place).
Without a source id the checkpoint stays the plain value and a run resumes from the newest
plain one, as before. `--source-columns a,b` narrows each batch to the record key and
partition fields and those columns (the source's group; a drop lacking one fails).

`--source-format hudi --source-path UPSTREAM` ingests another Hudi table's commits, as Apache
Hudi's HoodieIncrSource does (spark_jobs/sources.py): the checkpoint is the upstream's instant
time; a round takes the upstream's completed commits after it (at most
`hoodie.streamer.source.hoodieincr.num_instants`; default all), reads them incrementally (from
the snapshot when the range begins before the upstream's active timeline) with the upstream's
`_hoodie_*` columns dropped, and records the last one's time. With no new upstream commit a
round writes nothing. An upsert downstream of an incremental read does not carry the
upstream's deletes: a deleted record is simply absent from the rows read (as with
HoodieIncrSource). `--transformer-sql "SELECT ... FROM <SRC>"` (Apache Hudi's
SqlQueryBasedTransformer, or `hoodie.streamer.transformer.sql`) rewrites each round's rows,
whatever the source: `<SRC>` stands for them.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hudi_core import HudiTable, TableType, WriteOperation
from hudi_core.config import write_options as W
from hudi_core.errors import InvalidOptionError, TableNotFoundError
from spark_jobs import cli
from spark_jobs.sources import (
    HUDI,
    NUM_INSTANTS,
    SOURCE_FORMATS,
    ArrowFiles,
    IncrSettings,
    Window,
    new_commits,
    new_files,
    read_commits,
    read_files,
    upstream_table,
)

if TYPE_CHECKING:  # pyspark is imported once the arguments are checked
    from pyspark.sql import DataFrame, SparkSession

JOB = "ingest"
CHECKPOINT_KEY = "deltastreamer.checkpoint.key"
# Apache Hudi's name for the id of one of several streamers writing a table (HoodieDeltaStreamer
# configs); --source-id sets it too.
SOURCE_ID_OPTION = "hoodie.deltastreamer.multiwriter.source.checkpoint.id"
# Apache Hudi's SqlQueryBasedTransformer: its query, and what in it stands for the source rows.
TRANSFORMER_SQL_OPTION = "hoodie.streamer.transformer.sql"
SRC = "<SRC>"
_DELTASTREAMER_SQL_OPTION = "hoodie.deltastreamer.transformer.sql"  # its older name


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _arguments(argv)
    exists = _check(args)
    options = cli.hoodie_options(args)
    if args.filter_dupes:
        options[W.INSERT_DROP_DUPLICATES.key] = "true"
    spark = cli.spark_session(JOB, args.spark_master)
    if args.source_format == HUDI:
        import spark_jobs

        spark_jobs.register(spark)  # the upstream is read through the hudi data source
    table = _table(spark, args, options, exists)
    rounds, outcome, checkpoint = 0, None, args.checkpoint
    while True:
        started = time.monotonic()
        outcome = ingest_once(spark, table, args, checkpoint)
        checkpoint = None  # --checkpoint resumes the first round; later ones follow the table
        rounds += 1
        if not args.continuous or (args.max_rounds and rounds >= args.max_rounds):
            break
        time.sleep(max(0.0, args.min_sync_interval_seconds - (time.monotonic() - started)))
    outcome["counts"]["rounds"] = rounds
    return outcome


def ingest_once(spark, table: HudiTable, args, checkpoint: str | None = None) -> dict[str, Any]:
    """One round: what the source holds after `checkpoint` (else the table's), transformed,
    written as one commit with the new checkpoint."""
    from spark_jobs.writer import SparkWriter

    source_id = getattr(args, "source_id", None)
    source = {"source": source_id} if source_id else {}
    checkpoint = checkpoint or last_checkpoint(table, source_id)
    batch = _batch(spark, table, args, checkpoint)
    if batch.rows is None:  # its `checkpoint`: the one it resumed after
        return cli.result(
            JOB, args.base_path, None, **batch.counts, checkpoint=checkpoint, **source
        )
    read = _read_counts(args, batch, checkpoint)
    keep = getattr(args, "keep_checkpoint", False)
    extra = {} if keep else {CHECKPOINT_KEY: checkpoint_value(batch.checkpoint, source_id)}
    with transformed(spark, batch.rows, getattr(args, "transformer_sql", None)) as rows:
        columns = getattr(args, "source_columns", None)
        if columns:
            rows = narrowed(spark, rows, table, columns, batch.described(args.source_path))
        instant_time = SparkWriter(spark, table).write(
            rows, args.op, extra_metadata=extra, input_bytes=batch.input_bytes
        )
    if instant_time is None:
        return cli.result(JOB, args.base_path, None, **batch.counts, **read, **source)
    commit = table.inspect.commit(instant_time)
    return cli.result(
        JOB,
        args.base_path,
        commit.instant,
        **batch.counts,
        **read,
        checkpoint=batch.checkpoint,
        **source,
        operation=commit.operation_type,
        rows_written=commit.totals.rows_written,
        inserts=commit.totals.rows_inserted,
        updates=commit.totals.rows_updated,
        deletes=commit.totals.rows_deleted,
        file_groups=len({(f.partition, f.file_id) for p in commit.partitions for f in p.files}),
    )


def _read_counts(args, batch: _Batch, since: str | None) -> dict[str, Any]:
    """What a round read, for its result line: from where, after which checkpoint (or in
    which backfill window), how many bytes."""
    window = {
        "modified_since": getattr(args, "modified_since", None),
        "modified_until": getattr(args, "modified_until", None),
    }
    return {
        "source_path": args.source_path,
        "since_checkpoint": since,
        "bytes_read": batch.input_bytes or 0,
        **{key: value for key, value in window.items() if value},
    }


@dataclass(frozen=True)
class _Batch:
    """What one round read: its rows (None: nothing new), the checkpoint after them, and how
    much it took (`files` of a file source, `commits` of a Hudi one)."""

    rows: DataFrame | ArrowFiles | None
    checkpoint: str | None
    counts: dict[str, int]
    input_bytes: int | None = None  # the source's bytes, when known

    def described(self, source_path: str) -> str:
        """The batch, as an error names it."""
        if "commits" in self.counts:
            return f"the {self.counts['commits']} commit(s) read from {source_path}"
        return f"the drop of {self.counts['files']} file(s) from {source_path}"


def _batch(spark, table: HudiTable, args, checkpoint: str | None) -> _Batch:
    if args.source_format == HUDI:
        commits = new_commits(args.source_path, checkpoint, table.options)
        if commits.end is None:
            return _Batch(None, checkpoint, {"commits": 0})
        rows = read_commits(spark, args.source_path, commits, table.options)
        return _Batch(rows, commits.end, {"commits": commits.count}, commits.bytes_written)
    drop = new_files(
        args.source_path,
        args.source_format,
        checkpoint,
        args.source_limit,
        _window(args),
        table.options,
    )
    if not drop.files:
        return _Batch(None, checkpoint, {"files": 0})
    rows = read_files(spark, drop.files, args.source_format, table.options)
    size = sum(f.size for f in drop.files)
    return _Batch(rows, drop.checkpoint, {"files": len(drop.files)}, size)


@contextmanager
def transformed(
    spark: SparkSession, rows: DataFrame | ArrowFiles, sql: str | None
) -> Iterator[DataFrame | ArrowFiles]:
    """The rows as `sql` transforms them (Apache Hudi's SqlQueryBasedTransformer: `<SRC>`
    names a temporary view of them, one of this round's own, dropped once written); the rows
    themselves without `sql`."""
    if not sql:
        yield rows
        return
    df = rows.to_dataframe(spark) if isinstance(rows, ArrowFiles) else rows
    view = f"HOODIE_SRC_TMP_TABLE_{uuid.uuid4().hex}"
    df.createOrReplaceTempView(view)
    try:
        yield spark.sql(sql.replace(SRC, view))
    finally:
        spark.catalog.dropTempView(view)


def last_checkpoint(table: HudiTable, source_id: str | None = None) -> str | None:
    """The checkpoint to resume after: the newest commit's that recorded one. With a
    `source_id`, the newest commit's whose checkpoint object holds that source (the active
    timeline's, else the archived one's); without, the newest plain checkpoint's."""
    inspector = table.inspect
    timelines = [inspector.timeline]
    if source_id is not None:
        timelines.append(inspector.archived_timeline)  # read only if the active one has none
    for timeline in timelines:
        for instant in reversed(timeline()):
            if not (instant.is_write and instant.is_completed):
                continue
            recorded = inspector.commit(instant.timestamp).extra_metadata.get(CHECKPOINT_KEY)
            found = _checkpoint_of(recorded, source_id) if recorded else None
            if found:
                return found
    return None


def checkpoint_value(checkpoint: str | None, source_id: str | None = None) -> str | None:
    """What a commit records under CHECKPOINT_KEY: the checkpoint itself, or for one of
    several sources a JSON object from its id to it (Apache Hudi's multi-writer form)."""
    if source_id is None or checkpoint is None:
        return checkpoint
    return json.dumps({source_id: checkpoint})


def _checkpoint_of(recorded: str, source_id: str | None) -> str | None:
    """The checkpoint a recorded value holds for `source_id` (None: a plain checkpoint)."""
    try:
        value = json.loads(recorded) if recorded.lstrip().startswith("{") else None
    except ValueError:
        value = None
    if not isinstance(value, dict):  # a plain checkpoint: no source's
        return recorded if source_id is None else None
    found = value.get(source_id) if source_id is not None else None
    return str(found) if found not in (None, "") else None


def narrowed(
    spark: SparkSession,
    rows: DataFrame | ArrowFiles,
    table: HudiTable,
    columns: list[str],
    batch: str,
) -> DataFrame:
    """The batch narrowed to the record key and partition fields and `columns` (one source's
    group), as a DataFrame; an InvalidOptionError naming what the batch (`batch`: what was
    read from where) lacks."""
    df = rows.to_dataframe(spark) if isinstance(rows, ArrowFiles) else rows
    wanted = list(dict.fromkeys([*table.config.record_key_fields, *table.config.partition_fields]))
    wanted += [name for name in columns if name not in wanted]
    missing = [name for name in wanted if name not in df.columns]
    if missing:
        raise InvalidOptionError(
            f"{batch} has no column "
            f"{', '.join(repr(m) for m in missing)} (of --source-columns {','.join(columns)} "
            f"and the record key and partition fields); its columns: {', '.join(df.columns)}"
        )
    return df.select(*wanted)


def _check(args) -> bool:
    """The arguments, and the table or what creating it needs, checked before Spark starts;
    whether the table exists."""
    args.source_id = _source_id(args)
    args.source_columns = _fields(args.source_columns) or None
    args.transformer_sql = _transformer_sql(args)
    if args.filter_dupes and args.op is not WriteOperation.INSERT:
        raise InvalidOptionError(f"--filter-dupes applies to --op insert, not {args.op}")
    unit = "an instant time of the upstream table" if args.source_format == HUDI else "epoch millis"
    if args.checkpoint is not None and not args.checkpoint.isdigit():
        raise InvalidOptionError(
            f"--checkpoint {args.checkpoint!r} is not a checkpoint of this source ({unit})"
        )
    if _window(args) is None and args.keep_checkpoint and args.source_format != HUDI:
        raise InvalidOptionError(
            "--keep-checkpoint is for backfills: give --modified-since or --modified-until"
        )
    if args.source_format == HUDI:
        _check_upstream(args)
    try:
        cli.check_table(args)
    except TableNotFoundError:
        cli.check_new_table(args, "--table-name", "--record-key-field")
        return False
    return True


def _check_upstream(args) -> None:
    """A Hudi source: an upstream table other than this one, and the options reading it."""
    for flag, value in (
        ("--modified-since", args.modified_since),
        ("--modified-until", args.modified_until),
        ("--source-limit", args.source_limit),
        ("--keep-checkpoint", args.keep_checkpoint or None),
    ):
        if value is not None:
            raise InvalidOptionError(
                f"{flag} applies to file sources, not --source-format hudi (cap the upstream "
                f"commits a round takes with {NUM_INSTANTS})"
            )
    if args.source_path.rstrip("/") == args.base_path.rstrip("/"):
        raise InvalidOptionError(
            f"--source-path {args.source_path} is the table itself: a table cannot ingest "
            "its own commits"
        )
    options = cli.hoodie_options(args)
    IncrSettings.of(options)
    try:
        upstream_table(args.source_path, options)
    except TableNotFoundError as exc:
        raise InvalidOptionError(f"--source-format hudi: {exc}") from exc


def _transformer_sql(args) -> str | None:
    """--transformer-sql, or Apache Hudi's option for it; both only if they agree. A query
    must read `<SRC>`, the round's rows."""
    options = cli.hoodie_options(args)
    given = options.get(TRANSFORMER_SQL_OPTION, options.get(_DELTASTREAMER_SQL_OPTION))
    flag = args.transformer_sql.strip() if args.transformer_sql else None
    option = given.strip() if given else None
    if flag and option and flag != option:
        raise InvalidOptionError(
            f"--transformer-sql and {TRANSFORMER_SQL_OPTION} give different queries; keep one"
        )
    sql = flag or option
    if sql and SRC not in sql:
        raise InvalidOptionError(
            f"the transformer SQL does not read {SRC}, the source's rows "
            f'("SELECT ... FROM {SRC}"): {sql!r}'
        )
    return sql


def _source_id(args) -> str | None:
    """--source-id, or Apache Hudi's option for it; both only if they agree."""
    given = cli.hoodie_options(args).get(SOURCE_ID_OPTION)
    flag = args.source_id.strip() if args.source_id is not None else None
    option = given.strip() if given is not None else None
    if flag == "" or option == "":
        raise InvalidOptionError(f"--source-id ({SOURCE_ID_OPTION}) must not be empty")
    if flag and option and flag != option:
        raise InvalidOptionError(
            f"--source-id {flag} and {SOURCE_ID_OPTION}={option} name different sources"
        )
    return flag or option


def _table(spark, args, options: dict[str, str], exists: bool) -> HudiTable:
    from spark_jobs.engine import SparkEngine

    if exists:
        table = cli.open_table(spark, args, options)
        # A table whose first ingest failed (no commit) takes the flags' definition anew.
        committed = any(i.is_write and i.is_completed for i in table.inspect.timeline())
        if committed or not args.record_key_field:
            return table
    return HudiTable.create(
        args.base_path,
        args.table_name,
        table_type=args.table_type,
        record_key_fields=_fields(args.record_key_field),
        partition_fields=_fields(args.partition_path_field),
        precombine_field=args.precombine_field,
        options=options,
        engine=SparkEngine(spark),
    )


def _window(args) -> Window | None:
    if args.modified_since is None and args.modified_until is None:
        return None
    since = _epoch_ms(args.modified_since, "--modified-since") if args.modified_since else 0
    until = _epoch_ms(args.modified_until, "--modified-until") if args.modified_until else 2**63
    if since >= until:
        raise InvalidOptionError(
            f"--modified-since {args.modified_since} is not before --modified-until "
            f"{args.modified_until}"
        )
    return Window(since, until)


def _epoch_ms(text: str, flag: str) -> int:
    """An ISO date or time (UTC unless it says otherwise) as epoch milliseconds."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidOptionError(
            f"{flag} {text!r} is not an ISO date or time (2026-11-01)"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _fields(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _arguments(argv: Sequence[str] | None):
    parser = cli.parser(JOB, __doc__.strip().splitlines()[0])
    parser.add_argument(
        "--source-path",
        required=True,
        help="directory the files land in, or the base path of the upstream Hudi table",
    )
    parser.add_argument(
        "--source-format",
        required=True,
        choices=SOURCE_FORMATS,
        help="the landed files' format, or hudi: the upstream table's commits",
    )
    parser.add_argument(
        "--source-limit", type=int, help="bytes of files one round reads at most (else all)"
    )
    parser.add_argument(
        "--op",
        default=WriteOperation.UPSERT,
        choices=list(WriteOperation),
        type=WriteOperation,
        help="the write operation",
    )
    parser.add_argument(
        "--table-type",
        default=TableType.COPY_ON_WRITE,
        choices=list(TableType),
        type=TableType,
        help="of a table created by this run",
    )
    parser.add_argument(
        "--record-key-field", help="record key field(s), comma-separated (creating a table)"
    )
    parser.add_argument(
        "--partition-path-field",
        help="partition field(s), comma-separated (creating a table; none: non-partitioned)",
    )
    parser.add_argument(
        "--precombine-field",
        "--source-ordering-field",
        dest="precombine_field",
        help="ordering field of duplicate keys (creating a table)",
    )
    parser.add_argument(
        "--checkpoint",
        help="resume after this checkpoint instead of the table's (epoch millis; for a hudi "
        "source an upstream instant time)",
    )
    parser.add_argument(
        "--transformer-sql",
        help=f"rewrite each round's rows with this query, {SRC} standing for them "
        f"(Apache Hudi's SqlQueryBasedTransformer, {TRANSFORMER_SQL_OPTION})",
    )
    parser.add_argument(
        "--source-id",
        help="one of several sources of the table: its checkpoint is its own "
        f"(Apache Hudi's {SOURCE_ID_OPTION})",
    )
    parser.add_argument(
        "--source-columns",
        help="keep only these columns (comma-separated) beside the record key and partition "
        "fields: the source's group of a multi-stream table",
    )
    parser.add_argument(
        "--filter-dupes",
        action="store_true",
        help="--op insert: drop the records whose key the table holds "
        "(hoodie.datasource.write.insert.drop.duplicates)",
    )
    parser.add_argument("--modified-since", help="backfill: files modified at or after (ISO)")
    parser.add_argument("--modified-until", help="backfill: files modified before (ISO)")
    parser.add_argument(
        "--keep-checkpoint",
        action="store_true",
        help="backfill: record no checkpoint, whatever the window covered (needs a window)",
    )
    parser.add_argument("--continuous", action="store_true", help="keep ingesting in rounds")
    parser.add_argument(
        "--min-sync-interval-seconds",
        type=float,
        default=0.0,
        help="continuous mode: at least this long between the starts of two rounds",
    )
    parser.add_argument(
        "--max-rounds", type=int, default=0, help="continuous mode: stop after N rounds"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
