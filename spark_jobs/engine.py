"""The Spark engine context: hudi_core's per-file-group task functions run on executors.

Items (compaction operations, slices to index, files to delete) are small descriptions; the
tasks read and write data files where they run and return small results (write stats), which
are all the driver collects. A HudiError a task raises reaches the caller as itself (see
spark_jobs.task_errors).

`max_slices` caps the Spark partitions a map spreads its items over (a job's parallelism
option, such as hoodie.bootstrap.parallelism): beyond it, items share partitions, each
partition running its items one after the other. Without it, every item is a task of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from pyspark import TaskContext
from pyspark.sql import SparkSession

from hudi_core.engine import running_attempt
from hudi_core.errors import InvalidOptionError
from spark_jobs.task_errors import TaskErrors

T = TypeVar("T")
R = TypeVar("R")


class SparkEngine:
    def __init__(
        self, spark: SparkSession, parallelism: int | None = None, max_slices: int | None = None
    ) -> None:
        self.spark = spark
        self.parallelism = parallelism or spark.sparkContext.defaultParallelism
        if max_slices is not None and max_slices < 1:
            raise InvalidOptionError(f"an engine needs at least one slice, not {max_slices}")
        self.max_slices = max_slices

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """`fn` over every item, one Spark task per item (at most `max_slices` tasks, items
        sharing them in order); results in item order."""
        if not items:
            return []
        indexed = list(enumerate(items))
        rdd = self.spark.sparkContext.parallelize(indexed, numSlices=self.slices(len(indexed)))
        errors = TaskErrors(self.spark)
        results = rdd.mapPartitions(errors.guard(_AttemptAware(fn))).collect()
        errors.check()
        return [result for _, result in sorted(results, key=lambda pair: pair[0])]

    def slices(self, items: int) -> int:
        """The Spark partitions a map of `items` items runs in."""
        return items if self.max_slices is None else max(1, min(items, self.max_slices))


class _AttemptAware:
    """Runs `fn` on (index, item) pairs, telling hudi_core which task attempt this is."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self, pairs: Iterator[tuple[int, object]]) -> Iterator[tuple[int, object]]:
        for index, item in pairs:
            with running_attempt(current_attempt()):
                yield index, self.fn(item)


def current_attempt() -> int:
    """The running Spark task's attempt number (0 outside a task)."""
    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0
