"""The `benchmark-platform` command. Each module here with `register(subparsers)` adds its subcommands."""
