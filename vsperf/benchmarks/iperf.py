"""Host-stack bandwidth with iperf3 (seeds/000, 002): TCP or UDP between the deployment's two
endpoints, on the kernel stack and, when USERSTACK_PRELOAD names one, on a user-space stack
loaded with LD_PRELOAD into both iperf3 processes; both runs side by side in one result.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vsperf.benchmarks.env import BenchEnv
from vsperf.benchmarks.iperf_parse import IperfRun, intervals, parse_json, summary
from vsperf.errors import CommandError, ConfigError, PrerequisiteError, TrafficGenError
from vsperf.executor import Process
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.traffic import Traffic

log = logging.getLogger(__name__)

KERNEL = "kernel"
_LISTEN_TIMEOUT_S = 10.0
_SERVER_EXIT_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class IperfStack:
    """One run of a benchmark: a network stack, with the environment that loads it."""

    name: str  # KERNEL, or USERSTACK_NAME
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment of both iperf3 processes

    @property
    def preload(self) -> str:
        return self.env.get("LD_PRELOAD", "")


@dataclass(frozen=True)
class IperfConfig:
    """An iperf3 benchmark (traffic type iperf3_tcp or iperf3_udp), from the IPERF_* settings."""

    protocol: str  # tcp or udp
    binary: str
    port: int
    duration_s: int
    interval_s: float
    parallel: int
    udp_bandwidth_bps: int
    udp_length_bytes: int  # 0: iperf3's default
    offloads: bool  # BENCH_PORT_OFFLOADS
    stacks: tuple[IperfStack, ...]  # the kernel stack, then the user-space one if set

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], protocol: str) -> IperfConfig:
        """The benchmark as the settings ask for it: PrerequisiteError when iperf3 is missing,
        ConfigError when the user-space stack is wrong."""
        if protocol not in ("tcp", "udp"):
            raise ConfigError(f"iperf3 protocol {protocol!r}: tcp or udp")
        binary = str(settings["IPERF_BINARY"])
        if shutil.which(binary) is None:
            raise PrerequisiteError(f"{binary} not found (setting IPERF_BINARY): apt-get install iperf3")
        return cls(
            protocol=protocol, binary=binary, port=int(settings["IPERF_PORT"]),
            duration_s=int(settings["IPERF_DURATION_S"]), interval_s=float(settings["IPERF_INTERVAL_S"]),
            parallel=int(settings["IPERF_PARALLEL"]), udp_bandwidth_bps=int(settings["IPERF_UDP_BANDWIDTH_BPS"]),
            udp_length_bytes=int(settings["IPERF_UDP_LENGTH_BYTES"] or 0),
            offloads=bool(settings["BENCH_PORT_OFFLOADS"]), stacks=stacks(settings))


def stacks(settings: Mapping[str, Any]) -> tuple[IperfStack, ...]:
    """Each run's stack: the kernel stack, then the user-space one if USERSTACK_PRELOAD is set."""
    runs = [IperfStack(KERNEL)]
    preload = str(settings["USERSTACK_PRELOAD"])
    if preload:
        if not Path(preload).is_file():
            raise ConfigError(f"USERSTACK_PRELOAD {preload} is not a file: set it to the user-space stack's library")
        env = {str(k): str(v) for k, v in dict(settings["USERSTACK_ENV"]).items()}
        if "LD_PRELOAD" in env:
            raise ConfigError("USERSTACK_ENV must not set LD_PRELOAD: USERSTACK_PRELOAD does")
        runs.append(IperfStack(str(settings["USERSTACK_NAME"]), {**env, "LD_PRELOAD": preload}))
    return tuple(runs)


def client_argv(cfg: IperfConfig, server_ip: str, client_ip: str) -> list[str]:
    """The iperf3 client's command line."""
    argv = [
        cfg.binary, "-c", server_ip, "-B", client_ip, "-p", str(cfg.port), "-4", "-J",
        "-t", str(cfg.duration_s), "-i", str(cfg.interval_s), "-P", str(cfg.parallel),
    ]
    if cfg.protocol == "udp":
        argv += ["-u", "-b", str(cfg.udp_bandwidth_bps)]
        if cfg.udp_length_bytes:
            argv += ["-l", str(cfg.udp_length_bytes)]
    return argv


