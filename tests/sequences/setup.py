"""A sequence's table: type, index, partitions, payload and the aggressive service options,
all drawn from the seed."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tests.sequences.model import EVENT_TIME, OVERWRITE_WITH_LATEST

INDEXES = ("SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "BUCKET")


@dataclass(frozen=True)
class Setup:
    mor: bool
    index: str
    partitions: int  # 0: non-partitioned
    key_count: int
    payload: str
    options: dict[str, Any] = field(hash=False)
    kill_rate: float = 0.25

    @classmethod
    def draw(cls, rng: random.Random) -> Setup:
        mor = rng.random() < 0.5
        index = rng.choice(INDEXES)
        retained = rng.randint(1, 2)
        keep_min = retained + rng.randint(1, 2)
        options: dict[str, Any] = {
            "hoodie.index.type": index,
            "hoodie.parquet.small.file.limit": rng.choice(("0", "104857600")),
            "hoodie.cleaner.commits.retained": str(retained),
            "hoodie.keep.min.commits": str(keep_min),
            "hoodie.keep.max.commits": str(keep_min + rng.randint(1, 2)),
            "hoodie.compact.inline.max.delta.commits": str(rng.randint(1, 2)),
            "hoodie.client.heartbeat.interval_in_ms": "200",
            "hoodie.client.heartbeat.tolerable.misses": "2",
        }
        if index == "BUCKET":
            options["hoodie.bucket.index.num.buckets"] = str(rng.randint(1, 3))
        payload = EVENT_TIME if rng.random() < 0.25 else OVERWRITE_WITH_LATEST
        if payload == EVENT_TIME:
            options["hoodie.datasource.write.payload.class"] = payload
        return cls(
            mor=mor,
            index=index,
            partitions=rng.choice((0, 1, 2, 3)),
            key_count=rng.randint(3, 8),
            payload=payload,
            options=options,
        )

    @property
    def table_type(self) -> str:
        return "MERGE_ON_READ" if self.mor else "COPY_ON_WRITE"

    @property
    def retained(self) -> int:
        return int(self.options["hoodie.cleaner.commits.retained"])

    @property
    def partition_names(self) -> list[str]:
        return [f"p{n}" for n in range(self.partitions)]

    def keys(self) -> list[str]:
        return [f"k{n}" for n in range(self.key_count)]

    def partition_of_key(self, key: str) -> str:
        """A key lives in one partition for good (no partition moves of global indexes)."""
        return f"p{int(key[1:]) % max(self.partitions, 1)}"

    def __str__(self) -> str:
        shown = {k.removeprefix("hoodie."): v for k, v in self.options.items()}
        payload = self.payload.rsplit(".", 1)[-1]
        return (
            f"{self.table_type} index={self.index} partitions={self.partitions} "
            f"keys={self.key_count} payload={payload} options={shown}"
        )
