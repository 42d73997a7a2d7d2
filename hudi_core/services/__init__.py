"""Table services: compaction, cleaning, archival, rollback, savepoints and restore, and the
removal of Apache Hudi's metadata table (no clustering or bootstrap yet)."""
