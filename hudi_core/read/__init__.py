"""Reading tables: the file system view and snapshot, time-travel and incremental queries."""
