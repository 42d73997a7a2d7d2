"""What a table is made of: file names, file groups and slices, write stats, commit metadata."""
