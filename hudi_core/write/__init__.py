"""The write client: operations, tagging, bucket assignment, file writes, markers, commit."""
