"""Merge-on-read figures, each against a reference measured in the same run:

  1. MOR upsert / COW upsert of the same 10% update batch on the same 2M-row table
     (target <= 0.33: appending logs is why merge-on-read exists)
  2. our snapshot read / the hudi package's snapshot read of that MOR table (target <= 1.0)
  3. peak memory (RSS) of merging one file group that has 2M log records, with
     hoodie.memory.merge.max.size=64MB (target < 512 MB), measured in a fresh process
  4. peak memory (RSS) of compacting that file group (schedule + run), with
     hoodie.memory.compaction.max.size=64MB (target < 768 MB), in a fresh process too

Usage: python bench/mor_bench.py [--rows N] [--repeat R] [--skip-memory]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import best_of, trips, updates_of  # noqa: E402

from hudi_core import HudiTable  # noqa: E402
from hudi_core.engine import LocalEngine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def new_table(
    path: Path,
    table_type: str,
    options: dict,
    partition_fields: tuple[str, ...] = ("city",),
    engine: LocalEngine | None = None,
) -> HudiTable:
    shutil.rmtree(path, ignore_errors=True)
    return HudiTable.create(
        str(path),
        name="trips",
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=list(partition_fields),
        precombine_field="ts",
        options=options,
        engine=engine,
    )


def upsert_ratio(work: Path, data: pa.Table, updates: pa.Table, repeat: int) -> HudiTable:
    options = {"hoodie.parquet.compression.codec": "snappy"}
    holder: dict[str, HudiTable] = {}

    def setup(table_type: str):
        def run() -> None:
            holder["t"] = new_table(work / table_type, table_type, options)
            holder["t"].write(data, operation="bulk_insert")

        return run

    cow = best_of(repeat, setup("COPY_ON_WRITE"), lambda: holder["t"].write(updates))
    mor = best_of(repeat, setup("MERGE_ON_READ"), lambda: holder["t"].write(updates))
    print(f"COW upsert (10%):          {cow:7.2f} s")
    print(f"MOR upsert (10%):          {mor:7.2f} s   ratio {mor / cow:.2f} (target <= 0.33)")
    return holder["t"]


def read_ratio(table: HudiTable, repeat: int) -> None:
    from hudi import HudiTableBuilder

    path = table.storage.base_path
    ours_rows = table.read().num_rows

    def theirs() -> None:
        batches = HudiTableBuilder.from_base_uri(path).build().read()
        assert sum(b.num_rows for b in batches) == ours_rows

    ours = best_of(repeat, lambda: None, table.read)
    rs = best_of(repeat, lambda: None, theirs)
    print(f"hudi package snapshot:     {rs:7.2f} s   ({ours_rows:,} rows)")
    print(f"our snapshot:              {ours:7.2f} s   ratio {ours / rs:.2f} (target <= 1.0)")


_MERGE_ONE_GROUP = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {root!r})

    def peak_mb():  # VmHWM: this process's own peak (ru_maxrss would include the parent's)
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024

    from hudi_core import HudiTable
    from hudi_core.read.file_system_view import FileSystemView
    from hudi_core.read.log_scanner import InstantFilter, SliceLog
    from hudi_core.read.slice_merger import SliceMerger
    from hudi_core.merge.record_merger import RecordMerger
    from hudi_core.schema.meta_fields import add_meta_fields

    table = HudiTable.open({path!r})
    timeline = table._timeline()
    (file_slice,) = FileSystemView(table.storage, timeline).latest_slices()
    log = SliceLog.scan(table.storage, file_slice, InstantFilter.of(timeline))
    schema = add_meta_fields(table.schema())
    merger = RecordMerger(table.config.options["hoodie.compaction.payload.class"], "ts")
    before = peak_mb()
    merged = SliceMerger(table.storage, schema, merger, 64 << 20).merge(file_slice, log)
    rows = sum(batch.num_rows for batch in merged)
    print(json.dumps({{"rows": rows, "peak_mb": peak_mb(), "before_mb": before,
                      "log_files": len(file_slice.log_files)}}))
    """
)


_COMPACT_ONE_GROUP = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {root!r})

    def peak_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024

    from hudi_core import HudiTable

    options = {{
        "hoodie.memory.compaction.max.size": str(64 << 20),
        "hoodie.compact.inline.max.delta.commits": "1",
    }}
    table = HudiTable.open({path!r}, options)
    before = peak_mb()
    planned = table.compaction.schedule(options)
    done = table.compaction.run(planned, options=options)
    print(json.dumps({{"instant": done, "peak_mb": peak_mb(), "before_mb": before}}))
    """
)


def peak_of(script: str, path: Path) -> dict:
    """The figures a script prints last, run in a fresh interpreter on the table at `path`."""
    code = script.format(root=str(ROOT), path=str(path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def merge_memory(work: Path, rows: int, commits: int) -> None:
    """One file group: `rows` base rows, then `commits` upserts of rows/commits keys each."""
    path = work / "one_group"
    shutil.rmtree(path, ignore_errors=True)
    table = HudiTable.create(
        str(path),
        name="trips",
        table_type="MERGE_ON_READ",
        record_key_fields=["uuid"],
        precombine_field="ts",
        engine=LocalEngine(1),  # one task: one file group
        options={
            "hoodie.parquet.compression.codec": "snappy",
            "hoodie.parquet.max.file.size": str(4 << 30),
        },
    )
    data = trips(rows, seed=1)
    table.write(data, operation="bulk_insert")
    for seed in range(commits):
        table.write(updates_of(data, 1 / commits, seed=100 + seed))
    figures = peak_of(_MERGE_ONE_GROUP, path)
    peak = figures["peak_mb"]
    print(
        f"merge of one file group: {rows:,} base rows + {rows:,} log records in "
        f"{figures['log_files']} log files -> {figures['rows']:,} rows"
    )
    print(
        f"peak RSS with a 64 MB merge budget: {peak:7.0f} MB (target < 512 MB; "
        f"the process held {figures['before_mb']:.0f} MB before merging)"
    )
    compaction = peak_of(_COMPACT_ONE_GROUP, path)
    assert compaction["instant"], "no compaction was planned"
    print(
        f"peak RSS of compacting that file group: {compaction['peak_mb']:.0f} MB "
        f"(target < 768 MB; 64 MB compaction budget; {compaction['before_mb']:.0f} MB before)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--log-commits", type=int, default=10)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hudi-mor-bench-"))
    try:
        data = trips(args.rows, seed=1)
        updates = updates_of(data, 0.10, seed=2)
        print(f"rows={data.num_rows:,} updates={updates.num_rows:,}")
        table = upsert_ratio(work, data, updates, args.repeat)
        read_ratio(table, args.repeat)
        if not args.skip_memory:
            merge_memory(work, args.rows, args.log_commits)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
