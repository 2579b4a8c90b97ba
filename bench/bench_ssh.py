"""Per-command cost of the SSH executor against the local one, side by side (needs root: sshd).

    PYTHONPATH=. .venv/bin/python bench/bench_ssh.py [--repeat N] [--commands-log FILE]

Starts a throwaway sshd on 127.0.0.1 (as the tests do), then times, interleaved so that both
see the same machine load: `true` through LocalExecutor.run and SshExecutor.run; a background
`sleep` spawned, signalled and reaped; an SFTP put of 1 MiB. Prints medians, the per-command
SSH overhead (target: median < 5 ms) and, given a run's commands.log, what that many commands
would add over SSH. The remote command goes through the remote user's login shell: its start-up
files count (the test sshd sets SHLVL=1 so that bash skips ~/.bashrc; see tests/integration/sshd_hosts.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
from sshd_hosts import sshd_skip_reason, start_sshd

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--commands-log", type=Path, help="a run's commands.log: estimate its SSH cost")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
