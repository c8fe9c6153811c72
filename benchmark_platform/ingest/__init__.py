"""ingest stage core."""
