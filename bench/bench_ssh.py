"""Per-command cost of the SSH executor against the local one, side by side (needs root: sshd).

    PYTHONPATH=. .venv/bin/python bench/bench_ssh.py [--repeat N] [--commands-log FILE] [--phy2phy N]

Starts a throwaway sshd on 127.0.0.1 (as the tests do), then times, interleaved so that both
see the same machine load: `true` through LocalExecutor.run and SshExecutor.run; a background
`sleep` spawned, signalled and reaped; an SFTP put of 1 MiB. Prints medians, the per-command
SSH overhead (target: median < 5 ms) and, given a run's commands.log, what that many commands
would add over SSH. With --phy2phy N: the wall time of the same `vsperf phy2phy_tput` (linux-bridge,
vsgen, 64 B, 1 s trials) on the local lab and on a testbed of two sshd hosts in namespaces cabled by
veth pairs (DUT on one, vsgen on the other), N runs each, interleaved.
The remote command goes through the remote user's login shell: its start-up
files count (the test sshd sets SHLVL=1 so that bash skips ~/.bashrc; see tests/integration/sshd_hosts.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
from sshd_hosts import SshdServer, make_host_netns, remove_netns, sshd_skip_reason, start_sshd

from vsperf.executor import Executor, LocalExecutor
from vsperf.remote.connection import SshHost
from vsperf.remote.ssh import SshExecutor

TARGET_OVERHEAD_MS = 5.0


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def spawn_stop(executor: Executor) -> None:
    proc = executor.spawn(["sleep", "30"])
    proc.terminate()
    proc.wait(timeout=10)


def vsperf_run(work: Path, name: str, *extra: str) -> tuple[float, float]:
    """Wall time (s) and throughput_rx_fps of one `vsperf phy2phy_tput` run."""
    results = work / name
    argv = [sys.executable, "-m", "vsperf", "phy2phy_tput", "--vswitch", "linux-bridge", "--trafficgen", "vsgen",
            "--test-params", "TRAFFICGEN_DURATION=1;TRAFFICGEN_PKT_SIZES=(64,)", "--report-format", "md",
            "--results-dir", str(results), *extra]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=work, timeout=600)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: vsperf exited {proc.returncode}: {proc.stderr[-2000:]}")
    data = json.loads((results / "results.json").read_text())
    return wall, float(data["tests"][0]["results"][0]["metrics"]["throughput_rx_fps"])


def phy2phy_local_vs_ssh(work: Path, repeat: int) -> None:
    """The same phy2phy_tput run on the local lab and on two SSH hosts (see the module docstring)."""
    tag = f"v9bn{os.getpid() % 1000}"
    ns = {"a": f"{tag}ha", "b": f"{tag}hb"}
    ctl = {"a": ("198.18.104.1", "198.18.104.2"), "b": ("198.18.104.9", "198.18.104.10")}
    cables = [(f"{tag}a0", f"{tag}b0"), (f"{tag}a1", f"{tag}b1")]
    servers: dict[str, SshdServer] = {}

    def ip(*argv: str) -> None:
        subprocess.run(["ip", *argv], check=True, capture_output=True)

    try:
        for host in ("a", "b"):
            make_host_netns(ns[host], f"{tag}c{host}", *ctl[host])
            servers[host] = start_sshd(work / host, f"host{host}", address=ctl[host][1], port=2222, netns=ns[host])
        for a_if, b_if in cables:
            ip("link", "add", a_if, "netns", ns["a"], "type", "veth", "peer", "name", b_if, "netns", ns["b"])
            ip("-n", ns["b"], "link", "set", b_if, "up")
            ip("-n", ns["a"], "link", "set", a_if, "up")
            # like a NIC, the DUT's end takes XDP frames (veth: GRO on), as the local lab's switch ends do
            subprocess.run(["ip", "netns", "exec", ns["a"], "ethtool", "-K", a_if, "gro", "on"], check=True,
                           capture_output=True)
        a, b = servers["a"], servers["b"]
        testbed = work / "bench_testbed.yaml"
        testbed.write_text(textwrap.dedent(f"""
            hosts:
              dut{tag}: {{address: {a.address}, port: {a.port}, key_file: {a.client_key},
                        known_hosts_file: {a.known_hosts}}}
              gen{tag}: {{address: {b.address}, port: {b.port}, key_file: {b.client_key},
                        known_hosts_file: {b.known_hosts}}}
            dut_host: dut{tag}
            trafficgen_host: gen{tag}
            ports:
              - {{dut: {{interface: {cables[0][0]}}}, trafficgen: {{interface: {cables[0][1]}}}}}
              - {{dut: {{interface: {cables[1][0]}}}, trafficgen: {{interface: {cables[1][1]}}}}}
            """))
        walls: dict[str, list[float]] = {"local": [], "ssh": []}
        fps: dict[str, list[float]] = {"local": [], "ssh": []}
        for i in range(repeat):  # interleaved: both see the same machine load
            for kind, extra in (("local", ()), ("ssh", ("--testbed", str(testbed)))):
                wall, rate = vsperf_run(work, f"{kind}{i}", *extra)
                walls[kind].append(wall)
                fps[kind].append(rate)
    finally:
        for srv in servers.values():
            srv.stop()
        for host in ("a", "b"):
            remove_netns(ns[host], f"{tag}c{host}")
    med = {k: statistics.median(v) for k, v in walls.items()}
    print(f"phy2phy_tput (linux-bridge, vsgen, 64 B, 1 s trials) wall time, median of {repeat}: "
          f"local lab {med['local']:.2f} s, testbed over SSH {med['ssh']:.2f} s "
          f"(ratio {med['ssh'] / med['local']:.2f}x; target <= 1.10x)")
    print(f"  throughput_rx_fps median: local {statistics.median(fps['local']):,.0f}, "
          f"ssh {statistics.median(fps['ssh']):,.0f} (one shared machine: the same veth/bridge path)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--commands-log", type=Path, help="a run's commands.log: estimate its SSH cost")
    parser.add_argument("--phy2phy", type=int, default=0, metavar="N",
                        help="also time N phy2phy_tput runs local vs on a two-host SSH testbed")
    args = parser.parse_args()
    reason = sshd_skip_reason()
    if reason:
        print(f"bench_ssh: {reason}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="vsperf-bench-ssh-") as tmp:
        work = Path(tmp)
        srv = start_sshd(work / "sshd", "bench")
        ssh = SshExecutor(SshHost("bench", srv.address, srv.port, "root", srv.client_key, srv.known_hosts))
        local = LocalExecutor()
        try:
            connect_ms = timed(ssh.connect)
            for _ in range(10):  # warm both paths up
                local.run(["true"])
                ssh.run(["true"])
            runs: dict[str, list[float]] = {"local": [], "ssh": []}
            for _ in range(args.repeat):
                runs["local"].append(timed(lambda: local.run(["true"])))
                runs["ssh"].append(timed(lambda: ssh.run(["true"])))
            diffs = [s - lo for s, lo in zip(runs["ssh"], runs["local"], strict=True)]
            spawns = {"local": [], "ssh": []}  # type: dict[str, list[float]]
            for _ in range(max(args.repeat // 10, 5)):
                spawns["local"].append(timed(lambda: spawn_stop(local)))
                spawns["ssh"].append(timed(lambda: spawn_stop(ssh)))
            blob = work / "blob"
            blob.write_bytes(os.urandom(1 << 20))
            put_ms = statistics.median(timed(lambda: ssh.put(blob, str(work / "copy"))) for _ in range(5))
        finally:
            ssh.close()
            srv.stop()
    med = {k: statistics.median(v) for k, v in runs.items()}
    overhead = statistics.median(diffs)
    print(f"connect (TCP + SSH handshake + key auth): {connect_ms:.1f} ms, once per host and run")
    print(f"run(['true']) median over {args.repeat}: local {med['local']:.2f} ms, ssh {med['ssh']:.2f} ms "
          f"(ratio {med['ssh'] / med['local']:.2f}x)")
    verdict = "met" if overhead < TARGET_OVERHEAD_MS else "MISSED"
    print(f"per-command SSH overhead (median of paired differences): {overhead:.2f} ms "
          f"(target < {TARGET_OVERHEAD_MS:g} ms: {verdict})")
    sp = {k: statistics.median(v) for k, v in spawns.items()}
    print(f"spawn + SIGTERM + reap median: local {sp['local']:.2f} ms, ssh {sp['ssh']:.2f} ms")
    print(f"SFTP put 1 MiB median: {put_ms:.1f} ms ({1000 / put_ms:.0f} MiB/s)")
    if args.commands_log is not None:
        count = sum(1 for line in args.commands_log.read_text().splitlines() if line.strip())
        print(f"{args.commands_log}: {count} commands -> about {count * overhead / 1000:.2f} s added over SSH "
              f"(an estimate: per-command overhead x commands, not a measured remote run)")
    if args.phy2phy > 0:
        with tempfile.TemporaryDirectory(prefix="vsperf-bench-ssh-") as tmp:
            phy2phy_local_vs_ssh(Path(tmp), args.phy2phy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
