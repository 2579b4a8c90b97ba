"""Shared testbeds at scale (vsperf.pool): a pool of testbeds, many jobs from several controllers.

    PYTHONPATH=. .venv/bin/python bench/bench_pool.py [--testbeds 20] [--jobs 200] [--controllers 10]
        [--parallel 2] [--hold-s 0.3] [--repeat 20] [--ssh]

A pool file of TESTBEDS testbeds whose hosts are all `local`, each with a lock directory of its
own (to the locks, each is a host of its own). CONTROLLERS processes start at once, each running
JOBS / CONTROLLERS jobs, PARALLEL at a time: a job is vsperf's claim of the pool with
--testbed-wait (vsperf.pool.claim: the first free testbed, else a ticket in each testbed's queue
and a look every half second), HOLD_S on the testbed, then the claim's close (the lock given
back). Only the claim's connection to the hosts and the plan's preflight are stubbed (the
simulated DUT deploys nothing there); the locks, leases, queues and release are vsperf's own.
Each job records (on this machine's one clock) when it asked, when its lock was taken, when it
stopped using the testbed and when the lock was given back. Printed: double bookings (two jobs
on one testbed at once: must be 0), jobs that got no testbed (must be 0), the longest and median
wait, the time from a testbed's release to the next waiting job's start, and the lock's own cost
per run (claim + release of a free testbed, one job alone: target under 50 ms locally; with --ssh
also over SSH to a throwaway sshd on 127.0.0.1, its connection included, needs root: target
under 1 s).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))

import vsperf.pool.claim as claim_module
from vsperf.executor import CommandLog, Executor, LocalExecutor
from vsperf.host.journal import Journal
from vsperf.host.workdir import new_run_id
from vsperf.pool.claim import ClaimRequest, claim_testbed
from vsperf.registry import Registries
from vsperf.remote.ssh import SshExecutor
from vsperf.testbed.file import load_testbed
from vsperf.testbed.model import Testbed

TARGET_LOCAL_MS = 50.0
TARGET_SSH_MS = 1000.0


@dataclass
class _Host:
    name: str
    executor: Executor


@dataclass
class _Hosts:
    """What the claim uses of RunHosts: the testbed, its hosts, the run's journal."""

    testbed: Testbed
    hosts: list[_Host]
    journal: Journal
    is_lab: bool = False
    closed: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[_Host]:
        return iter(self.hosts)

    def release(self) -> None:
        pass

    def close_connections(self) -> None:
        for host in self.hosts:
            if isinstance(host.executor, SshExecutor):
                host.executor.close()


def _stubbed(state_root: Path) -> None:
    """The claim with the hosts' connection and the plan's checks stubbed (nothing to deploy)."""

    def open_hosts(_plan: Any, testbed_file: str, *, run_id: str, command_log: CommandLog,
                   claim: Any = None, **_kw: Any) -> _Hosts:
        testbed = load_testbed(Path(testbed_file))
        hosts = [_Host(h.name, LocalExecutor(command_log) if h.ssh is None else SshExecutor(h.ssh, command_log))
                 for h in testbed.hosts]
        for host in hosts:
            if isinstance(host.executor, SshExecutor):
                host.executor.connect()
        run = _Hosts(testbed, hosts, Journal(run_id, root=state_root))
        if claim is not None:
            try:
                claim(run)
            except BaseException:
                run.close_connections()
                raise
        return run

    claim_module.open_hosts = open_hosts  # type: ignore[assignment]
    claim_module.check_plan = lambda *_a, **_kw: None  # type: ignore[assignment]


def _request(testbeds: tuple[str, ...], wait_s: float, state_root: Path) -> ClaimRequest:
    return ClaimRequest([], cast(Registries, None), testbeds, new_run_id(), CommandLog(None),
                        results_dir=state_root, wait_s=wait_s, lease_s=60.0)


def _write_pool(work: Path, count: int, ssh_host: str = "") -> Path:
    names = []
    for i in range(count):
        host = ssh_host or "local: {lock_dir: %s}" % (work / "locks" / f"bed{i:02d}")
        name = "local" if not ssh_host else "dut"
        (work / f"bed{i:02d}.yaml").write_text(
            f"hosts:\n  {host}\ndut_host: {name}\ntrafficgen_host: {name}\n"
            f"ports:\n  - dut: {{interface: bp{i:02d}d0}}\n    trafficgen: {{interface: bp{i:02d}g0}}\n")
        names.append(f"bed{i:02d}.yaml")
    pool = work / "pool.yaml"
    pool.write_text(f"testbeds: [{', '.join(names)}]\n")
    return pool


