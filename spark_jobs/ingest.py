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
or times); it moves the checkpoint only when it covered everything after it.

HoodieStreamer's flag names work too: --target-base-path, --target-table, --source-ordering-field
(= --precombine-field), --checkpoint (resume from it instead of the table's) and --filter-dupes
(insert: drop the records whose key the table holds).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from hudi_core import HudiTable, TableType, WriteOperation
from hudi_core.config import write_options as W
from hudi_core.errors import InvalidOptionError, TableNotFoundError
from spark_jobs import cli
from spark_jobs.sources import FORMATS, Window, new_files, read_files

JOB = "ingest"
CHECKPOINT_KEY = "deltastreamer.checkpoint.key"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _arguments(argv)
    exists = _check(args)
    options = cli.hoodie_options(args)
    if args.filter_dupes:
        options[W.INSERT_DROP_DUPLICATES.key] = "true"
    spark = cli.spark_session(JOB, args.spark_master)
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
    """One round: the new files (after `checkpoint`, else the table's), written as one commit
    with the new checkpoint."""
    from spark_jobs.writer import SparkWriter

    checkpoint = checkpoint or last_checkpoint(table)
    drop = new_files(
        args.source_path,
        args.source_format,
        checkpoint,
        args.source_limit,
        _window(args),
        table.options,
    )
    if not drop.files:
        return cli.result(JOB, args.base_path, None, files=0, checkpoint=checkpoint)
    rows = read_files(spark, drop.files, args.source_format, table.options)
    extra = {CHECKPOINT_KEY: drop.checkpoint}
    instant_time = SparkWriter(spark, table).write(rows, args.op, extra_metadata=extra)
    if instant_time is None:
        return cli.result(JOB, args.base_path, None, files=len(drop.files))
    commit = table.inspect.commit(instant_time)
    return cli.result(
        JOB,
        args.base_path,
        commit.instant,
        files=len(drop.files),
        checkpoint=drop.checkpoint,
        rows_written=commit.totals.rows_written,
        inserts=commit.totals.rows_inserted,
        updates=commit.totals.rows_updated,
        deletes=commit.totals.rows_deleted,
        file_groups=len({(f.partition, f.file_id) for p in commit.partitions for f in p.files}),
    )


def last_checkpoint(table: HudiTable) -> str | None:
    """The checkpoint the newest commit that recorded one holds."""
    inspector = table.inspect
    for instant in reversed(inspector.timeline()):
        if not (instant.is_write and instant.is_completed):
            continue
        extra = inspector.commit(instant.timestamp).extra_metadata
        if extra.get(CHECKPOINT_KEY):
            return extra[CHECKPOINT_KEY]
    return None


def _check(args) -> bool:
    """The arguments, and the table or what creating it needs, checked before Spark starts;
    whether the table exists."""
    if args.filter_dupes and args.op is not WriteOperation.INSERT:
        raise InvalidOptionError(f"--filter-dupes applies to --op insert, not {args.op}")
    if args.checkpoint is not None and not args.checkpoint.isdigit():
        raise InvalidOptionError(
            f"--checkpoint {args.checkpoint!r} is not a checkpoint of this source (epoch millis)"
        )
    _window(args)
    try:
        cli.check_table(args)
    except TableNotFoundError:
        cli.check_new_table(args, "--table-name", "--record-key-field")
        return False
    return True


def _table(spark, args, options: dict[str, str], exists: bool) -> HudiTable:
    from spark_jobs.engine import SparkEngine

    if exists:
        return cli.open_table(spark, args, options)
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
    parser.add_argument("--source-path", required=True, help="directory the files land in")
    parser.add_argument(
        "--source-format", required=True, choices=FORMATS, help="the landed files' format"
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
        "--checkpoint", help="resume after this checkpoint instead of the table's (epoch millis)"
    )
    parser.add_argument(
        "--filter-dupes",
        action="store_true",
        help="--op insert: drop the records whose key the table holds "
        "(hoodie.datasource.write.insert.drop.duplicates)",
    )
    parser.add_argument("--modified-since", help="backfill: files modified at or after (ISO)")
    parser.add_argument("--modified-until", help="backfill: files modified before (ISO)")
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
