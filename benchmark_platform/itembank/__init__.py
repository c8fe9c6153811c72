"""Item banks: existing items (JSONL, CSV or Parquet) imported into `items` per discipline, with provenance."""
