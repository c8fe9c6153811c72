"""generation stage core."""
