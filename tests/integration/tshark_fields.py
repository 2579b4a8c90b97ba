"""Reading a capture back with tshark (Debian's `tshark`), as a user checks one: the fields of
every frame, checksums validated by tshark itself."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

# tshark's checksum status: 0 bad, 1 good, 2 unverified, 3 not present (a zero UDP checksum)
GOOD = "1"


def tshark_reason() -> str | None:
    """Why captures cannot be read here (None: they can)."""
    return None if shutil.which("tshark") else "tshark missing: apt-get install tshark"


def frames(pcap: Path, *fields: str) -> list[dict[str, list[str]]]:
    """`fields` of every frame of `pcap`: each field's occurrences, outermost header first."""
    argv = ["tshark", "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
            "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-E", "separator=/t"]
    for field in fields:
        argv += ["-e", field]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout
    rows = [line.split("\t") for line in out.splitlines() if line.strip()]
    return [{f: (v.split(",") if v else []) for f, v in zip(fields, row, strict=True)} for row in rows]
