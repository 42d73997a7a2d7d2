"""The demo: a partitioned table written in a few commits, read by us and by Apache Hudi's own
reader (the `hudi` package), which must agree; then its table services run (compaction on
merge-on-read, cleaning) and the two readers must still agree.

    ./run.sh demo [--path DIR] [--table-type MERGE_ON_READ]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile

import pyarrow as pa
from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

from hudi_core import HudiTable


def trips(ids: list[int], fare: float, ts: int) -> pa.Table:
    cities = ["san_francisco", "sao_paulo", "chennai"]
    return pa.table(
        {
            "uuid": [f"trip-{i:03d}" for i in ids],
            "city": [cities[i % 3] for i in ids],
            "rider": [f"rider-{i % 7}" for i in ids],
            "fare": [fare + i for i in ids],
            "ts": [ts] * len(ids),
        }
    )


def hudi_rs_read(path: str, options: HudiReadOptions | None = None) -> pa.Table:
    table = HudiTableBuilder.from_base_uri(path).build()
    batches = table.read(options or HudiReadOptions())
    return pa.Table.from_batches(batches) if batches else pa.table({})


def same_rows(ours: pa.Table, theirs: pa.Table) -> bool:
    def key(row: dict) -> str:
        return repr(sorted(row.items()))

    return sorted(ours.to_pylist(), key=key) == sorted(theirs.to_pylist(), key=key)


def show(title: str, table: pa.Table) -> None:
    print(f"\n{title} ({table.num_rows} rows)")
    view = table.select(["_hoodie_commit_time", "uuid", "city", "fare", "ts"]).sort_by("uuid")
    print(view.to_pandas().to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--path", help="where to write the table (default: a temp folder)")
    parser.add_argument(
        "--table-type", default="COPY_ON_WRITE", choices=["COPY_ON_WRITE", "MERGE_ON_READ"]
    )
    args = parser.parse_args()
    path = args.path or tempfile.mkdtemp(prefix="hudi-demo-")
    shutil.rmtree(path, ignore_errors=True)

    table = HudiTable.create(
        path,
        name="trips",
        table_type=args.table_type,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options={"hoodie.datasource.write.hive_style_partitioning": "true"},
    )
    first = table.write(trips(list(range(9)), fare=10.0, ts=1), operation="bulk_insert")
    second = table.write(trips([1, 4, 9, 10], fare=50.0, ts=2), operation="upsert")
    table.write(pa.table({"uuid": ["trip-002"], "city": ["chennai"]}), operation="delete")
    table.write(trips([30, 33], fare=99.0, ts=3), operation="insert_overwrite")

    print(f"table at {path}")
    print_timeline(table)
    checks = {
        "snapshot": (table.read(), hudi_rs_read(path)),
        f"time travel to {second}": (
            table.read(as_of=second),
            hudi_rs_read(path, HudiReadOptions().with_as_of_timestamp(second)),
        ),
        f"incremental ({first}, {second}]": (
            table.read(query_type="incremental", begin=first, end=second),
            hudi_rs_read(
                path,
                HudiReadOptions()
                .with_query_type(HudiQueryType.Incremental)
                .with_start_timestamp(first)
                .with_end_timestamp(second),
            ),
        ),
    }
    for name, (ours, theirs) in checks.items():
        compare(name, ours, theirs)

    run_services(table)
    print_timeline(table)
    compare("snapshot after the table services", table.read(), hudi_rs_read(path))


def run_services(table: HudiTable) -> None:
    """What the Airflow DAGs schedule as tasks of their own: compaction, then cleaning."""
    options = {
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.cleaner.commits.retained": "2",
    }
    if table.table_type == "MERGE_ON_READ":
        planned = table.compaction.schedule(options)
        print(f"\ncompaction planned at {planned}, run: {table.compaction.run(planned)}")
    print(f"clean: {table.clean(options)}")


def print_timeline(table: HudiTable) -> None:
    for instant in table.timeline():
        print(f"  {instant.timestamp}  {instant.action:<14} {instant.state.value}")


def compare(name: str, ours: pa.Table, theirs: pa.Table) -> None:
    show(name, ours)
    agree = same_rows(ours, theirs)
    print(f"-> the hudi package (Apache Hudi's reader) returns the same rows: {agree}")
    if not agree:
        raise SystemExit(f"{name}: hudi-rs disagrees")


if __name__ == "__main__":
    main()
