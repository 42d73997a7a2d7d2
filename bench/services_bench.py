"""Table service figures, each against a reference measured in the same run:

  1. compaction of one file group (a 2M-row base file + 10% of its rows updated in log files)
     / pyarrow reading that base file and writing it back unchanged (target <= 1.4)
  2. loading the timeline of a table with 1,000 instants, before and after archival

Usage: python bench/services_bench.py [--rows N] [--commits C] [--repeat R]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import best_of, timed, trips, updates_of  # noqa: E402
from mor_bench import new_table  # noqa: E402

from hudi_core import HudiTable  # noqa: E402
from hudi_core.engine import LocalEngine  # noqa: E402
from hudi_core.timeline import ActiveTimeline  # noqa: E402

ONE_FILE_GROUP = {
    "hoodie.parquet.compression.codec": "snappy",
    "hoodie.parquet.max.file.size": str(4 << 30),  # the whole base in one file group
    "hoodie.bulkinsert.sort.mode": "NONE",
}


def one_group_table(path: Path, table_type: str, options: dict) -> HudiTable:
    """Non-partitioned, written by one task: a bulk_insert makes one file group."""
    return new_table(path, table_type, options, partition_fields=(), engine=LocalEngine(1))


def compaction_ratio(work: Path, rows: int, repeat: int) -> None:
    data = trips(rows, seed=1)
    updates = updates_of(data, 0.10, seed=2)
    half = updates.num_rows // 2
    holder: dict = {}

    def setup() -> None:
        table = one_group_table(work / "mor", "MERGE_ON_READ", ONE_FILE_GROUP)
        table.write(data, operation="bulk_insert")
        table.write(updates.slice(0, half))  # two delta commits: two log files
        table.write(updates.slice(half))
        slices = table.read(query_type="read_optimized", columns=["_hoodie_file_name"])
        assert len(set(slices.column(0).to_pylist())) == 1, "expected one file group"
        holder["table"] = table
        holder["plan"] = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})

    compaction = best_of(repeat, setup, lambda: holder["table"].compaction.run(holder["plan"]))
    table = holder["table"]
    base = _base_files(table)[0]

    def rewrite() -> None:
        rows = pq.read_table(base)
        pq.write_table(rows, str(work / "rewrite.parquet"), compression="snappy")

    reference = best_of(repeat, lambda: None, rewrite)
    merged = table.read(query_type="read_optimized").num_rows
    print(f"pyarrow read+write base:   {reference:7.2f} s   ({rows:,} rows)")
    print(
        f"compaction (10% in logs):  {compaction:7.2f} s   ratio {compaction / reference:.2f} "
        f"(target <= 1.4; {merged:,} rows after)"
    )


def _base_files(table: HudiTable) -> list[str]:
    root = Path(table.storage.base_path)
    return sorted(str(p) for p in root.glob("*.parquet"))


def timeline_load(work: Path, commits: int, repeat: int) -> None:
    options = {
        "hoodie.keep.min.commits": "20",
        "hoodie.keep.max.commits": "30",
        "hoodie.cleaner.commits.retained": "10",
    }
    table = one_group_table(work / "timeline", "COPY_ON_WRITE", options)
    batch = trips(10, seed=3)
    write_time = timed(lambda: [table.write(batch) for _ in range(commits)])
    storage = table.storage
    before = best_of(repeat, lambda: None, lambda: ActiveTimeline.load(storage))
    active_before = len(ActiveTimeline.load(storage).instants)
    table.clean()
    archive_time = timed(table.archive)
    after = best_of(repeat, lambda: None, lambda: ActiveTimeline.load(storage))
    active_after = len(ActiveTimeline.load(storage).instants)
    full = best_of(repeat, lambda: None, lambda: table.timeline(archived=True))
    print(f"{commits} commits written:      {write_time:7.2f} s")
    print(f"timeline load, {active_before} active: {before * 1000:7.1f} ms")
    print(f"archival:                  {archive_time:7.2f} s")
    print(
        f"timeline load, {active_after} active:   {after * 1000:7.1f} ms   "
        f"ratio {after / before:.2f} of before"
    )
    print(f"active + archived ({len(table.timeline(archived=True))}):  {full * 1000:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hudi-services-bench-"))
    try:
        compaction_ratio(work, args.rows, args.repeat)
        timeline_load(work, args.commits, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    pa.set_cpu_count(pa.cpu_count())
    main()
