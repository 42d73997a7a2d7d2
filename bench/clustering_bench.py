"""Clustering figures, each against a reference measured in the same run:

  1. clustering (--layout over two columns; z-order by default) of a table of many small
     commits / pyarrow reading the same files, sorting the rows by the two columns and
     writing them into as many files (target <= 1.5)
  2. a filter on both sort columns: our read of the clustered table / our read of the table
     before clustering, with the files and row groups each read
  3. peak memory (RSS) of clustering that table in a fresh process: a group's rows are held
     while they are sorted

Usage: python bench/clustering_bench.py [--rows N] [--commits C] [--repeat R] [--layout L]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import best_of, trips  # noqa: E402
from mor_bench import new_table  # noqa: E402

from hudi_core import HudiTable  # noqa: E402

SORT = ["begin_lat", "begin_lon"]
OPTIONS = {
    "hoodie.parquet.compression.codec": "snappy",
    "hoodie.parquet.small.file.limit": "0",  # every commit makes new small file groups
    "hoodie.parquet.block.size": str(8 << 20),  # row groups small enough to skip some
    "hoodie.clustering.plan.strategy.sort.columns": ",".join(SORT),
}
BOX = [
    ("begin_lat", ">=", "0.50"),
    ("begin_lat", "<", "0.55"),
    ("begin_lon", ">=", "0.50"),
    ("begin_lon", "<", "0.55"),
]


def small_commits(path: Path, rows: int, commits: int) -> HudiTable:
    table = new_table(path, "COPY_ON_WRITE", OPTIONS, partition_fields=())
    data = trips(rows, seed=1)
    step = -(-rows // commits)
    for start in range(0, rows, step):
        table.write(data.slice(start, step), operation="insert")
    return table


def base_files(path: Path) -> list[Path]:
    return sorted(path.glob("*.parquet"))


def clustering_ratio(
    work: Path, rows: int, commits: int, repeat: int, layout: str
) -> tuple[Path, Path]:
    source = work / "source"
    small_commits(source, rows, commits)
    inputs = base_files(source)
    size = sum(p.stat().st_size for p in inputs)
    outputs = 4
    target = {
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(size // outputs + 1),
        "hoodie.layout.optimize.strategy": layout,
    }
    clustered = work / "clustered"
    holder: dict = {}

    def setup() -> None:
        shutil.rmtree(clustered, ignore_errors=True)
        shutil.copytree(source, clustered)
        holder["table"] = HudiTable.open(str(clustered), {**OPTIONS, **target})

    def cluster() -> None:
        table = holder["table"]
        table.clustering.run(table.clustering.schedule())

    ours = best_of(repeat, setup, cluster)
    written = len(base_files(clustered)) - len(inputs)

    def rewrite() -> None:
        rows_read = pa.concat_tables(pq.read_table(p) for p in inputs)
        order = pc.sort_indices(rows_read, [(c, "ascending") for c in SORT])
        ordered = rows_read.take(order)
        bounds = np.linspace(0, ordered.num_rows, outputs + 1).astype(int)
        for k in range(outputs):
            piece = ordered.slice(bounds[k], bounds[k + 1] - bounds[k])
            pq.write_table(piece, work / f"rewrite-{k}.parquet", compression="snappy")

    reference = best_of(repeat, lambda: None, rewrite)
    print(f"pyarrow read+sort+write:   {reference:7.2f} s   ({rows:,} rows in {len(inputs)} files)")
    print(
        f"clustering ({layout}):{' ' * (14 - len(layout))}{ours:7.2f} s   "
        f"ratio {ours / reference:.2f} "
        f"(target <= 1.5; {written} files written)"
    )
    return source, clustered


_CLUSTER_IN_A_FRESH_PROCESS = """
import json, sys
sys.path.insert(0, {root!r})
from hudi_core import HudiTable

def peak_mb():  # VmHWM: this process's own peak
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024

table = HudiTable.open({path!r}, {options!r})
before = peak_mb()
table.clustering.run(table.clustering.schedule())
print(json.dumps({{"peak_mb": peak_mb(), "before_mb": before}}))
"""


def clustering_memory(work: Path, source: Path, layout: str) -> None:
    copy = work / "memory"
    shutil.copytree(source, copy)
    parquet_mb = sum(p.stat().st_size for p in base_files(copy)) / 2**20
    options = {**OPTIONS, "hoodie.layout.optimize.strategy": layout}
    code = _CLUSTER_IN_A_FRESH_PROCESS.format(
        root=str(Path(__file__).resolve().parents[1]), path=str(copy), options=options
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"peak RSS of clustering one group of {parquet_mb:.0f} MB of parquet: "
        f"{figures['peak_mb']:.0f} MB ({figures['before_mb']:.0f} MB before)"
    )


def filtered_read(source: Path, clustered: Path, repeat: int, layout: str) -> None:
    holder: dict = {}
    for name, path in (("before", source), ("after", clustered)):
        table = HudiTable.open(str(path))

        def read(table: HudiTable = table, name: str = name) -> None:
            holder[name] = table.read_with_statistics(filters=BOX)

        seconds = best_of(repeat, lambda: None, read)
        rows, stats = holder[name]
        holder[f"{name}_s"] = seconds
        print(
            f"box filter, {name + ' clustering:':19s} {seconds * 1000:7.1f} ms   "
            f"{rows.num_rows:,} rows; {stats.files_read}/{stats.files} files, "
            f"{stats.row_groups_read}/{stats.row_groups} row groups read"
        )
    assert holder["before"][0].num_rows == holder["after"][0].num_rows
    speedup = holder["before_s"] / holder["after_s"]
    print(f"filtered read speedup after {layout}: {speedup:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--layout", default="z-order", choices=["linear", "z-order", "hilbert"])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hudi-clustering-bench-"))
    try:
        source, clustered = clustering_ratio(
            work, args.rows, args.commits, args.repeat, args.layout
        )
        filtered_read(source, clustered, args.repeat, args.layout)
        clustering_memory(work, source, args.layout)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    pa.set_cpu_count(pa.cpu_count())
    main()