def _wait_listening(env: BenchEnv, netns: str | None, port: int, server: Process) -> None:
    deadline = time.monotonic() + _LISTEN_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            err = server.stderr.read().decode(errors="replace") if server.stderr else ""
            out = server.stdout.read().decode(errors="replace") if server.stdout else ""
            raise TrafficGenError(f"iperf3 server exited at start: {(err or out).strip()[-300:]}")
        listening = env.executor.run(["ss", "-Hltn", "sport", "=", f":{port}"], netns=netns, check=False)
        if listening.stdout.strip():
            return
        time.sleep(0.1)
    raise TrafficGenError(f"iperf3 server did not listen on port {port} within {_LISTEN_TIMEOUT_S:.0f} s")


def run_once(env: BenchEnv, cfg: IperfConfig, stack: IperfStack) -> IperfRun:
    """One iperf3 test: a one-off server in the receiver's namespace, the client in the sender's."""
    client_end, server_end = env.endpoints()
    server_argv = [cfg.binary, "-s", "-1", "-B", server_end.ipv4, "-p", str(cfg.port), "-4", "-J",
                   "-i", str(cfg.interval_s)]
    spawn_env = dict(stack.env) or None
    server = env.executor.spawn(server_argv, netns=server_end.netns, env=spawn_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_listening(env, server_end.netns, cfg.port, server)
        argv = client_argv(cfg, server_end.ipv4, client_end.ipv4)
        timeout_s = cfg.duration_s + 30.0
        try:
            done = env.executor.run(argv, netns=client_end.netns, env=spawn_env, timeout_s=timeout_s, check=False)
        except CommandError as exc:
            raise TrafficGenError(f"iperf3 client: {exc}") from exc
        client_doc = parse_json(done.stdout, "client")
        out, _ = server.communicate(timeout=_SERVER_EXIT_TIMEOUT_S)
        server_doc = parse_json(out.decode(errors="replace"), "server")
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=10)
    return IperfRun(
        stack=stack.name,
        preload=stack.preload,
        summary=summary(client_doc),
        client_intervals=tuple(intervals(client_doc)),
        server_intervals=tuple(intervals(server_doc)),
        tcp_mss_bytes=_mss(client_doc),
    )


def _mss(client_doc: Mapping[str, Any]) -> int | None:
    mss = client_doc.get("start", {}).get("tcp_mss_default")
    return int(mss) if isinstance(mss, int) and mss > 0 else None


def _metrics(runs: list[IperfRun]) -> dict[str, MetricValue]:
    metrics: dict[str, MetricValue] = {}
    for i, run in enumerate(runs):
        prefix = "" if i == 0 else "userstack_"
        s = run.summary
        metrics |= {
            f"{prefix}sender_mbps": s.sender_bps / 1e6,
            f"{prefix}receiver_mbps": s.receiver_bps / 1e6,
            f"{prefix}retransmits": s.retransmits,
            f"{prefix}loss_percent": s.loss_percent,
            f"{prefix}jitter_ms": s.jitter_ms,
        }
    return metrics


def run_iperf(env: BenchEnv, traffic: Traffic, cfg: IperfConfig) -> SearchOutcome:
    """TCP or UDP bandwidth on every stack of `cfg`, in order."""
    runs = []
    offloads = env.set_offloads(cfg.offloads)
    for stack in cfg.stacks:
        run = run_once(env, cfg, stack)
        log.info("iperf3 %s on the %s stack: sender %.1f Mbit/s, receiver %.1f Mbit/s", cfg.protocol, stack.name,
                 run.summary.sender_bps / 1e6, run.summary.receiver_bps / 1e6)
        runs.append(run)
    details = {"benchmark": f"iperf3_{cfg.protocol}", "path": env.where, "offloads": offloads,
               "runs": [r.as_dict() for r in runs]}
    return SearchOutcome(metrics=_metrics(runs), trials=(), details=details)
