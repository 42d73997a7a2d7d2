"""Reading and writing the files under a Hudi table: base files, their footers and filters."""
