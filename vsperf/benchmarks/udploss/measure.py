"""Run UDP message-loss measurements: receiver in the far namespace, sender in the near one."""

from __future__ import annotations

import json
import logging
import select
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vsperf.benchmarks.build import built_programs
from vsperf.benchmarks.env import BenchEnv
from vsperf.benchmarks.udploss.rows import UdpLossConfig, UdpLossResult, UdpLossRow
from vsperf.errors import CommandError, TrafficGenError
from vsperf.executor import Process
from vsperf.search.outcome import SearchOutcome
from vsperf.traffic import Traffic

log = logging.getLogger(__name__)

SOURCES = Path(__file__).resolve().parent / "csrc"
SENDER, RECEIVER = "udp_msg_sender", "udp_msg_receiver"
_READY_TIMEOUT_S = 10.0
_FIRST_MESSAGE_WAIT_MS = 5000  # the receiver gives up when the sender's first message never comes


def programs(env: BenchEnv) -> dict[str, Path]:
    """The sender and receiver, built on first use."""
    return built_programs(env.executor, SOURCES, "udploss", (SENDER, RECEIVER))


def _json_line(text: str, who: str) -> dict[str, Any]:
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            parsed: dict[str, Any] = json.loads(line)
            return parsed
    raise TrafficGenError(f"{who} printed no result: {text.strip()[-300:]!r}")


def _wait_ready(proc: Process, timeout_s: float) -> None:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    line = proc.stdout.readline().decode(errors="replace").strip() if ready else ""
    if line != "ready":
        err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr and proc.poll() is not None else ""
        raise TrafficGenError(f"{RECEIVER} did not start: {err or line or 'no answer'}")


def _stop(proc: Process) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


def measure_row(env: BenchEnv, row: UdpLossRow, port: int, idle_ms: int, paths: Mapping[str, Path]) -> UdpLossResult:
    """One measurement: start the receiver, send `row.messages`, collect both counts."""
    sender_end, receiver_end = env.endpoints()
    receiver_argv = [
        str(paths[RECEIVER]), "-p", str(port), "-B", receiver_end.ipv4,
        "-S", row.receiver_sched, "-P", str(row.receiver_priority), "-r", str(row.rcvbuf_bytes),
        "-m", row.method, "-t", str(row.messages), "-i", str(idle_ms), "-w", str(_FIRST_MESSAGE_WAIT_MS),
    ]
    sender_argv = [
        str(paths[SENDER]), "-s", receiver_end.ipv4, "-p", str(port), "-m", str(row.payload_bytes),
        "-t", str(row.messages), "-S", row.sender_sched, "-P", str(row.sender_priority),
        *(["-c"] if row.connected else []),
    ]
    receiver = env.executor.spawn(
        receiver_argv, netns=receiver_end.netns, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _wait_ready(receiver, _READY_TIMEOUT_S)
        # The sender's time is bounded by its message count; a generous timeout catches a hang.
        timeout_s = 60.0 + row.messages / 10_000
        try:
            sent = env.executor.run(sender_argv, netns=sender_end.netns, timeout_s=timeout_s)
        except CommandError as exc:
            raise TrafficGenError(f"{SENDER} failed: {exc}") from exc
        out, err = receiver.communicate(timeout=(idle_ms + _FIRST_MESSAGE_WAIT_MS) / 1000 + 30)
    finally:
        _stop(receiver)
    if receiver.returncode != 0:
        raise TrafficGenError(f"{RECEIVER} failed ({receiver.returncode}): {err.decode(errors='replace').strip()}")
    tx = _json_line(sent.stdout, SENDER)
    rx = _json_line(out.decode(errors="replace"), RECEIVER)
    received = int(rx["received"])
    return UdpLossResult(
        row=row,
        sent_messages=int(tx["sent"]),
        received_messages=received,
        reordered_messages=int(rx["reordered"]),
        send_retries=int(tx["retries"]),
        sender_elapsed_s=int(tx["elapsed_ns"]) / 1e9,
        receiver_elapsed_s=(int(rx["last_ns"]) - int(rx["first_ns"])) / 1e9 if received > 1 else 0.0,
        rcvbuf_effective_bytes=int(rx["rcvbuf_bytes"]),
        mtu_bytes=env.mtu_bytes,
    )


def run_udp_loss(env: BenchEnv, traffic: Traffic, cfg: UdpLossConfig) -> SearchOutcome:
    """Every row of UDPLOSS_ROWS (or the one of the UDPLOSS_* settings), in order.

    The metrics are the first row's (frame_loss_percent, data_mbps, wire_mbps) and the worst
    loss of the sweep; details.rows holds every row, the report's seeds/004-shaped table.
    """
    rows = cfg.rows
    paths = programs(env)
    offloads = env.set_offloads(cfg.offloads)
    results = []
    for i, row in enumerate(rows):
        result = measure_row(env, row, cfg.port, cfg.idle_ms, paths)
        log.info("udp_msg_loss row %d/%d: loss %.3f %%, data %.1f Mbps, wire %.1f Mbps", i + 1, len(rows),
                 result.loss_percent, result.data_mbps, result.wire_mbps)
        results.append(result)
    first = results[0]
    metrics: dict[str, float | int | str | None] = {
        "frame_loss_percent": first.loss_percent,
        "data_mbps": first.data_mbps,
        "wire_mbps": first.wire_mbps,
        "messages_sent": first.sent_messages,
        "messages_received": first.received_messages,
        "max_loss_percent": max(r.loss_percent for r in results),
        "rows": len(results),
    }
    details = {"benchmark": "udp_msg_loss", "path": env.where, "offloads": offloads,
               "rows": [r.as_dict() for r in results]}
    return SearchOutcome(metrics=metrics, trials=(), details=details)
