"""The command line: `vsperf` (main.py) and its subcommands."""
