"""The timeline of instants under .hoodie/."""

from hudi_core.timeline.active_timeline import ActiveTimeline
from hudi_core.timeline.instant import (
    BOOTSTRAP_INSTANTS,
    FULL_BOOTSTRAP_INSTANT,
    METADATA_BOOTSTRAP_INSTANT,
    Instant,
    State,
)
from hudi_core.timeline.instant_time import parse_instant_time

__all__ = [
    "BOOTSTRAP_INSTANTS",
    "FULL_BOOTSTRAP_INSTANT",
    "METADATA_BOOTSTRAP_INSTANT",
    "ActiveTimeline",
    "Instant",
    "State",
    "parse_instant_time",
]
