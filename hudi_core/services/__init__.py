"""Table services: compaction, cleaning, archival, rollback, savepoints and restore, and the
removal of Apache Hudi's metadata table (no clustering or bootstrap yet)."""

from hudi_core.services.compaction_trigger import compaction_due

__all__ = ["compaction_due"]
