"""vsgen's settings and the kernel it needs: how the engine transmits (VSGEN_PATH), on which
CPUs (VSGEN_CPUS, else its host's minus the switch's PMD CPUs), and Linux >= 5.18.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from vsperf.config.schema_vsgen import Path
from vsperf.host.cpus import sender_cpus

MIN_KERNEL = (5, 18)  # XDP live frames (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES), xdp.frags


def kernel_version(release: str) -> tuple[int, int]:
    """(major, minor) of a kernel release string such as "6.1.0-18-amd64"."""
    match = re.match(r"(\d+)\.(\d+)", release)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def transmit_cpus(settings: Mapping[str, Any], available: Sequence[int], *, switch_on_host: bool = True) -> list[int]:
    """CPUs of the transmit threads, direction i on the i-th (round robin).

    VSGEN_CPUS when set; else the CPUs the engine may use on its host (`available`) minus those
    the switch's PMD threads busy-poll when the switch runs on that host (`switch_on_host`;
    VSWITCH_PMD_CPU_MASK; the kernel bridge forwards in the sender's context and leaves every
    CPU usable). Pinning keeps one direction's frames on one receive queue, so that the receive
    program's per-stream counters are updated by one CPU.
    """
    return sender_cpus(settings, "VSGEN_CPUS", available, switch_on_host=switch_on_host)


def path_setting(settings: Mapping[str, Any]) -> Path:
    """The VSGEN_PATH setting: how the engine transmits (auto: XDP live frames when it works)."""
    path: Path = settings["VSGEN_PATH"]  # one of PATHS: the schema checked it
    return path