def worker(pool: Path, jobs: int, parallel: int, hold_s: float, state_root: Path) -> int:
    """One controller: `jobs` claims of `pool`, `parallel` at a time; one JSON line each."""
    _stubbed(state_root)
    lock = threading.Lock()
    todo = list(range(jobs))

    def one() -> None:
        while True:
            with lock:
                if not todo:
                    return
                todo.pop()
            asked = time.time()
            record: dict[str, Any] = {"asked": asked}
            try:
                claim = claim_testbed(_request((str(pool),), 3600.0, state_root))
            except Exception as exc:  # a job that got no testbed: counted, said
                record["error"] = str(exc)
            else:
                record |= {"testbed": claim.testbed, "start": time.time()}
                time.sleep(hold_s)
                record["end"] = time.time()
                claim.close()
                record["released"] = time.time()
            with lock:
                print(json.dumps(record), flush=True)

    threads = [threading.Thread(target=one) for _ in range(parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return 0


def _pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def scale(work: Path, args: argparse.Namespace) -> None:
    pool = _write_pool(work, args.testbeds)
    per = [args.jobs // args.controllers + (1 if i < args.jobs % args.controllers else 0)
           for i in range(args.controllers)]
    started = time.monotonic()
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(pool), "--jobs", str(n), "--parallel",
                               str(args.parallel), "--hold-s", str(args.hold_s), "--state-root", str(work / "state")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in per]
    records: list[dict[str, Any]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=3600)
        if proc.returncode != 0:
            print(f"controller exited {proc.returncode}: {err[-500:]}", file=sys.stderr)
        records += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    wall_s = time.monotonic() - started
    done = [r for r in records if "testbed" in r]
    by_bed: dict[str, list[dict[str, Any]]] = {}
    for r in done:
        by_bed.setdefault(r["testbed"], []).append(r)
    double, gaps = 0, []
    for runs in by_bed.values():
        runs.sort(key=lambda r: r["start"])
        for a, b in itertools.pairwise(runs):
            if b["start"] < a["end"]:
                double += 1
            if b["asked"] < a["released"]:  # b was waiting when a gave the testbed back
                gaps.append(max(b["start"] - a["released"], 0.0))
    waits = [r["start"] - r["asked"] for r in done]
    print(f"{args.jobs} jobs from {args.controllers} controllers ({args.parallel} at a time each, {args.hold_s:g} s on "
          f"a testbed) over a pool of {args.testbeds}: {wall_s:.1f} s wall")
    print(f"  jobs that got a testbed: {len(done)} of {len(records)} recorded "
          f"({len(records) - len(done)} without; starved: {args.jobs - len(done)})")
    print(f"  double bookings (two jobs on one testbed at once): {double}")
    print(f"  testbeds used: {len(by_bed)}; jobs per testbed: min {min(map(len, by_bed.values()), default=0)}, "
          f"max {max(map(len, by_bed.values()), default=0)}")
    if waits:
        print(f"  wait for a testbed: median {statistics.median(waits):.2f} s, p95 {_pct(waits, 0.95):.2f} s, "
              f"max {max(waits):.2f} s")
    if gaps:
        print(f"  release -> next waiting job's start: median {statistics.median(gaps) * 1000:.0f} ms, "
              f"p95 {_pct(gaps, 0.95) * 1000:.0f} ms, max {max(gaps) * 1000:.0f} ms ({len(gaps)} hand-overs)")
    for r in records:
        if "error" in r:
            print(f"  no testbed: {r['error']}")
            break


def overhead(pool: Path, repeat: int, state_root: Path) -> list[float]:
    """Claim + release of the pool's first (free) testbed, one job alone: ms each."""
    _stubbed(state_root)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        claim = claim_testbed(_request((str(pool),), 0.0, state_root))
        claim.close()
        times.append((time.perf_counter() - t0) * 1000)
    return times


@contextmanager
def _sshd(work: Path) -> Iterator[str]:
    from sshd_hosts import sshd_skip_reason, start_sshd  # the tests' throwaway sshd (bench only)

    reason = sshd_skip_reason()
    if reason:
        raise SystemExit(f"bench_pool --ssh: {reason}")
    srv = start_sshd(work / "sshd", "bench")
    try:
        yield (f"dut: {{address: {srv.address}, port: {srv.port}, key_file: {srv.client_key}, "
               f"known_hosts_file: {srv.known_hosts}, lock_dir: {work / 'ssh-locks'}}}")
    finally:
        srv.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--testbeds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--controllers", type=int, default=10)
    parser.add_argument("--parallel", type=int, default=2, help="jobs at a time per controller")
    parser.add_argument("--hold-s", type=float, default=0.3)
    parser.add_argument("--repeat", type=int, default=20, help="runs timed for the lock's cost")
    parser.add_argument("--ssh", action="store_true", help="also time the lock over SSH (root: sshd)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--state-root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        return worker(args.worker, args.jobs, args.parallel, args.hold_s, args.state_root)
    with tempfile.TemporaryDirectory(prefix="vsperf-bench-pool-") as tmp:
        work = Path(tmp)
        (work / "state").mkdir()
        (work / "alone").mkdir()
        local = overhead(_write_pool(work / "alone", 1), args.repeat, work / "state")
        verdict = "met" if statistics.median(local) < TARGET_LOCAL_MS else "MISSED"
        print(f"lock cost per run (claim + release, free testbed, local host), median of {args.repeat}: "
              f"{statistics.median(local):.1f} ms, max {max(local):.1f} ms (target < {TARGET_LOCAL_MS:g} ms: "
              f"{verdict})")
        if args.ssh:
            (work / "ssh").mkdir()
            with _sshd(work) as host:
                remote = overhead(_write_pool(work / "ssh", 1, host), args.repeat, work / "state")
            verdict = "met" if statistics.median(remote) < TARGET_SSH_MS else "MISSED"
            print(f"lock cost per run over SSH (the SSH connection included), median of {args.repeat}: "
                  f"{statistics.median(remote):.1f} ms, max {max(remote):.1f} ms (target < {TARGET_SSH_MS:g} ms: "
                  f"{verdict})")
        scale(work, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
