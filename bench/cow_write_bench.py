"""Copy-on-write write speed against plain parquet and against delta-rs, on one 2M-row table
(11 columns: strings, doubles, random 16-character keys; 8 hive-style partitions).

Every system is measured twice: at its own defaults (what a user gets without tuning: pyarrow
and delta-rs write snappy, hudi_core zstd), and at one codec for all (--codec, zstd by
default), so that the codec's share is visible. Prints (lower is better for us):
  bulk_insert / delta-rs write_deltalake, both at defaults     target <= 1.25x (stretch 1.0x)
  bulk_insert / pyarrow dataset write, same codec              target <= 1.5x
  insert / delta-rs write_deltalake, both at defaults           reported
  upsert of 10% rows / delta-rs MERGE, both at defaults         target <= 1.0x
Best of --repeat runs each, all in this process on the same Arrow data.
Usage: python bench/cow_write_bench.py [--rows N] [--repeat R] [--codec zstd|snappy|gzip]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from hudi_core import HudiTable

CITIES = np.array(
    ["san_francisco", "new_york", "sao_paulo", "chennai", "berlin", "tokyo", "lagos", "sydney"]
)


KEY_ALPHABET = np.frombuffer(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "u1"
)


def random_keys(rows: int, rng: np.random.Generator, width: int = 16) -> pa.Array:
    """`rows` random keys of `width` letters and digits (unique in practice: 62^16 values)."""
    letters = KEY_ALPHABET[rng.integers(0, len(KEY_ALPHABET), (rows, width))]
    return pa.array(np.ascontiguousarray(letters).view(f"S{width}").ravel()).cast(pa.string())


def trips(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(rows)
    return pa.table(
        {
            "uuid": random_keys(rows, rng),
            "city": pa.array(CITIES[ids % len(CITIES)]),
            "ts": pa.array(np.full(rows, 1, dtype=np.int64)),
            "rider": pc.binary_join_element_wise(
                "rider-", pc.cast(pa.array(rng.integers(0, 50_000, rows)), pa.string()), ""
            ),
            "driver": pc.binary_join_element_wise(
                "driver-", pc.cast(pa.array(rng.integers(0, 5_000, rows)), pa.string()), ""
            ),
            "begin_lat": pa.array(rng.random(rows)),
            "begin_lon": pa.array(rng.random(rows)),
            "end_lat": pa.array(rng.random(rows)),
            "end_lon": pa.array(rng.random(rows)),
            "fare": pa.array(rng.random(rows) * 100),
            "passengers": pa.array(rng.integers(1, 6, rows).astype(np.int32)),
        }
    )


def updates_of(table: pa.Table, fraction: float, seed: int) -> pa.Table:
    """A random `fraction` of rows, spread over every file group, with new fares and ts."""
    rng = np.random.default_rng(seed)
    picked = np.sort(rng.choice(table.num_rows, int(table.num_rows * fraction), replace=False))
    chosen = table.take(pa.array(picked))
    chosen = chosen.set_column(
        chosen.schema.get_field_index("ts"), "ts", pa.array(np.full(len(picked), 2, dtype=np.int64))
    )
    return chosen.set_column(
        chosen.schema.get_field_index("fare"), "fare", pa.array(rng.random(len(picked)) * 100)
    )


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def best_of(repeat: int, setup, fn) -> float:
    times = []
    for _ in range(repeat):
        setup()
        times.append(timed(fn))
    return min(times)


def deltalake_merge_seconds(
    work: Path, data: pa.Table, updates: pa.Table, codec: str | None, repeat: int
) -> float:
    """Best time of delta-rs's MERGE of `updates` (update matched, insert the rest) into a
    fresh Delta table of `data`, partitioned by city as the Hudi tables are."""
    from deltalake import DeltaTable, write_deltalake

    path = work / "delta"
    properties = delta_properties(codec)

    def setup() -> None:
        shutil.rmtree(path, ignore_errors=True)
        write_deltalake(str(path), data, partition_by=["city"], writer_properties=properties)

    def merge() -> None:
        (
            DeltaTable(str(path))
            .merge(
                updates,
                predicate="t.uuid = s.uuid",
                source_alias="s",
                target_alias="t",
                writer_properties=properties,
            )
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute()
        )

    return best_of(repeat, setup, merge)


def delta_properties(codec: str | None):
    """delta-rs writer properties: its defaults when codec is None."""
    from deltalake import WriterProperties

    return None if codec is None else WriterProperties(compression=codec.upper())


def line(label: str, seconds: float, reference: float | None = None, target: str = "") -> None:
    ratio = f"   ratio {seconds / reference:.2f}x" if reference else ""
    print(f"{label:<46} {seconds:7.2f} s{ratio}{f' ({target})' if target else ''}")


class Bench:
    """The table, a scratch folder and the best-of count every measurement shares."""

    def __init__(self, rows: int, repeat: int) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="hudi-bench-"))
        self.data = trips(rows, seed=1)
        self.updates = updates_of(self.data, 0.10, seed=2)
        self.repeat = repeat
        self.table: HudiTable | None = None

    def fresh(self, name: str) -> Path:
        path = self.work / name
        shutil.rmtree(path, ignore_errors=True)
        return path

    def pyarrow_write(self, codec: str | None) -> float:
        """pyarrow's dataset write, hive-partitioned by city (its default codec: snappy)."""
        options = (
            None if codec is None else ds.ParquetFileFormat().make_write_options(compression=codec)
        )
        return best_of(
            self.repeat,
            lambda: self.fresh("plain"),
            lambda: ds.write_dataset(
                self.data,
                self.work / "plain",
                format="parquet",
                partitioning=["city"],
                partitioning_flavor="hive",
                file_options=options,
                existing_data_behavior="overwrite_or_ignore",
            ),
        )

    def delta_write(self, codec: str | None) -> float:
        from deltalake import write_deltalake

        path = self.work / "delta"
        return best_of(
            self.repeat,
            lambda: self.fresh("delta"),
            lambda: write_deltalake(
                str(path),
                self.data,
                partition_by=["city"],
                writer_properties=delta_properties(codec),
            ),
        )

    def new_hudi_table(self, codec: str | None) -> HudiTable:
        options = {} if codec is None else {"hoodie.parquet.compression.codec": codec}
        return HudiTable.create(
            str(self.fresh("hudi")),
            name="trips",
            record_key_fields=["uuid"],
            partition_fields=["city"],
            precombine_field="ts",
            options=options,
        )

    def hudi_write(self, operation: str, codec: str | None) -> float:
        def setup() -> None:
            self.table = self.new_hudi_table(codec)

        return best_of(self.repeat, setup, lambda: self.hudi_table.write(self.data, operation))

    def hudi_upsert(self, codec: str | None) -> float:
        def setup() -> None:
            self.table = self.new_hudi_table(codec)
            self.table.write(self.data, operation="bulk_insert")

        seconds = best_of(
            self.repeat, setup, lambda: self.hudi_table.write(self.updates, operation="upsert")
        )
        check = self.hudi_table.read(columns=["uuid", "fare"])
        assert check.num_rows == self.data.num_rows, "upsert changed the row count"
        return seconds

    @property
    def hudi_table(self) -> HudiTable:
        assert self.table is not None
        return self.table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--codec", default="zstd", help="the codec of the equal-codec runs")
    args = parser.parse_args()
    bench = Bench(args.rows, args.repeat)
    print(
        f"rows={bench.data.num_rows:,} updates={bench.updates.num_rows:,} "
        f"arrow_size={bench.data.nbytes / 2**20:.0f} MiB, best of {args.repeat}"
    )
    try:
        print("-- each at its defaults")
        delta = bench.delta_write(None)
        line("delta-rs write_deltalake:", delta)
        line("pyarrow dataset write:", bench.pyarrow_write(None))
        line(
            "hudi bulk_insert / delta-rs:",
            bench.hudi_write("bulk_insert", None),
            delta,
            "target <= 1.25x, stretch 1.0x",
        )
        line("hudi insert / delta-rs:", bench.hudi_write("insert", None), delta)
        merge = deltalake_merge_seconds(bench.work, bench.data, bench.updates, None, args.repeat)
        line("delta-rs MERGE (10%):", merge)
        line(
            "hudi upsert (10%) / delta-rs MERGE:", bench.hudi_upsert(None), merge, "target <= 1.0x"
        )
        print(f"-- all at {args.codec}")
        plain = bench.pyarrow_write(args.codec)
        line("pyarrow dataset write:", plain)
        line("delta-rs write_deltalake / pyarrow:", bench.delta_write(args.codec), plain)
        line(
            "hudi bulk_insert / pyarrow:",
            bench.hudi_write("bulk_insert", args.codec),
            plain,
            "target <= 1.5x",
        )
    finally:
        shutil.rmtree(bench.work, ignore_errors=True)


if __name__ == "__main__":
    main()
