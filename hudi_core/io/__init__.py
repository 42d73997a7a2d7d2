"""Reading and writing the files under a Hudi table: base files (their footers
and bloom filters) and the Hudi log format."""
