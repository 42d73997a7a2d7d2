"""Table services: rollback (and later compaction, cleaning, archival, savepoints, clustering)."""
