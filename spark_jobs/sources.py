"""Source drops for ingestion: files that appear in a directory, read once each.

As Apache Hudi's streamer reads a DFS source, the checkpoint is the modification time of the
newest file taken; the next run takes files modified after it. All files modified at one
instant are taken together, so a checkpoint never splits them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import fastavro
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_core.errors import InvalidOptionError
from hudi_core.filesystems import filesystem_for
from hudi_core.schema import avro_to_arrow

if TYPE_CHECKING:  # the ingest job checks its arguments with this module before Spark starts
    from pyspark.sql import DataFrame, SparkSession

FORMATS = ("json", "csv", "parquet", "avro")
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
    selector = pafs.FileSelector(root, recursive=True, allow_not_found=False)
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
