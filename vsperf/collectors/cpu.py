"""Per-core system CPU utilisation over the traffic phase, with mpstat's columns.

Two readings of /proc/stat (start and end of the phase) of the DUT's host (this machine's read
directly; a testbed host's with `cat /proc/stat` through its executor, one command per reading,
parsed by the same code); each core's time split in percent:
%usr, %nice, %sys, %iowait, %irq, %soft, %steal, %guest, %gnice, %idle. Guest time is taken
out of %usr and %nice, as mpstat does (the kernel counts it in both).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vsperf.collectors.base import Collector, Statistics
from vsperf.collectors.pidstat import MIN_WINDOW_S

GROUP = "System CPU"
MPSTAT_COLUMNS = ("%usr", "%nice", "%sys", "%iowait", "%irq", "%soft", "%steal", "%guest", "%gnice", "%idle")
_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
PROC_STAT = Path("/proc/stat")

CpuTimes = dict[str, dict[str, int]]  # "all" / "0" / "1" ... -> field -> ticks


def parse_proc_stat(text: str) -> CpuTimes:
    """The cpu lines of /proc/stat: "all" for the total line, the core number for the others."""
    times: CpuTimes = {}
    for line in text.splitlines():
        words = line.split()
        if not words or not words[0].startswith("cpu"):
            continue
        name = words[0][3:] or "all"
        values = [int(w) for w in words[1:]]
        values += [0] * (len(_FIELDS) - len(values))  # old kernels have fewer fields
        times[name] = dict(zip(_FIELDS, values, strict=False))
    return times


def utilisation(first: CpuTimes, last: CpuTimes) -> dict[str, dict[str, float | None]]:
    """Per core (and "all"), mpstat's percentages between two readings (None: no tick passed)."""
    out: dict[str, dict[str, float | None]] = {}
    for core, end in last.items():
        start = first.get(core)
        if start is None:  # a core brought online during the phase
            continue
        delta = {k: max(0, end[k] - start[k]) for k in _FIELDS}
        # user and nice include guest and guest_nice; the total must not count them twice.
        total = sum(delta[k] for k in _FIELDS if k not in ("guest", "guest_nice"))
        parts = {
            "%usr": max(0, delta["user"] - delta["guest"]),
            "%nice": max(0, delta["nice"] - delta["guest_nice"]),
            "%sys": delta["system"],
            "%iowait": delta["iowait"],
            "%irq": delta["irq"],
            "%soft": delta["softirq"],
            "%steal": delta["steal"],
            "%guest": delta["guest"],
            "%gnice": delta["guest_nice"],
            "%idle": delta["idle"],
        }
        out[core] = {k: (round(100.0 * v / total, 2) if total > 0 else None) for k, v in parts.items()}
    return out


class CpuCollector(Collector):
    """Per-core system CPU utilisation during traffic (mpstat's columns, from /proc/stat)."""

    NAME = "cpu"
    ALIASES = ("mpstat",)
    REMOTE = True
    # The counters `start` and `stop` read, and the time between them (none before `start`).
    _first: CpuTimes | None = None
    _last: CpuTimes | None = None
    _window_s = 0.0

    def version(self) -> str:
        return "/proc/stat"

    def _read(self) -> CpuTimes:
        host = self.reads_host()
        if host is None:
            return parse_proc_stat(PROC_STAT.read_text(encoding="utf-8"))
        return parse_proc_stat(host.run(["cat", str(PROC_STAT)], timeout_s=10).stdout)

    def start(self) -> None:
        self._first, self._last = self._read(), None
        self._window_s = -time.monotonic()

    def stop(self) -> None:
        if self._first is not None and self._last is None:
            self._last = self._read()
            self._window_s += time.monotonic()

    def statistics(self) -> Statistics:
        # A phase shorter than a few clock ticks (a simulated DUT answers at once) has no
        # meaningful split: report nothing rather than a table of n/a.
        if self._first is None or self._last is None or self._window_s < MIN_WINDOW_S:
            return {}
        table: dict[str, Any] = dict(utilisation(self._first, self._last))
        return {GROUP: table}


def busiest_cores(table: Mapping[str, Mapping[str, Any]], idle_below_percent: float) -> list[tuple[str, float]]:
    """(core, %idle) of the cores (not "all") idle less than `idle_below_percent` of the phase."""
    busy = []
    for core, row in table.items():
        idle = row.get("%idle")
        if core != "all" and isinstance(idle, int | float) and idle < idle_below_percent:
            busy.append((core, float(idle)))
    return sorted(busy)
