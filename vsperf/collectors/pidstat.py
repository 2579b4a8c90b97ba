"""Per-process statistics of the DUT's processes, with exactly the columns of `pidstat -urd -h`
that VSPERF's reports show (seeds/001): UID, PID, %usr, %system, %guest, %CPU, CPU, minflt/s,
majflt/s, VSZ, RSS, %MEM, kB_rd/s, kB_wr/s, kB_ccwr/s.

The processes: the deployment's (ovs-vswitchd, ovsdb-server, testpmd, ...) and the load
generator's, with every descendant (stress-ng's workers), plus COLLECTOR_PROCESSES found by name.
They are read from /proc (psutil finds them and their owners) at the start of the traffic
phase, every COLLECTOR_INTERVAL_S during it, and at its end. On a testbed they are the DUT
host's, read through its executor and parsed by the same code: `cat /proc/PID/stat /proc/PID/io`,
one command per reading (`vsperf.collectors.procps` finds them with `ps`). Rates are over the
whole phase, as pidstat's "Average" line; VSZ and RSS are averaged over the samples. %CPU is
summed over cores (it exceeds 100 for a multi-threaded process), as pidstat without -I.
A watched process that exits is followed when the DUT restarted it (rfc2544_reset restarts
ovs-vswitchd): the target's current PIDs are read again and the new process is watched too,
each shown in its own group ("Process: NAME (PID N)").
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from vsperf.collectors.base import Collector, CollectorTarget, Statistics
from vsperf.collectors.procps import HostFacts, host_facts, host_processes
from vsperf.errors import VsperfError
from vsperf.executor import Executor
from vsperf.host.workdir import RunContext

log = logging.getLogger(__name__)

PIDSTAT_COLUMNS = (
    "UID", "PID", "%usr", "%system", "%guest", "%CPU", "CPU", "minflt/s", "majflt/s",
    "VSZ", "RSS", "%MEM", "kB_rd/s", "kB_wr/s", "kB_ccwr/s",
)
# Below this the clock-tick resolution of /proc (10 ms at CLK_TCK 100) makes rates meaningless:
# they are reported as not measured (None) rather than as noise.
MIN_WINDOW_S = 0.5
PROC = Path("/proc")


@dataclass(frozen=True)
class ProcSample:
    """One reading of /proc/PID/stat and /proc/PID/io."""

    time_s: float  # monotonic clock
    start_ticks: int  # process start time since boot: tells a reused PID apart
    utime_ticks: int  # user time, guest time included (as the kernel counts it)
    stime_ticks: int
    guest_ticks: int
    minflt: int
    majflt: int
    processor: int  # CPU the process last ran on
    vsize_bytes: int
    rss_pages: int
    read_bytes: int | None = None  # None: /proc/PID/io not readable (another user's process)
    write_bytes: int | None = None
    cancelled_write_bytes: int | None = None


def parse_stat(text: str) -> list[str]:
    """Fields of /proc/PID/stat, 1-based as in proc(5) (index 0 is unused). The command name
    (field 2) may hold spaces and parentheses, so it is cut at the last ')'."""
    open_at, close_at = text.index("("), text.rindex(")")
    return ["", text[:open_at].strip(), text[open_at + 1 : close_at], *text[close_at + 1 :].split()]


def sample_from_text(stat_text: str, io_text: str | None, now: float) -> ProcSample:
    """A sample from the text of /proc/PID/stat and /proc/PID/io (None: not readable), wherever it
    was read; raises ProcessLookupError for a zombie."""
    f = parse_stat(stat_text)
    if f[3] in ("Z", "X"):  # exited, not yet reaped by its parent (vsperf, for the DUT's processes)
        raise ProcessLookupError(f"process {f[1]} has exited")
    io: dict[str, int] = {}
    try:
        for line in (io_text or "").splitlines():
            key, _, value = line.partition(":")
            io[key.strip()] = int(value)
    except ValueError:
        pass
    return ProcSample(
        time_s=now,
        start_ticks=int(f[22]),
        utime_ticks=int(f[14]),
        stime_ticks=int(f[15]),
        guest_ticks=int(f[43]) if len(f) > 43 else 0,
        minflt=int(f[10]),
        majflt=int(f[12]),
        processor=int(f[39]),
        vsize_bytes=int(f[23]),
        rss_pages=int(f[24]),
        read_bytes=io.get("read_bytes"),
        write_bytes=io.get("write_bytes"),
        cancelled_write_bytes=io.get("cancelled_write_bytes"),
    )


def read_sample(pid: int, *, proc: Path = PROC, clock: Callable[[], float] = time.monotonic) -> ProcSample:
    """Read process `pid` of this machine now; raises OSError (FileNotFoundError,
    ProcessLookupError) when it is gone or a zombie."""
    now = clock()
    stat = (proc / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    try:
        io: str | None = (proc / str(pid) / "io").read_text(encoding="utf-8")
    except PermissionError:
        io = None
    return sample_from_text(stat, io, now)


def read_host_sample(executor: Executor, pid: int, *, clock: Callable[[], float] = time.monotonic) -> ProcSample:
    """Read process `pid` of the executor's host now, with one command (`cat` of its stat and io
    files); raises ProcessLookupError when it is gone or a zombie."""
    now = clock()
    # cat prints what it can: stat alone when io is another user's; nothing when the process is gone.
    out = executor.run(["cat", f"/proc/{pid}/stat", f"/proc/{pid}/io"], check=False, timeout_s=10).stdout
    stat, _, io = out.partition("\n")
    if not stat.strip():
        raise ProcessLookupError(f"process {pid} is not running on host {executor.host}")
    return sample_from_text(stat, io or None, now)


def _rate(first: int | None, last: int | None, seconds: float, scale: float = 1.0) -> float | None:
    if first is None or last is None or seconds < MIN_WINDOW_S:
        return None
    return round(max(0, last - first) / scale / seconds, 2)


def pidstat_row(
    samples: Sequence[ProcSample], *, uid: int, pid: int, clk_tck: int, page_size: int, mem_total_kb: int
) -> dict[str, Any]:
    """pidstat's columns over `samples` (oldest first, at least one): rates between the first and
    the last sample, VSZ and RSS (kB) averaged over all of them, CPU from the last one."""
    if not samples:
        raise ValueError("pidstat_row needs at least one sample")
    first, last = samples[0], samples[-1]
    seconds = last.time_s - first.time_s
    ticks = clk_tck / 100.0  # ticks in 1 % of a second

    def cpu(a: int, b: int) -> float | None:
        return _rate(a, b, seconds, ticks)

    vsz_kb = round(sum(s.vsize_bytes for s in samples) / len(samples) / 1024)
    rss_kb = round(sum(s.rss_pages for s in samples) * page_size / len(samples) / 1024)
    return {
        "UID": uid,
        "PID": pid,
        # pidstat's %usr leaves guest time out; %CPU is user + system (guest is part of user).
        "%usr": cpu(first.utime_ticks - first.guest_ticks, last.utime_ticks - last.guest_ticks),
        "%system": cpu(first.stime_ticks, last.stime_ticks),
        "%guest": cpu(first.guest_ticks, last.guest_ticks),
        "%CPU": cpu(first.utime_ticks + first.stime_ticks, last.utime_ticks + last.stime_ticks),
        "CPU": last.processor,
        "minflt/s": _rate(first.minflt, last.minflt, seconds),
        "majflt/s": _rate(first.majflt, last.majflt, seconds),
        "VSZ": vsz_kb,
        "RSS": rss_kb,
        "%MEM": round(100.0 * rss_kb / mem_total_kb, 2) if mem_total_kb > 0 else None,
        "kB_rd/s": _rate(first.read_bytes, last.read_bytes, seconds, 1024.0),
        "kB_wr/s": _rate(first.write_bytes, last.write_bytes, seconds, 1024.0),
        "kB_ccwr/s": _rate(first.cancelled_write_bytes, last.cancelled_write_bytes, seconds, 1024.0),
    }


@dataclass
class _Tracked:
    name: str
    pid: int
    uid: int
    samples: list[ProcSample] = field(default_factory=list)
    gone: bool = False


def _uid(pid: int) -> int:
    try:
        return int(psutil.Process(pid).uids().real)
    except psutil.Error:
        return -1


def find_processes(target: CollectorTarget, *, self_pid: int | None = None) -> list[tuple[str, int]]:
    """(name, PID) of every process to watch: the target's PIDs with their descendants, then
    processes named like COLLECTOR_PROCESSES (by process name or executable basename)."""
    found: dict[int, str] = {}
    for name, pid in target.pids.items():
        try:
            proc = psutil.Process(pid)
            found.setdefault(pid, name)
            for child in proc.children(recursive=True):
                found.setdefault(child.pid, child.name())
        except psutil.Error as exc:
            log.warning("pidstat: %s (PID %d) is not running: %s", name, pid, exc)
    wanted = set(target.process_names)
    if wanted:
        for proc in psutil.process_iter(["name", "cmdline"]):
            if proc.pid == (self_pid or os.getpid()) or proc.pid in found:
                continue
            cmdline = proc.info.get("cmdline") or []
            names = {proc.info.get("name") or "", os.path.basename(cmdline[0]) if cmdline else ""}
            match = next((n for n in sorted(names & wanted)), None)
            if match:
                found[proc.pid] = match
        missing = wanted - set(found.values())
        for name in sorted(missing):
            log.warning("pidstat: no process named %s (COLLECTOR_PROCESSES) is running", name)
    return [(name, pid) for pid, name in found.items()]


class PidstatCollector(Collector):
    """Per-process CPU, page faults, memory and I/O of the DUT (pidstat's columns)."""

    NAME = "pidstat"
    ALIASES = ("Pidstat",)
    REMOTE = True

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext, target: CollectorTarget) -> None:
        names = tuple(str(n) for n in settings["COLLECTOR_PROCESSES"])
        super().__init__(settings, ctx, replace(target, process_names=target.process_names + names))
        self.interval_s = float(settings["COLLECTOR_INTERVAL_S"])
        self._tracked: list[_Tracked] = []
        self._lost: list[_Tracked] = []  # exited during the phase, not (yet) followed to a new process
        self._pids: dict[str, int] = dict(self.target.pids)  # the target's PIDs last looked at
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._clk_tck = os.sysconf("SC_CLK_TCK")
        self._page_size = os.sysconf("SC_PAGE_SIZE")
        self._host_facts: HostFacts | None = None  # the DUT host's, read at the first start there

    def version(self) -> str:
        if self.reads_host() is not None:
            return "/proc (cat) and ps (procps)"
        return f"psutil {psutil.__version__} and /proc"

    def _read(self, pid: int) -> ProcSample:
        host = self.reads_host()
        return read_sample(pid) if host is None else read_host_sample(host, pid)

    def _find(self, target: CollectorTarget | None = None) -> list[_Tracked]:
        target = target or self.target
        host = self.reads_host()
        if host is None:
            return [_Tracked(name, pid, _uid(pid)) for name, pid in find_processes(target)]
        if self._host_facts is None:
            self._host_facts = host_facts(host)
        found, uids = host_processes(host, target.pids, target.process_names)
        return [_Tracked(name, pid, uids.get(pid, -1)) for name, pid in found]

    def _sample(self, tracked: _Tracked) -> bool:
        """Add a sample of `tracked`; False (and marked gone) when it has exited."""
        try:
            sample = self._read(tracked.pid)
        except OSError:
            tracked.gone = True
            return False
        if tracked.samples and sample.start_ticks != tracked.samples[0].start_ticks:
            tracked.gone = True  # the PID now belongs to another process
            return False
        tracked.samples.append(sample)
        return True

    def _follow(self) -> None:
        """Watch the processes that replaced lost ones: when the target's current PIDs changed
        (the DUT restarted its daemon, rfc2544_reset), the new processes they name. A restart
        may still be under way: what nothing replaced yet stays lost until the phase ends."""
        pids = dict(self.target.current_pids()) if self.target.current_pids is not None else self._pids
        if pids == self._pids:
            return
        self._pids = pids
        watched = {t.pid for t in self._tracked if not t.gone}
        new = [t for t in self._find(replace(self.target, pids=pids)) if t.pid not in watched and self._sample(t)]
        self._tracked += new
        for tracked in new:
            lost = next((t for t in self._lost if t.name == tracked.name), None)
            if lost is not None:
                self._lost.remove(lost)
                log.info("pidstat: %s (PID %d) restarted as PID %d: following it", lost.name, lost.pid, tracked.pid)

    def _sample_all(self, *, final: bool = False) -> None:
        with self._lock:
            self._lost += [t for t in self._tracked if not t.gone and not self._sample(t)]
            if self._lost:
                self._follow()
            if final:
                for tracked in self._lost:
                    log.warning("pidstat: %s (PID %d) exited during traffic", tracked.name, tracked.pid)
                self._lost = []

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._sample_all()
            except VsperfError as exc:  # a testbed host lost: the test fails on it, not this thread
                log.warning("pidstat: sampling stopped: %s", exc)
                return

    def start(self) -> None:
        self.stop()
        self._tracked, self._lost, self._pids = self._find(), [], dict(self.target.pids)
        self._sample_all()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="vsperf-pidstat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        if thread.ident is not None or thread.is_alive():
            thread.join()
        # else its start() was interrupted (a signal) before it ran: it sees _stop when it does
        self._sample_all(final=True)

    def statistics(self) -> Statistics:
        counts: dict[str, int] = {}
        for tracked in self._tracked:
            counts[tracked.name] = counts.get(tracked.name, 0) + 1
        facts = self._host_facts if self.reads_host() is not None else None
        if facts is None:
            facts = HostFacts(self._clk_tck, self._page_size, int(psutil.virtual_memory().total // 1024))
        stats: Statistics = {}
        for tracked in sorted(self._tracked, key=lambda t: (t.name, t.pid)):
            if not tracked.samples:
                continue
            group = f"Process: {tracked.name}"
            if counts[tracked.name] > 1:
                group += f" (PID {tracked.pid})"
            stats[group] = pidstat_row(
                tracked.samples,
                uid=tracked.uid,
                pid=tracked.pid,
                clk_tck=facts.clk_tck,
                page_size=facts.page_size_bytes,
                mem_total_kb=facts.mem_total_kb,
            )
        return stats
