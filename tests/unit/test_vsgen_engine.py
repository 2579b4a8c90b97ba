"""The engine session wrapper, against a stand-in engine that speaks the protocol on its standard
input and output (no root), started through its host: this machine, or one posing as a testbed's
generator host (the same path; only the messages name the host)."""

from __future__ import annotations

import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import psutil
import pytest
from gen_host import generator_host, recorded

from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.host.host import Host
from vsperf.trafficgen.vsgen.engine import Engine, EngineError
from vsperf.trafficgen.vsgen.protocol import RunRequest, Tick

# A stand-in for the engine (csrc/): the same commands and events, with every frame "delivered".
FAKE_ENGINE = r'''
import json, os, select, sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print("vsgen-engine 9.9"); sys.exit(0)
if args:
    print("vsgen-engine: commands come on stdin, no arguments", file=sys.stderr); sys.exit(2)
pending = b""
def readline(timeout=None):
    """One command line from stdin ("" at its end; None: none within `timeout`)."""
    global pending
    while b"\n" not in pending:
        if timeout is not None and not select.select([0], [], [], timeout)[0]:
            return None
        chunk = os.read(0, 4096)
        if not chunk:
            return ""
        pending += chunk
    line, pending = pending.split(b"\n", 1)
    return line.decode() + "\n"
def emit(**ev):
    print(json.dumps(ev), flush=True)
emit(ev="hello", version="9.9", run_tag=4242, kernel="fake", pid=0)
ports, dirs, tag = {}, {}, 0
for line in iter(readline, ""):
    words = line.split()
    if not words:
        continue
    cmd, kv = words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)
    if cmd == "quit":
        break
    if cmd == "die":
        sys.exit(3)
    if cmd == "port":
        if kv["ifname"] == "missing0":
            emit(ev="error", msg="unknown interface missing0 in namespace " + kv["netns"]); continue
        ports[int(words[1])] = kv; emit(ev="ok", cmd="port", port=int(words[1]), ifindex=2, mtu=1500,
                                         rx_mode="native"); continue
    if cmd == "dir":
        dirs[int(words[1])] = kv; emit(ev="ok", cmd="dir", dir=int(words[1]), len=len(kv["frame"]) // 2); continue
    if cmd == "run":
        ids = [int(d) for d in kv["dirs"].split(",")]
        if any(d not in dirs for d in ids):
            emit(ev="error", msg="run: direction is not defined"); continue
        tag += 1
        rate = float(kv.get("rate", 0))
        counts = [int(n) for n in kv.get("frames", "0").split(",")]
        rx_of = {d: str(int(dirs[d]["rx"])) for d in ids}
        if kv["mode"] == "cont":
            sent = 0
            for t in range(1, 100):
                time.sleep(0.05)
                sent = int(rate * t * 0.05)
                emit(ev="tick", t=t * 0.05, tx={str(d): sent for d in ids}, rx={rx_of[d]: sent for d in ids})
                if (readline(0) or "").strip() == "stop":
                    break
            counts = [sent] * len(ids)
        elif rate:
            half = counts[0] // 2
            emit(ev="tick", t=1.0, tx={str(d): half for d in ids}, rx={rx_of[d]: half for d in ids})
        out = []
        for i, d in enumerate(ids):
            n = counts[i if len(counts) > 1 else 0]
            out.append(dict(
                dir=d, tx_port=int(dirs[d]["tx"]), rx_port=int(dirs[d]["rx"]), path="xdp-live", path_note="",
                ring_drops=0, streams=int(dirs[d]["streams"]), requested_fps=rate, frames_requested=n, tx=n,
                tx_time_s=n / rate if rate else n / 1e6, achieved_fps=rate or 1e6, cpu_s=0.01, rx=n, dup=0,
                reorder=0, lost=0, excess=0, streams_with_loss=0, max_stream_loss=0,
                threads=min(int(kv.get("threads", 1)), int(dirs[d]["streams"]))))
        port_results = []
        for p in sorted(ports):
            got = sum(o["rx"] for o in out if o["rx_port"] == p)
            port_results.append(dict(
                port=p, rx_mode="native", frames=got, dup=0, reorder=0, late=0, stale=0, foreign=0, other=0,
                tagged=0, lat_sum_ns=8000 * got, lat_min_ns=7000, lat_max_ns=9000, hist=[[500, got]]))
        emit(ev="result", mode=kv["mode"], trial_tag=tag, elapsed_s=1.0, cpu_s=0.02,
             residual_s=float(kv["residual"]), stopped_by="done", dirs=out, ports=port_results)
        continue
    emit(ev="error", msg="unknown command '%s'" % cmd)
emit(ev="bye")
'''


