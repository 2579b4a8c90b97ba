"""Shared testbeds on one machine, for test_pool_sharing.py: a pool of two testbeds whose DUT
hosts are sshd hosts A1 and A2 and whose generator host B they share (on different ports), each
host a network namespace of its own; the lock files of those hosts (/run/vsperf/locks/state.NETNS,
one per namespace: the hosts share this machine's /run); vsperf started as another controller
would (its own PID namespace) or with a controller clock days off the hosts'.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cabled_hosts import ip
from sshd_hosts import SshdServer, make_host_netns, remove_netns, start_sshd

from vsperf.testbed.model import DEFAULT_LOCK_DIR

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
FAKETIME_SITE = Path(__file__).resolve().parent / "faketime_site"  # see clock_env


def netns_inode(netns: str) -> int:
    """The inode of network namespace `netns` (what a lock file's name carries)."""
    return os.stat(f"/run/netns/{netns}").st_ino


def lock_file(netns: str, lock_dir: str = DEFAULT_LOCK_DIR) -> Path:
    """The lock state file of the host living in `netns`."""
    return Path(lock_dir) / f"state.{netns_inode(netns)}"


def lock_state(netns: str) -> dict[str, Any]:
    """The lock state of the host in `netns` as JSON ({} when it holds nothing)."""
    path = lock_file(netns)
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text().splitlines()[1])
    return data


def holders(netns: str) -> list[str]:
    """Run ids holding locks on the host in `netns`."""
    return [h["holder"]["run_id"] for h in lock_state(netns).get("holds", [])]


def remove_lock_files(namespaces: Sequence[str]) -> None:
    """Remove what the hosts of `namespaces` left in the shared lock directory (a later namespace
    may get the same inode)."""
    for netns in namespaces:
        with contextlib.suppress(OSError):
            lock_file(netns).unlink()


def vsperf_argv(*args: str, controller: str = "this") -> list[str]:
    """`python -m vsperf ARGS`; `controller` "other": in a PID namespace of its own, as vsperf on
    another controller looks to this one (its process cannot be seen: only its lease tells),
    killed with unshare."""
    argv = [sys.executable, "-m", "vsperf", *args]
    if controller == "other":
        return ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", *argv]
    return argv


def clock_env(offset: str) -> dict[str, str]:
    """The environment of a vsperf whose clock is `offset` (e.g. "-3d") off this machine's. Its
    monotonic clock stays right (faked too, Python's waits with a timeout hang). Under libfaketime
    0.9.10 Python's time.sleep fails (EINVAL): faketime_site/sitecustomize.py, loaded first, makes
    it a wait that works. Wall-clock trials of the simulated DUT still measure with a faked clock:
    such a vsperf runs them with wall_clock False."""
    path = os.pathsep.join(p for p in (str(FAKETIME_SITE), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "LD_PRELOAD": str(LIBFAKETIME), "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            "PYTHONPATH": path}


@dataclass
class PoolBed:
    """Hosts a1, a2 (DUT hosts) and b (the generator host of both testbeds), and their files."""

    servers: dict[str, SshdServer]
    dir: Path
    tag: str
    ns: dict[str, str]
    cables: dict[str, list[tuple[str, str]]]  # "1" / "2" -> (A end, B end) of that testbed

    def testbed(self, n: str) -> Path:
        """lab<n>.yaml: A<n> the DUT host, B the generator host, cabled by A<n>'s two cables."""
        a, b = self.servers[f"a{n}"], self.servers["b"]
        ports = "".join(f"\n  - dut: {{interface: {x}}}\n    trafficgen: {{interface: {y}}}" for x, y in self.cables[n])
        path = self.dir / f"lab{n}.yaml"
        path.write_text(textwrap.dedent(f"""\
            hosts:
              dut{n}{self.tag}: {{address: {a.address}, port: {a.port}, key_file: {a.client_key},
                        known_hosts_file: {a.known_hosts}}}
              gen{self.tag}: {{address: {b.address}, port: {b.port}, key_file: {b.client_key},
                        known_hosts_file: {b.known_hosts}}}
            dut_host: dut{n}{self.tag}
            trafficgen_host: gen{self.tag}
            ports:""") + ports + "\n")
        return path

    def pool(self) -> Path:
        """pool.yaml: lab1.yaml and lab2.yaml."""
        self.testbed("1")
        self.testbed("2")
        path = self.dir / "pool.yaml"
        path.write_text("testbeds: [lab1.yaml, lab2.yaml]\n")
        return path


@contextlib.contextmanager
def pool_bed(base: Path, tag_prefix: str, octet: int) -> Iterator[PoolBed]:
    """A pool bed named `tag_prefix` + this process's PID, its controller links in
    198.18.`octet`.0/24; everything removed at the end, by name and PID."""
    tag = f"{tag_prefix}{os.getpid() % 10000}"
    hosts = ("a1", "a2", "b")
    ns = {h: f"{tag}h{h}" for h in hosts}
    ctl = {h: (f"198.18.{octet}.{8 * i + 1}", f"198.18.{octet}.{8 * i + 2}") for i, h in enumerate(hosts)}
    cables = {n: [(f"{tag}{n}a{k}", f"{tag}{n}b{k}") for k in (0, 1)] for n in ("1", "2")}
    servers: dict[str, SshdServer] = {}
    try:
        for host in hosts:
            make_host_netns(ns[host], f"{tag}c{host}", *ctl[host])
            servers[host] = start_sshd(base / host, f"host{host}", address=ctl[host][1], port=2222, netns=ns[host])
        for n, pairs in cables.items():
            for a_if, b_if in pairs:
                ip("link", "add", a_if, "netns", ns[f"a{n}"], "type", "veth", "peer", "name", b_if, "netns", ns["b"])
                ip("-n", ns["b"], "link", "set", b_if, "up")
        yield PoolBed(servers, base, tag, ns, cables)
    finally:
        for srv in servers.values():
            srv.stop()
        with contextlib.suppress(OSError):
            remove_lock_files([n for n in ns.values() if Path(f"/run/netns/{n}").exists()])
        for host in hosts:
            remove_netns(ns[host], f"{tag}c{host}")


def run(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None,
        timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `argv` to its end, its output captured."""
    return subprocess.run(list(argv), capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout_s)
