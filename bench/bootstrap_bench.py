"""Bootstrap figures, each against a reference measured in the same run, on a hive-style
parquet dataset (`city=<name>/part-<n>.parquet`, the files without the partition column):

  1. METADATA_ONLY bootstrap / a listing of the source with every file's footer read
     (target <= 3: the bootstrap reads only the key column and writes skeleton files);
     also against pyarrow reading the key columns and writing five string columns per file,
     the least work a skeleton needs
  2. FULL_RECORD bootstrap / bulk_insert of the same rows into a new table (read by pyarrow
     beforehand)
  3. a query of data columns only on the metadata-only table / pyarrow reading the source

Usage: python bench/bootstrap_bench.py [--rows N] [--files F] [--repeat R]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import best_of, trips  # noqa: E402

from hudi_core import HudiTable  # noqa: E402

FULL_RECORD = "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector"
OPTIONS = {"hoodie.parquet.compression.codec": "snappy"}
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key"]


def write_source(folder: Path, rows: int, files: int) -> Path:
    data = trips(rows, seed=1)
    source = folder / "source"
    cities = sorted(set(data.column("city").to_pylist()))
    per_city = max(1, files // len(cities))
    for city in cities:
        part = data.filter(pc.equal(data.column("city"), city)).drop_columns(["city"])
        step = -(-part.num_rows // per_city)
        (source / f"city={city}").mkdir(parents=True)
        for i in range(per_city):
            piece = part.slice(i * step, step)
            pq.write_table(piece, source / f"city={city}" / f"part-{i:05d}.parquet")
    return source


def source_files(source: Path) -> list[str]:
    selector = pafs.FileSelector(str(source), recursive=True)
    infos = pafs.LocalFileSystem().get_file_info(selector)
    return [i.path for i in infos if i.type == pafs.FileType.File and i.path.endswith(".parquet")]


def bootstrap(source: Path, target: Path, options: dict) -> HudiTable:
    shutil.rmtree(target, ignore_errors=True)
    return HudiTable.bootstrap(
        str(target),
        str(source),
        name="trips",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options={**OPTIONS, **options},
    )


def metadata_only(work: Path, source: Path, repeat: int) -> Path:
    target = work / "metadata_only"
    ours = best_of(repeat, lambda: None, lambda: bootstrap(source, target, {}))
    files = source_files(source)

    def footers() -> None:
        for path in source_files(source):
            pq.read_metadata(path)

    def key_columns() -> None:
        for path in source_files(source):
            pq.read_table(path, columns=["uuid"])

    def minimal_skeletons() -> None:
        for k, path in enumerate(files):
            keys = pq.read_table(path, columns=["uuid"]).column(0)
            n = len(keys)
            skeleton = pa.table(
                {
                    "_hoodie_commit_time": pa.repeat(pa.scalar("00000000000001"), n),
                    "_hoodie_commit_seqno": keys,
                    "_hoodie_record_key": keys,
                    "_hoodie_partition_path": pa.repeat(pa.scalar("city=x"), n),
                    "_hoodie_file_name": pa.repeat(pa.scalar(f"f{k}.parquet"), n),
                }
            )
            pq.write_table(skeleton, work / f"skeleton-{k}.parquet", compression="snappy")

    listing = best_of(repeat, lambda: None, footers)
    keys = best_of(repeat, lambda: None, key_columns)
    least = best_of(repeat, lambda: None, minimal_skeletons)
    print(f"listing + footers:          {listing:7.3f} s   ({len(files)} files)")
    print(f"listing + key columns:      {keys:7.3f} s")
    print(f"pyarrow keys -> skeletons:  {least:7.3f} s")
    print(
        f"METADATA_ONLY bootstrap:    {ours:7.3f} s   ratio {ours / listing:.1f} over the "
        f"listing with footers (target <= 3), {ours / keys:.1f} over reading the keys, "
        f"{ours / least:.2f} over the pyarrow skeletons"
    )
    return target


def full_record(work: Path, source: Path, repeat: int) -> None:
    target = work / "full_record"
    ours = best_of(
        repeat,
        lambda: None,
        lambda: bootstrap(source, target, {"hoodie.bootstrap.mode.selector": FULL_RECORD}),
    )
    plain = work / "bulk_insert"

    def bulk_insert() -> None:
        shutil.rmtree(plain, ignore_errors=True)
        table = HudiTable.create(
            str(plain),
            "trips",
            record_key_fields=["uuid"],
            partition_fields=["city"],
            precombine_field="ts",
            options={**OPTIONS, "hoodie.datasource.write.hive_style_partitioning": "true"},
        )
        table.write(rows, operation="bulk_insert")

    rows = ds.dataset(str(source), format="parquet", partitioning="hive").to_table()
    reference = best_of(repeat, lambda: None, bulk_insert)
    print(f"bulk_insert:                {reference:7.3f} s   ({rows.num_rows:,} rows)")
    print(f"FULL_RECORD bootstrap:      {ours:7.3f} s   ratio {ours / reference:.2f}")


def data_query(source: Path, table_path: Path, repeat: int) -> None:
    table = HudiTable.open(str(table_path))
    columns = ["uuid", "fare", "city"]
    holder: dict = {}

    def ours() -> None:
        holder["rows"], holder["stats"] = table.read_with_statistics(columns=columns)

    def pyarrow_read() -> None:
        ds.dataset(str(source), format="parquet", partitioning="hive").to_table(columns=columns)

    mine = best_of(repeat, lambda: None, ours)
    reference = best_of(repeat, lambda: None, pyarrow_read)
    stats = holder["stats"]
    print(f"pyarrow read of the source: {reference:7.3f} s")
    print(
        f"data-column query:          {mine:7.3f} s   ratio {mine / reference:.2f} "
        f"({stats.source_files_read} source files, {stats.skeleton_files_read} skeletons read)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hudi-bootstrap-bench-"))
    try:
        source = write_source(work, args.rows, args.files)
        table_path = metadata_only(work, source, args.repeat)
        data_query(source, table_path, args.repeat)
        full_record(work, source, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    pa.set_cpu_count(pa.cpu_count())
    main()
