"""The `cairn` command line."""
