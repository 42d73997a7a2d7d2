"""Table services: compaction, clustering, cleaning, archival, rollback, savepoints and
restore, bootstrap, and the removal of Apache Hudi's metadata table."""

from hudi_core.services.cleaner import CleanBacklog
from hudi_core.services.clustering import clustering_due
from hudi_core.services.compaction_trigger import compaction_due
from hudi_core.services.planned_service import PlannedService

__all__ = ["CleanBacklog", "PlannedService", "clustering_due", "compaction_due"]
