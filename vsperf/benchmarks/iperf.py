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


def stacks(settings: Mapping[str, Any]) -> list[tuple[str, dict[str, str]]]:
    """(name, extra environment) of each run: the kernel stack, then the user-space one if set."""
    runs: list[tuple[str, dict[str, str]]] = [(KERNEL, {})]
    preload = str(settings["USERSTACK_PRELOAD"])
    if preload:
        if not Path(preload).is_file():
            raise ConfigError(f"USERSTACK_PRELOAD {preload} is not a file: set it to the user-space stack's library")
        env = {str(k): str(v) for k, v in dict(settings["USERSTACK_ENV"]).items()}
        if "LD_PRELOAD" in env:
            raise ConfigError("USERSTACK_ENV must not set LD_PRELOAD: USERSTACK_PRELOAD does")
        runs.append((str(settings["USERSTACK_NAME"]), {**env, "LD_PRELOAD": preload}))
    return runs


def check_iperf(settings: Mapping[str, Any]) -> None:
    """PrerequisiteError when iperf3 is missing, ConfigError when the user-space stack is wrong."""
    binary = str(settings["IPERF_BINARY"])
    if shutil.which(binary) is None:
        raise PrerequisiteError(f"{binary} not found (setting IPERF_BINARY): apt-get install iperf3")
    stacks(settings)


def client_argv(binary: str, protocol: str, server_ip: str, client_ip: str, settings: Mapping[str, Any]) -> list[str]:
    """The iperf3 client's command line."""
    argv = [
        binary, "-c", server_ip, "-B", client_ip, "-p", str(settings["IPERF_PORT"]), "-4", "-J",
        "-t", str(settings["IPERF_DURATION_S"]), "-i", str(settings["IPERF_INTERVAL_S"]),
        "-P", str(settings["IPERF_PARALLEL"]),
    ]
    if protocol == "udp":
        argv += ["-u", "-b", str(int(settings["IPERF_UDP_BANDWIDTH_BPS"]))]
        if settings["IPERF_UDP_LENGTH_BYTES"]:
            argv += ["-l", str(settings["IPERF_UDP_LENGTH_BYTES"])]
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


def run_once(
    env: BenchEnv, protocol: str, settings: Mapping[str, Any], stack: str, extra_env: dict[str, str]
) -> IperfRun:
    """One iperf3 test: a one-off server in the receiver's namespace, the client in the sender's."""
    binary = str(settings["IPERF_BINARY"])
    client_end, server_end = env.endpoints()
    port = int(settings["IPERF_PORT"])
    server_argv = [binary, "-s", "-1", "-B", server_end.ipv4, "-p", str(port), "-4", "-J",
                   "-i", str(settings["IPERF_INTERVAL_S"])]
    spawn_env = extra_env or None
    server = env.executor.spawn(server_argv, netns=server_end.netns, env=spawn_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_listening(env, server_end.netns, port, server)
        argv = client_argv(binary, protocol, server_end.ipv4, client_end.ipv4, settings)
        timeout_s = float(settings["IPERF_DURATION_S"]) + 30.0
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
        stack=stack,
        preload=extra_env.get("LD_PRELOAD", ""),
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


def run_iperf(protocol: str, env: BenchEnv, traffic: Traffic, settings: Mapping[str, Any]) -> SearchOutcome:
    """TCP or UDP bandwidth on every stack of `stacks(settings)`, in order."""
    if protocol not in ("tcp", "udp"):
        raise ConfigError(f"iperf3 protocol {protocol!r}: tcp or udp")
    check_iperf(settings)
    runs = []
    offloads = env.set_offloads(bool(settings["BENCH_PORT_OFFLOADS"]))
    for stack, extra_env in stacks(settings):
        run = run_once(env, protocol, settings, stack, extra_env)
        log.info("iperf3 %s on the %s stack: sender %.1f Mbit/s, receiver %.1f Mbit/s", protocol, stack,
                 run.summary.sender_bps / 1e6, run.summary.receiver_bps / 1e6)
        runs.append(run)
    details = {"benchmark": f"iperf3_{protocol}", "path": env.where, "offloads": offloads,
               "runs": [r.as_dict() for r in runs]}
    return SearchOutcome(metrics=_metrics(runs), trials=(), details=details)


def run_iperf_tcp(env: BenchEnv, traffic: Traffic, settings: Mapping[str, Any]) -> SearchOutcome:
    """Traffic type iperf3_tcp."""
    return run_iperf("tcp", env, traffic, settings)


def run_iperf_udp(env: BenchEnv, traffic: Traffic, settings: Mapping[str, Any]) -> SearchOutcome:
    """Traffic type iperf3_udp."""
    return run_iperf("udp", env, traffic, settings)
