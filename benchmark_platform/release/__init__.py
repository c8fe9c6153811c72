"""release stage core."""
