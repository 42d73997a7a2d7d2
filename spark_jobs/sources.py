"""Sources of ingestion: files that appear in a directory, read once each, or the commits of
an upstream Hudi table.

As Apache Hudi's streamer reads a DFS source, the checkpoint is the modification time of the
newest file taken; the next run takes files modified after it. All files modified at one
instant are taken together, so a checkpoint never splits them.

As its HoodieIncrSource reads a Hudi table, the checkpoint is the upstream's instant time: a
round takes the completed commits after it (at most
hoodie.streamer.source.hoodieincr.num_instants of them; default: all) and reads them with an
incremental query of (checkpoint, end]. Without a checkpoint,
hoodie.streamer.source.hoodieincr.missing.checkpoint.strategy says what: READ_UPTO_LATEST_COMMIT
(the default here) reads everything up to `end`, READ_LATEST the latest commit alone. A range
beginning before the upstream's active timeline (no checkpoint, or one whose commits were
archived since) is read, as HoodieIncrSource reads it, from the snapshot: its rows whose commit
time is in (checkpoint, end] (a row updated after `end` waits for the round that reads its
update). A round never reads past a write still pending upstream (Apache Hudi's hollow-commit
handling BLOCK, as the streaming source: hudi_core's CommitStream): that write may yet complete
with an earlier instant time than `end`, and a checkpoint beyond it would skip it for good.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import fastavro
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_core import HudiTable
from hudi_core.config import read_options as R
from hudi_core.distributed import COMMIT_TIME_FIELD, PARTITION_PATH_FIELD, CommitStream
from hudi_core.errors import InvalidOptionError
from hudi_core.filesystems import filesystem_for
from hudi_core.schema import META_FIELDS, OPERATION_FIELD, avro_to_arrow

if TYPE_CHECKING:  # the ingest job checks its arguments with this module before Spark starts
    from pyspark.sql import DataFrame, SparkSession

FORMATS = ("json", "csv", "parquet", "avro")  # of source files
HUDI = "hudi"  # the source is a Hudi table: its commits after the checkpoint
SOURCE_FORMATS = (*FORMATS, HUDI)
_EXTENSIONS = {"json": (".json", ".jsonl"), "csv": (".csv",), "parquet": (".parquet",)}
_EXTENSIONS["avro"] = (".avro",)


@dataclass(frozen=True)
class SourceFile:
    path: str  # as the file system names it
    modified_ms: int
    size: int


@dataclass(frozen=True)
class Drop:
    """The files one ingestion run takes, and the checkpoint after them."""

    files: list[SourceFile]
    checkpoint: str | None


@dataclass(frozen=True)
class Window:
    """A backfill's files: modified in [since_ms, until_ms), whatever the checkpoint says."""

    since_ms: int
    until_ms: int


