"""The timeline of instants under .hoodie/."""

from hudi_core.timeline.active_timeline import ActiveTimeline
from hudi_core.timeline.instant import Instant, State

__all__ = ["ActiveTimeline", "Instant", "State"]
