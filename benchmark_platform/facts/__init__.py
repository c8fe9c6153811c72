"""facts stage core."""
