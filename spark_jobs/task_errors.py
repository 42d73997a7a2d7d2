"""HudiErrors raised in Spark tasks, raised again on the driver as themselves.

A Python exception that escapes a task fails it: Spark retries the task, then fails the job
with a Java exception whose only trace of the error is the worker's traceback as text. A
HudiError says what is wrong with the input, an option or a file, so a retry fails the same
way, and the caller wants the error itself. So the functions that run on executors are wrapped
(`TaskErrors.guard`): a HudiError ends the task normally and its class and message travel in
the task's result, as an update of an accumulator of this TaskErrors; after the action the
driver raises the same class with the same message (`TaskErrors.check`). Other exceptions fail
the task as before.

The task must end normally because Spark drops the accumulator updates of failed tasks. Its
output is then partial, so the driver checks after every action whose tasks ran a guarded
function, before it uses what the action returned (a cached DataFrame keeps the partial
output, but the check after the action that filled the cache has raised by then).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pyspark import AccumulatorParam
from pyspark.sql import DataFrame, Row, SparkSession

from hudi_core.errors import HudiError

Raised = list[tuple[type[HudiError], str]]  # (class, message) of each error, in arrival order


class TaskErrors:
    """The HudiErrors of the tasks that ran functions this object guarded (one write, one map):
    a fresh one per operation, so that no error outlives the operation it belongs to."""

    def __init__(self, spark: SparkSession) -> None:
        self._raised = spark.sparkContext.accumulator([], _Appended())

    def guard(self, fn: Callable[[Iterator[Any]], Iterator[Any]]) -> _Guarded:
        """`fn` (a function over a task's rows or Arrow batches, as mapInArrow and
        mapPartitions call) with its HudiErrors handed to the driver."""
        return _Guarded(fn, self._raised)

    def check(self) -> None:
        """Raises the first HudiError a guarded task handed back, if any did."""
        raised = self._raised.value
        if raised:
            error_class, message = raised[0]
            raise error_class(message)

    def collect(self, df: DataFrame) -> list[Row]:
        """`df.collect()`, checked."""
        rows = df.collect()
        self.check()
        return rows


class _Guarded:
    """A task's function that hands a HudiError to the driver instead of failing the task."""

    def __init__(self, fn: Callable[[Iterator[Any]], Iterator[Any]], raised: Any) -> None:
        self.fn = fn
        self.raised = raised  # the accumulator: picklable, and added to from any task

    def __call__(self, rows: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from self.fn(rows)
        except HudiError as error:
            self.raised.add([(type(error), str(error))])
            for _ in rows:  # the rest of the input, read so that the worker ends cleanly
                pass


class _Appended(AccumulatorParam):
    """An accumulator of lists: every task's errors, appended."""

    def zero(self, value: Raised) -> Raised:
        return []

    def addInPlace(self, value1: Raised, value2: Raised) -> Raised:  # noqa: N802 (pyspark's)
        return value1 + value2
