"""Sensors that wait on a table's timeline."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from airflow.sdk import BaseSensorOperator
from airflow.sdk.bases.sensor import PokeReturnValue
from airflow.sdk.exceptions import AirflowSensorTimeout, AirflowSkipException

from hudi_airflow.hooks import HudiTableHook
from hudi_airflow.task_summary import log_wait_stopped
from hudi_airflow.triggers import HudiInstantTrigger
from hudi_core import InvalidOptionError, State

STATES = tuple(s.value for s in State)


class _SaysWhatItWaitedFor(BaseSensorOperator):
    """A sensor that, when it stops without what it waited for (timed out, or skipped by
    soft_fail), logs what that was: Airflow's own message says only that it timed out."""

    def waited_for(self) -> str:
        raise NotImplementedError

    def execute(self, context: Any) -> Any:
        try:
            return super().execute(context)
        except (AirflowSensorTimeout, AirflowSkipException) as exc:
            self._stopped(exc)
            raise

    def resume_execution(self, next_method: str, next_kwargs: Any, context: Any) -> Any:
        try:
            return super().resume_execution(next_method, next_kwargs, context)
        except (AirflowSensorTimeout, AirflowSkipException) as exc:
            self._stopped(exc)
            raise

    def _stopped(self, exc: Exception) -> None:
        skipped = isinstance(exc, AirflowSkipException)
        log_wait_stopped(self.log, self.waited_for(), self.timeout, skipped)


class HudiInstantSensor(_SaysWhatItWaitedFor):
    """Waits until the timeline holds an instant with `action` (a name, or a list of names)
    and `state` (and `instant_time`, if given; templated, e.g. from another task's XCom), then
    pushes its instant time. With `deferrable=True` the wait runs in the triggerer.

    Only instants newer than something, for a table fed by this one (templated, one of):
    `after_instant`, an instant time; `after_checkpoint_of`, the base path of a table that
    ingests this one's commits (spark_jobs/ingest.py --source-format hudi): newer than the
    checkpoint its last ingest recorded, i.e. commits it has not read yet (any, while it has
    no table or no checkpoint yet)."""

    template_fields: Sequence[str] = (
        "base_path",
        "action",
        "state",
        "instant_time",
        "after_instant",
        "after_checkpoint_of",
    )

    def __init__(
        self,
        *,
        base_path: str | None = None,
        action: str | Sequence[str] | None = None,
        state: str = "COMPLETED",
        instant_time: str | None = None,
        hoodie_options: dict[str, Any] | None = None,
        hudi_conn_id: str | None = None,
        deferrable: bool = False,
        after_instant: str | None = None,
        after_checkpoint_of: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if state.upper() not in STATES:
            raise InvalidOptionError(f"state must be one of {', '.join(STATES)}, not {state!r}")
        if after_instant and after_checkpoint_of:
            raise InvalidOptionError("give after_instant or after_checkpoint_of, not both")
        self.base_path = base_path
        self.action = action if action is None or isinstance(action, str) else list(action)
        self.state = state.upper()
        self.instant_time = instant_time
        self.hoodie_options = hoodie_options or {}
        self.hudi_conn_id = hudi_conn_id
        self.deferrable = deferrable
        self.after_instant = after_instant
        self.after_checkpoint_of = after_checkpoint_of

    def _hook(self) -> HudiTableHook:
        return HudiTableHook(self.hudi_conn_id, self.base_path, self.hoodie_options)

    def _after(self) -> str | None:
        """The instant time found instants must be newer than, if any."""
        if self.after_checkpoint_of:
            fed = HudiTableHook(base_path=self.after_checkpoint_of, options=self.hoodie_options)
            return fed.last_checkpoint()
        return self.after_instant or None

    def _find(self, hook: HudiTableHook, after: str | None) -> Any:
        return hook.find_instant(self.action, self.state, self.instant_time or None, after)

    def execute(self, context: Any) -> Any:
        if not self.deferrable:
            return super().execute(context)
        hook, after = self._hook(), self._after()
        found = self._find(hook, after)
        if found is not None:
            return found.timestamp
        self.defer(
            trigger=HudiInstantTrigger(
                hook.base_path,
                self.action,
                self.state,
                self.instant_time or None,
                hook.in_process_options(),
                poll_interval=self.poke_interval,
                after_instant=after,
            ),
            method_name="execute_complete",
            timeout=timedelta(seconds=self.timeout) if self.timeout else None,
        )

    def poke(self, context: Any) -> bool | PokeReturnValue:
        found = self._find(self._hook(), self._after())
        if found is None:
            return False
        return PokeReturnValue(is_done=True, xcom_value=found.timestamp)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> str:
        return event["instant_time"]

    def waited_for(self) -> str:
        actions = self.action if isinstance(self.action, str | None) else "/".join(self.action)
        what = f"{self.state.lower()} {actions or 'instant'}"
        if self.instant_time:
            what += f" at {self.instant_time}"
        if self.after_instant:
            what += f" newer than {self.after_instant}"
        elif self.after_checkpoint_of:
            what += f" newer than the checkpoint of {self.after_checkpoint_of}"
        return f"{what} on {self._hook().base_path}"


class HudiCompactionDueSensor(_SaysWhatItWaitedFor):
    """Waits until the table's compaction trigger (hoodie.compact.inline.trigger.strategy with
    its delta-commit and elapsed-time thresholds) says a compaction is due, or a plan is
    pending. Runs in reschedule mode by default: the thresholds move slowly."""

    template_fields: Sequence[str] = ("base_path",)

    def __init__(
        self,
        *,
        base_path: str | None = None,
        hoodie_options: dict[str, Any] | None = None,
        hudi_conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("mode", "reschedule")
        super().__init__(**kwargs)
        self.base_path = base_path
        self.hoodie_options = hoodie_options or {}
        self.hudi_conn_id = hudi_conn_id

    def poke(self, context: Any) -> bool:
        hook = HudiTableHook(self.hudi_conn_id, self.base_path, self.hoodie_options)
        return bool(hook.pending_compactions()) or hook.compaction_due()

    def waited_for(self) -> str:
        hook = HudiTableHook(self.hudi_conn_id, self.base_path, self.hoodie_options)
        return f"compaction due or pending on {hook.base_path}"
