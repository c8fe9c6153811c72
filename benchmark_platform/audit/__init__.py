"""audit stage core."""