def fake_engine(tmp: Path) -> Path:
    path = tmp / "fake-vsgen-engine"
    path.write_text(f"#!{sys.executable}\n{FAKE_ENGINE}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with generator_host(tmp_path) as local:
        yield local


@pytest.fixture
def engine(tmp_path: Path, host: Host) -> Iterator[Engine]:
    eng = Engine(host, PurePosixPath(fake_engine(tmp_path)))
    eng.start()
    yield eng
    eng.close()


def test_start_says_hello_and_close_leaves_nothing(tmp_path: Path, host: Host) -> None:
    eng = Engine(host, PurePosixPath(fake_engine(tmp_path)))
    assert eng.start()["run_tag"] == 4242
    pid = eng.pid
    assert pid is not None and psutil.pid_exists(pid)
    # started through the host: in the run's journal by PID and start time, its stderr in the run's logs
    (entry,) = recorded(host, "process")
    assert (entry.name, entry.pid) == ("vsgen-engine", pid) and entry.start_ticks > 0
    assert psutil.Process(pid).cmdline()[-1] == str(fake_engine(tmp_path))  # no --control FIFO: stdin
    eng.close()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert recorded(host, "process") == []  # forgotten: nothing for the teardown to stop
    assert not eng.alive
    eng.close()  # twice is fine


def test_commands_and_their_errors(engine: Engine) -> None:
    assert engine.command("port 0 netns=a ifname=v0")["port"] == 0
    with pytest.raises(EngineError, match="unknown interface missing0 in namespace b"):
        engine.command("port 1 netns=b ifname=missing0")
    with pytest.raises(EngineError, match="unknown command 'bogus'"):
        engine.command("bogus")


def test_a_run_returns_its_ticks_and_result(engine: Engine) -> None:
    engine.command("port 0 netns=a ifname=v0")
    engine.command("port 1 netns=b ifname=v1")
    engine.command("dir 0 tx=0 rx=1 streams=1 vary=none base=0 l3=14 frame=00")
    seen: list[Tick] = []
    result, ticks = engine.run(RunRequest("rate", (0,), rate_fps=1000.0, frames=(2000,), residual_s=0.0),
                               on_tick=seen.append)
    assert result.dirs[0].tx_frames == 2000 and result.ports[1].frames == 2000
    assert ticks == seen and ticks[0].tx == {0: 1000}


def test_a_failed_run_raises_the_engine_message(engine: Engine) -> None:
    with pytest.raises(EngineError, match="direction is not defined"):
        engine.run(RunRequest("burst", (5,), frames=(1,)))
    engine.command("port 0 netns=a ifname=v0")  # the session goes on


def test_a_continuous_run_until_stopped(engine: Engine) -> None:
    engine.command("port 0 netns=a ifname=v0")
    engine.command("port 1 netns=b ifname=v1")
    engine.command("dir 0 tx=0 rx=1 streams=1 vary=none base=0 l3=14 frame=00")
    request = RunRequest("cont", (0,), rate_fps=1000.0, residual_s=0.0)
    engine.begin(request)
    with pytest.raises(TrafficGenError, match="busy"):
        engine.command("ping")
    time.sleep(0.12)
    live = engine.poll_ticks()
    engine.stop_run()
    result, ticks = engine.finish(request)
    assert live and result.dirs[0].tx_frames > 0
    assert result.dirs[0].tx_frames == (live + ticks)[-1].tx[0]


def test_an_engine_that_dies_is_reported_with_its_exit(engine: Engine) -> None:
    with pytest.raises(EngineError, match=r"^vsgen engine exited \(3\): no message$"):
        engine.command("die")
    with pytest.raises(EngineError):
        engine.command("ping")


def _broken(tmp_path: Path) -> PurePosixPath:
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'vsgen-engine: needs root' >&2\nexit 2\n")
    broken.chmod(0o755)
    return PurePosixPath(broken)


def test_an_engine_that_cannot_start_is_an_error_with_its_message(tmp_path: Path, host: Host) -> None:
    eng = Engine(host, _broken(tmp_path))
    with pytest.raises(EngineError, match=r"^vsgen engine exited \(2\): vsgen-engine: needs root$"):
        eng.start()
    assert eng.pid is None and recorded(host, "process") == []  # nothing left running, nothing to stop


def test_on_another_host_the_messages_name_it(tmp_path: Path) -> None:
    with generator_host(tmp_path, "gen") as gen:
        eng = Engine(gen, _broken(tmp_path))
        with pytest.raises(EngineError, match=r"^vsgen engine on host gen exited \(2\): vsgen-engine: needs root$"):
            eng.start()
        eng = Engine(gen, PurePosixPath(tmp_path / "nope"))
        with pytest.raises(PrerequisiteError, match=r"^cannot start the vsgen engine on host gen: .*nope.*not found"):
            eng.start()
        assert recorded(gen, "process") == []


def test_a_missing_binary_is_a_prerequisite_error_and_leaves_nothing(tmp_path: Path, host: Host) -> None:
    eng = Engine(host, PurePosixPath(tmp_path / "nope"))
    with pytest.raises(PrerequisiteError, match=r"^cannot start the vsgen engine: .*/nope: not found$"):
        eng.start()
    assert eng.pid is None and recorded(host, "process") == []
