"""Source adapters: one config class per kind of source, each reading through a fetcher (see base.py)."""
