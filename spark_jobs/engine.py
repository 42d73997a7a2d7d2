"""The Spark engine context: hudi_core's per-file-group task functions run on executors.

Items (compaction operations, slices to index, files to delete) are small descriptions; the
tasks read and write data files where they run and return small results (write stats), which
are all the driver collects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pyspark import TaskContext
from pyspark.sql import SparkSession

from hudi_core.engine import running_attempt

T = TypeVar("T")
R = TypeVar("R")


class SparkEngine:
    def __init__(self, spark: SparkSession, parallelism: int | None = None) -> None:
        self.spark = spark
        self.parallelism = parallelism or spark.sparkContext.defaultParallelism

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """`fn` over every item, one Spark task per item; results in item order."""
        if not items:
            return []
        indexed = list(enumerate(items))
        rdd = self.spark.sparkContext.parallelize(indexed, numSlices=len(indexed))
        results = rdd.map(_AttemptAware(fn)).collect()
        return [result for _, result in sorted(results, key=lambda pair: pair[0])]


class _AttemptAware:
    """Runs `fn` on one (index, item) pair, telling hudi_core which task attempt this is."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self, pair: tuple[int, object]) -> tuple[int, object]:
        index, item = pair
        with running_attempt(current_attempt()):
            return index, self.fn(item)


def current_attempt() -> int:
    """The running Spark task's attempt number (0 outside a task)."""
    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0
