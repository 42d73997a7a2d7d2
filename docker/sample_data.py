"""Sample data for the compose stack: a parquet drop of trip records every few minutes.

Each drop holds new trips and, from the second on, updates of some trips of the drop before
(a later `ts`, another fare, the same city), so the merge-on-read table gets inserts and
upserts, log files and compactions. The trips table of docker/tables.yaml ingests the drops
on its schedule. A drop is one parquet file under the landing prefix, written whole (an object
store's PUT publishes a file at once; on a local disk it is written under a hidden name and
renamed), so the ingest never reads half a file.

    python docker/sample_data.py --path s3a://lake/landing/trips --interval 120
    python docker/sample_data.py --path /tmp/landing/trips --once

The object store is reached as hudi_core reaches it (hudi_core.filesystems): in the stack
through the standard environment variables AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY and AWS_REGION.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import time
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_core.filesystems import filesystem_for, is_object_store

LOG = logging.getLogger("sample_data")
CITIES = ("san_francisco", "sao_paulo", "chennai", "amsterdam")
SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),  # the record key
        ("ts", pa.int64()),  # the precombine field: epoch milliseconds
        ("city", pa.string()),  # the partition field
        ("rider", pa.string()),
        ("driver", pa.string()),
        ("fare", pa.float64()),
        ("distance_km", pa.float64()),
    ]
)
UPDATED_SHARE = 0.25  # of a drop's rows, trips of the drop before


@dataclass
class Generator:
    """Makes the drops; remembers the last drop's trips (key -> city) to update some."""

    rows: int
    seed: int = 0
    previous: dict[str, str] = field(default_factory=dict)
    drops: int = 0

    def next_drop(self, now_ms: int) -> pa.Table:
        rng = random.Random(f"{self.seed}-{self.drops}")
        updated = rng.sample(
            sorted(self.previous), min(len(self.previous), int(self.rows * UPDATED_SHARE))
        )
        new = [f"trip-{now_ms}-{i:04d}" for i in range(self.rows - len(updated))]
        cities = {key: self.previous[key] for key in updated}  # an update keeps its partition
        cities.update({key: rng.choice(CITIES) for key in new})
        keys = updated + new
        self.previous = {key: cities[key] for key in new}
        self.drops += 1
        return pa.table(
            {
                "uuid": keys,
                "ts": [now_ms] * len(keys),
                "city": [cities[key] for key in keys],
                "rider": [f"rider-{rng.randrange(50):03d}" for _ in keys],
                "driver": [f"driver-{rng.randrange(20):03d}" for _ in keys],
                "fare": [round(rng.uniform(5, 80), 2) for _ in keys],
                "distance_km": [round(rng.uniform(0.5, 30), 1) for _ in keys],
            },
            schema=SCHEMA,
        )


def write_drop(location: str, table: pa.Table, now_ms: int) -> str:
    """Writes one drop under `location` (a folder or prefix); returns the file's path there."""
    filesystem, folder = filesystem_for(location)
    name = f"trips-{now_ms}.parquet"
    final = f"{folder}/{name}"
    if is_object_store(location):
        _write(filesystem, final, table)
        return final
    filesystem.create_dir(folder, recursive=True)
    hidden = f"{folder}/_writing-{name}"  # the ingest skips names starting with "_"
    _write(filesystem, hidden, table)
    filesystem.move(hidden, final)
    return final


def _write(filesystem: pafs.FileSystem, path: str, table: pa.Table) -> None:
    with filesystem.open_output_stream(path) as stream:
        pq.write_table(table, stream)


def run(location: str, interval: float, generator: Generator, once: bool) -> None:
    while True:
        now_ms = int(time.time() * 1000)
        table = generator.next_drop(now_ms)
        try:
            path = write_drop(location, table, now_ms)
            LOG.info("wrote %d trips to %s", table.num_rows, path)
        except OSError as exc:  # the store is down or refuses: try again next time
            LOG.warning("could not write a drop to %s: %s", location, exc)
        if once:
            return
        time.sleep(interval)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--path",
        default=os.environ.get("SAMPLE_DATA_PATH"),
        help="the landing folder or prefix (default: $SAMPLE_DATA_PATH)",
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=float(os.environ.get("SAMPLE_DATA_INTERVAL", "120")),
        help="seconds between drops (default: $SAMPLE_DATA_INTERVAL or 120)",
    )
    parser.add_argument(
        "--rows",
        type=int,
        default=int(os.environ.get("SAMPLE_DATA_ROWS", "40")),
        help="trips per drop (default: $SAMPLE_DATA_ROWS or 40)",
    )
    parser.add_argument("--once", action="store_true", help="write one drop and stop")
    args = parser.parse_args(argv)
    if not args.path:
        parser.error("--path (or SAMPLE_DATA_PATH) is required")
    if args.rows < 1 or args.interval <= 0:
        parser.error("--rows must be at least 1 and --interval above 0")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    run(args.path, args.interval, Generator(args.rows), args.once)
    return 0


if __name__ == "__main__":
    sys.exit(main())
