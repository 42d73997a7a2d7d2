"""Copy-on-write write speed against plain parquet and against deltalake, on one 2M-row table.

Prints two ratios (lower is better for us):
  bulk_insert / pyarrow.parquet.write_table   target: within 1.5x
  upsert of 10% rows / deltalake MERGE         target: no slower (<= 1.0x)

Both sides of each ratio run in this process on the same Arrow data and the same codec
(snappy by default, pyarrow's default; gzip is Apache Hudi's).
Usage: python bench/cow_write_bench.py [--rows N] [--repeat R] [--codec snappy|gzip|zstd]
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
import pyarrow.parquet as pq

from hudi_core import HudiTable

CITIES = np.array(
    ["san_francisco", "new_york", "sao_paulo", "chennai", "berlin", "tokyo", "lagos", "sydney"]
)


def trips(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(rows)
    return pa.table(
        {
            "uuid": pc.binary_join_element_wise("trip-", pc.cast(pa.array(ids), pa.string()), ""),
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
    work: Path, data: pa.Table, updates: pa.Table, codec: str, repeat: int
) -> float:
    """Best time of deltalake's MERGE of `updates` (update matched, insert the rest) into a
    fresh Delta table of `data`, partitioned by city as the Hudi tables are."""
    from deltalake import DeltaTable, WriterProperties, write_deltalake

    path = work / "delta"
    properties = WriterProperties(compression=codec.upper())

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--codec", default="snappy")
    args = parser.parse_args()
    codec = args.codec

    work = Path(tempfile.mkdtemp(prefix="hudi-bench-"))
    data = trips(args.rows, seed=1)
    updates = updates_of(data, 0.10, seed=2)
    options = {"hoodie.parquet.compression.codec": codec}
    print(
        f"rows={data.num_rows:,} updates={updates.num_rows:,} codec={codec} "
        f"arrow_size={data.nbytes / 2**20:.0f} MiB"
    )

    def fresh(name: str) -> Path:
        path = work / name
        shutil.rmtree(path, ignore_errors=True)
        return path

    def new_hudi_table() -> HudiTable:
        return HudiTable.create(
            str(fresh("hudi")),
            name="trips",
            record_key_fields=["uuid"],
            partition_fields=["city"],
            precombine_field="ts",
            options=options,
        )

    plain = best_of(
        args.repeat,
        lambda: fresh("plain").mkdir(),
        lambda: pq.write_table(data, work / "plain" / "data.parquet", compression=codec),
    )
    holder: dict[str, HudiTable] = {}
    bulk = best_of(
        args.repeat,
        lambda: holder.update(t=new_hudi_table()),
        lambda: holder["t"].write(data, operation="bulk_insert"),
    )
    print(f"plain parquet write_table: {plain:7.2f} s")
    print(f"hudi bulk_insert:          {bulk:7.2f} s   ratio {bulk / plain:.2f}x (target <= 1.5x)")

    def hudi_setup() -> None:
        holder["t"] = new_hudi_table()
        holder["t"].write(data, operation="bulk_insert")

    upsert = best_of(
        args.repeat, hudi_setup, lambda: holder["t"].write(updates, operation="upsert")
    )
    check = holder["t"].read(columns=["uuid", "fare"])
    assert check.num_rows == data.num_rows, "upsert changed the row count"

    delta = deltalake_merge_seconds(work, data, updates, codec, args.repeat)
    print(f"deltalake MERGE (10%):     {delta:7.2f} s")
    print(
        f"hudi upsert (10%):         {upsert:7.2f} s   ratio {upsert / delta:.2f}x (target <= 1.0x)"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
