"""Triggers: waits that run in Airflow's triggerer instead of holding a worker slot."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent


class HudiInstantTrigger(BaseTrigger):
    """Fires once the table's timeline holds an instant of this action (or one of these
    actions) and state (and time; and a time after `after_instant`)."""

    def __init__(
        self,
        base_path: str,
        action: str | list[str] | None,
        state: str | None,
        instant_time: str | None = None,
        options: dict[str, str] | None = None,
        poll_interval: float = 30.0,
        after_instant: str | None = None,
    ) -> None:
        super().__init__()
        self.base_path = base_path
        self.action = action
        self.state = state
        self.instant_time = instant_time
        self.options = options or {}
        self.poll_interval = poll_interval
        self.after_instant = after_instant

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "base_path": self.base_path,
                "action": self.action,
                "state": self.state,
                "instant_time": self.instant_time,
                "options": self.options,
                "poll_interval": self.poll_interval,
                "after_instant": self.after_instant,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        from hudi_airflow.hooks import HudiTableHook

        hook = HudiTableHook(base_path=self.base_path, options=self.options)
        while True:
            # The timeline is read from storage with blocking calls: off the event loop.
            found = await asyncio.to_thread(
                hook.find_instant, self.action, self.state, self.instant_time, self.after_instant
            )
            if found is not None:
                yield TriggerEvent({"instant_time": found.timestamp, "action": found.action})
                return
            await asyncio.sleep(self.poll_interval)
