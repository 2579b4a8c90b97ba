"""The bounds of everything vsperf reads, stated once (docs/limits.rst lists them for users).

Each bound is far above what a real file or value holds and low enough that a careless or hostile
input is refused in well under a second and a few tens of MiB of memory, before anything runs.
"""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB

# Files, in bytes on disk.
SETTINGS_FILE_MAX_BYTES = 1 * MIB  # --conf-file, test-case files (-f, -d, TEST_CASE_FILES), testbed files
KNOWN_HOSTS_MAX_BYTES = 16 * MIB  # an SSH known_hosts file (a big site's holds a few thousand hosts)
KEY_FILE_MAX_BYTES = 1 * MIB  # an SSH private key file
RESULTS_MAX_BYTES = 64 * MIB  # results.json (a long campaign's is a few MiB)

# One value of --test-params or of an environment variable, in characters (Linux caps one
# command-line argument at 128 KiB anyway).
VALUE_MAX_CHARS = 64 * KIB

# Parsed documents (YAML, JSON, Python literals).
MAX_NODES = 200_000  # values (mappings, lists, scalars) of one document, YAML aliases expanded
MAX_DEPTH = 64  # nesting of mappings and lists in a settings value, a test-case or testbed file
RESULTS_MAX_DEPTH = 100  # nesting in results.json (vsperf writes about 10 levels)
RESULTS_MAX_NODES = 10_000_000  # values in results.json (a 64 MiB file of real results holds ~5 million)


def size_text(size_bytes: int) -> str:
    """`size_bytes` as a person reads it: '1 MiB', '300 KiB', '17 bytes'."""
    for unit, factor in (("GiB", 1024 * MIB), ("MiB", MIB), ("KiB", KIB)):
        if size_bytes >= factor:
            value = size_bytes / factor
            return f"{value:.0f} {unit}" if value >= 10 or value.is_integer() else f"{value:.1f} {unit}"
    return f"{size_bytes} bytes"