def new_files(
    source_path: str,
    source_format: str,
    checkpoint: str | None,
    limit_bytes: int | None = None,
    window: Window | None = None,
    options: Mapping[str, str] | None = None,
) -> Drop:
    """Files of the format modified after `checkpoint` (or within `window`), oldest first, up
    to `limit_bytes` (whole modification times at a time; at least one). `options` reach an
    object store (fs.s3a.endpoint, ...)."""
    if source_format not in FORMATS:
        raise InvalidOptionError(
            f"--source-format {source_format} is not one of {', '.join(FORMATS)}"
        )
    filesystem, root = filesystem_for(source_path, options)
    # A landing folder not made yet (a scheduled run before the first drop) holds no files.
    selector = pafs.FileSelector(root, recursive=True, allow_not_found=True)
    after = int(checkpoint) if checkpoint else -1
    since, until = (after + 1, 2**63) if window is None else (window.since_ms, window.until_ms)
    found = sorted(
        (
            SourceFile(_uri_of(source_path, root, info.path), info.mtime_ns // 1_000_000, info.size)
            for info in filesystem.get_file_info(selector)
            if info.type == pafs.FileType.File
            and info.base_name.endswith(_EXTENSIONS[source_format])
            and not info.base_name.startswith((".", "_"))
            and since <= info.mtime_ns // 1_000_000 < until
        ),
        key=lambda f: (f.modified_ms, f.path),
    )
    taken = _within_limit(found, limit_bytes)
    newest = taken[-1].modified_ms if taken else None
    # A backfill moves the checkpoint only if it took every file from the checkpoint on, so
    # no later run skips a file the window left out.
    if newest is None or newest <= after or since > after + 1:
        return Drop(taken, checkpoint)
    return Drop(taken, str(newest))


def _within_limit(files: list[SourceFile], limit_bytes: int | None) -> list[SourceFile]:
    if not limit_bytes:
        return files
    taken, total = [], 0
    for file in files:
        if taken and total + file.size > limit_bytes and file.modified_ms != taken[-1].modified_ms:
            break
        taken.append(file)
        total += file.size
    return taken


class ArrowFiles:
    """Source files Python reads itself on the executors (pyarrow for parquet, fastavro for
    Avro), a file per task: the writer prepares their rows where they are read, so they
    never cross from the JVM to Python row by row."""

    def __init__(
        self,
        paths: list[str],
        source_format: str,
        options: Mapping[str, str] | None = None,
        size: int | None = None,
    ) -> None:
        self.paths = paths
        self.source_format = source_format
        self.options = dict(options or {})  # to reach an object store from the executors
        self.size = size  # the files' bytes, when the listing said
        if source_format == "avro":
            # The first file's schema (Spark has no Avro reader without the spark-avro jar).
            with _open(paths[0], self.options) as handle:
                self.schema = avro_to_arrow(fastavro.reader(handle).writer_schema)
        else:
            with _open(paths[0], self.options) as handle:
                self.schema = pq.read_schema(handle)

    def names(self, spark: SparkSession) -> DataFrame:
        """The file paths, spread over the executors."""
        names = spark.createDataFrame([(p,) for p in self.paths], "path string")
        return names.repartition(min(len(self.paths), spark.sparkContext.defaultParallelism))

    def tables(self, names: Iterator[pa.RecordBatch]) -> Iterator[pa.Table]:
        """The rows of each file named in `names` (batches of paths)."""
        for batch in names:
            for path in batch.column(0).to_pylist():
                yield self._read(path)

    def read_all(self) -> pa.Table:
        """Every file's rows, read here (the driver, for a small input)."""
        return pa.concat_tables([self._read(path) for path in self.paths])

    def to_dataframe(self, spark: SparkSession) -> DataFrame:
        from pyspark.sql.pandas.types import from_arrow_schema

        spark_schema = from_arrow_schema(self.schema, prefer_timestamp_ntz=False)
        return self.names(spark).mapInArrow(self._batches, spark_schema)

    def _batches(self, names: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for table in self.tables(names):
            yield from table.to_batches()

    def _read(self, path: str) -> pa.Table:
        with _open(path, self.options) as handle:
            if self.source_format == "parquet":
                return pq.read_table(handle).cast(self.schema)
            records = list(fastavro.reader(handle))
        return pa.Table.from_pylist(records, schema=self.schema)


def read_files(
    spark: SparkSession,
    files: list[SourceFile],
    source_format: str,
    options: Mapping[str, str] | None = None,
) -> DataFrame | ArrowFiles:
    """The rows of `files`: parquet and Avro files for Python to read on the executors, JSON
    and CSV as a DataFrame of Spark's readers (schemas inferred; CSV files have a header)."""
    paths = [f.path for f in files]
    if source_format in ("parquet", "avro"):
        return ArrowFiles(paths, source_format, options, sum(f.size for f in files))
    if source_format == "json":
        return spark.read.json(paths)
    return spark.read.csv(paths, header=True, inferSchema=True)


def _open(path: str, options: Mapping[str, str]) -> pa.NativeFile:
    filesystem, located = filesystem_for(path, options)
    return filesystem.open_input_file(located)


def _uri_of(source_path: str, root: str, file_path: str) -> str:
    """A listed file as Spark (and fastavro, through pyarrow) can open it."""
    if "://" in source_path:
        scheme = source_path.split("://", 1)[0]
        return f"{scheme}://{file_path}"
    return file_path


# ---- an upstream Hudi table (Apache Hudi's HoodieIncrSource)

# HoodieIncrSource's options; the older hoodie.deltastreamer.* names are read too.
NUM_INSTANTS = "hoodie.streamer.source.hoodieincr.num_instants"
MISSING_CHECKPOINT_STRATEGY = "hoodie.streamer.source.hoodieincr.missing.checkpoint.strategy"
DROP_ALL_META_FIELDS = "hoodie.streamer.source.hoodieincr.drop.all.meta.fields"
READ_LATEST, READ_UPTO_LATEST_COMMIT = "READ_LATEST", "READ_UPTO_LATEST_COMMIT"
BEGINNING = "000"  # Apache Hudi's begin instant of a read from the start
# What the upstream's read takes of the job's options: how to read it and reach its storage,
# not the downstream table's write options (payload class, key fields, ...).
READ_OPTION_PREFIXES = ("hoodie.datasource.read.", "hoodie.datasource.merge.", "hoodie.memory.")
STORAGE_PREFIX = "fs."


@dataclass(frozen=True)
class IncrSettings:
    """The HoodieIncrSource options of a job, checked."""

    num_instants: int | None  # upstream commits per round at most; None: all
    missing_checkpoint: str  # READ_UPTO_LATEST_COMMIT or READ_LATEST
    drop_all_meta_fields: bool

    @classmethod
    def of(cls, options: Mapping[str, str]) -> IncrSettings:
        count = _incr_option(options, NUM_INSTANTS)
        if count is not None and not (count.strip().isdigit() and int(count) > 0):
            raise InvalidOptionError(f"{NUM_INSTANTS} must be a whole number > 0, not {count!r}")
        strategy = _incr_option(options, MISSING_CHECKPOINT_STRATEGY) or READ_UPTO_LATEST_COMMIT
        strategy = strategy.strip().upper()
        if strategy not in (READ_UPTO_LATEST_COMMIT, READ_LATEST):
            raise InvalidOptionError(
                f"{MISSING_CHECKPOINT_STRATEGY} must be {READ_UPTO_LATEST_COMMIT} or "
                f"{READ_LATEST}, not {strategy!r}"
            )
        drop = (_incr_option(options, DROP_ALL_META_FIELDS) or "true").strip().lower()
        if drop not in ("true", "false"):
            raise InvalidOptionError(f"{DROP_ALL_META_FIELDS} must be true or false, not {drop!r}")
        return cls(int(count) if count else None, strategy, drop == "true")


@dataclass(frozen=True)
class Commits:
    """The upstream commits one round takes: those in (begin, end] (end None: none), read
    incrementally or, `snapshot`, as the snapshot's rows committed in that range.
    `bytes_written` by them sizes the round's input (a small one is written on the driver,
    see hoodie.spark.local.threshold.bytes: Spark has no size estimate of the read)."""

    begin: str
    end: str | None
    count: int
    snapshot: bool = False
    bytes_written: int = 0


def read_options(options: Mapping[str, str]) -> dict[str, str]:
    """The job's options an upstream table is opened and read with."""
    prefixes = (*READ_OPTION_PREFIXES, STORAGE_PREFIX)
    return {key: value for key, value in options.items() if key.startswith(prefixes)}


def upstream_table(source_path: str, options: Mapping[str, str]) -> HudiTable:
    """The upstream table (a TableNotFoundError if there is none), checked readable by
    commit time."""
    table = HudiTable.open(source_path, read_options(options))
    if not table.config.populate_meta_fields:
        raise InvalidOptionError(
            f"the upstream table at {source_path} does not populate meta fields "
            "(hoodie.populate.meta.fields=false): its commits cannot be read incrementally"
        )
    return table


def new_commits(
    source_path: str, checkpoint: str | None, options: Mapping[str, str] | None = None
) -> Commits:
    """The upstream commits after `checkpoint` one round takes (see the module doc); an
    IncrementalHistoryError when files they wrote were cleaned since (unless
    hoodie.datasource.read.incr.fallback.fulltablescan.enable lets the read scan the table)."""
    options = options or {}
    settings = IncrSettings.of(options)
    table = upstream_table(source_path, options)
    capped = {R.STREAMING_MAX_INSTANTS.key: str(settings.num_instants or 0)}
    stream = CommitStream(
        table.storage, table.config, table.engine, {**read_options(options), **capped}
    )
    writes = stream.readable_commits(limited=False)
    read_latest = settings.missing_checkpoint == READ_LATEST
    begin = checkpoint or BEGINNING
    if checkpoint is None and read_latest and writes:
        begin = str(int(writes[-1]) - 1)  # Apache Hudi's: just before the latest
    taken = stream.readable_commits(begin)
    if not taken:
        return Commits(begin, None, 0)
    # As HoodieIncrSource: a range from before the active timeline is read from the snapshot.
    snapshot = not read_latest and begin < writes[0]
    if not snapshot:
        stream.plan(begin, taken[-1])  # fails here, naming the cleaned files, if need be
    size = sum(table.inspect.commit(instant).totals.bytes_written for instant in taken)
    return Commits(begin, taken[-1], len(taken), snapshot, size)


def read_commits(
    spark: SparkSession, source_path: str, commits: Commits, options: Mapping[str, str]
) -> DataFrame:
    """The rows of `commits`, as HoodieIncrSource reads them: an incremental query of (begin,
    end] through spark_jobs.read (hoodie.datasource.read.* options reach it, such as
    ...incr.fallback.fulltablescan.enable for files cleaned since), or the snapshot's rows
    committed in that range; without the meta columns (all, or all but
    _hoodie_partition_path when DROP_ALL_META_FIELDS is false). The session must have been
    `spark_jobs.register`-ed."""
    from pyspark.sql import functions as F

    import spark_jobs

    read = read_options(options)
    if commits.snapshot:
        rows = spark_jobs.read(spark, source_path, {**read, R.QUERY_TYPE.key: "snapshot"})
        committed = F.col(COMMIT_TIME_FIELD)
        rows = rows.where((committed > commits.begin) & (committed <= commits.end))
    else:
        incremental = {
            **read,
            R.QUERY_TYPE.key: "incremental",
            R.BEGIN_INSTANT.key: commits.begin,
            R.END_INSTANT.key: commits.end,
        }
        rows = spark_jobs.read(spark, source_path, incremental)
    kept = () if IncrSettings.of(options).drop_all_meta_fields else (PARTITION_PATH_FIELD,)
    return rows.drop(*[name for name in (*META_FIELDS, OPERATION_FIELD) if name not in kept])


def _incr_option(options: Mapping[str, str], name: str) -> str | None:
    """An option by its hoodie.streamer.* name, else its older hoodie.deltastreamer.* one."""
    older = name.replace("hoodie.streamer.", "hoodie.deltastreamer.", 1)
    return options.get(name, options.get(older))
