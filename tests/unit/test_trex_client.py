"""vsperf's end of the worker (TrexWorker): typed calls, failures, a dying worker or server, the stop;
against the real worker process with a stand-in for TRex's client (fixtures_trex/client)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.trafficgen.trex.client import TrexWorker, WorkerFailure, worker_argv, worker_env
from vsperf.trafficgen.trex.protocol import Connect, Connected, RunTrial, StreamSpec, TrialCounts

FAKE_CLIENT = str(Path(__file__).parent / "fixtures_trex" / "client")
STREAM = StreamSpec(port=0, pg_id=1, frames=2000, pps=1000.0, frame_size_bytes=64, src_mac="02:00:00:00:00:01",
                    dst_mac="02:00:00:00:00:02", src_ip="198.18.0.1", dst_ip="198.18.1.1", src_udp=3000,
                    dst_udp=3001)


@pytest.fixture
def started(tmp_path: Path) -> Iterator[TrexWorker]:
    worker = TrexWorker(LocalExecutor(CommandLog(tmp_path / "commands.log")), tmp_path / "worker.log",
                        client_path=FAKE_CLIENT)
    worker.spawn()
    worker.ready(30.0)
    yield worker
    worker.stop()


def test_the_worker_command_line_and_its_log(started: TrexWorker, tmp_path: Path) -> None:
    assert worker_argv("", FAKE_CLIENT) == [sys.executable, "-m", "vsperf.trafficgen.trex.worker", "--client-path",
                                            FAKE_CLIENT]
    assert "vsperf.trafficgen.trex.worker --client-path" in (tmp_path / "commands.log").read_text()


def test_another_python_finds_vsperf_through_its_path() -> None:
    env = worker_env("/usr/bin/python3.11")
    assert env is not None and Path(env["PYTHONPATH"].split(":")[0], "vsperf", "__init__.py").is_file()
    assert worker_env("") is None


def test_typed_calls(started: TrexWorker) -> None:
    connected = started.call(Connect(), Connected, 10.0)
    assert connected.ports[0].driver == "net_af_packet"
    with pytest.raises(TrafficGenError, match="answered connect with Connected"):
        started.call(Connect(), TrialCounts, 10.0)


def test_a_failure_answer_is_a_worker_failure_of_its_kind(started: TrexWorker) -> None:
    with pytest.raises(WorkerFailure) as caught:
        started.call(Connect(server="unreachable"), Connected, 10.0)
    assert caught.value.kind == "connect" and "Failed to get server response" in str(caught.value)


def test_a_dead_server_ends_the_wait_at_once(started: TrexWorker) -> None:
    started.call(Connect(), Connected, 10.0)

    def server_died() -> None:
        raise TrafficGenError("TRex server on host local (pid 1) exited (code -9)")

    with pytest.raises(TrafficGenError, match="exited"):  # a 2 s trial, stopped at the first check
        started.call(RunTrial(streams=(STREAM,)), TrialCounts, 60.0, alive=server_died)


def test_no_answer_in_time_is_an_error(started: TrexWorker) -> None:
    started.call(Connect(), Connected, 10.0)
    with pytest.raises(TrafficGenError, match=r"no answer from the TRex client worker to trial within 0\.5 s"):
        started.call(RunTrial(streams=(STREAM,)), TrialCounts, 0.5)


def test_a_worker_that_exits_is_named(started: TrexWorker) -> None:
    assert started.proc is not None
    started.proc.kill()
    with pytest.raises(TrafficGenError, match="exited"):
        started.call(Connect(), Connected, 10.0)


def test_stop_ends_the_worker_and_twice_is_fine(started: TrexWorker) -> None:
    proc = started.proc
    assert proc is not None
    started.stop()
    assert proc.poll() is not None
    started.stop()


def test_a_missing_client_names_what_to_install(tmp_path: Path) -> None:
    worker = TrexWorker(LocalExecutor(), tmp_path / "worker.log", client_path=str(tmp_path))
    worker.spawn()
    try:
        with pytest.raises(PrerequisiteError, match=r"cannot import TRex's client .* set TRAFFICGEN_TREX_CLIENT_PATH"):
            worker.ready(30.0)
    finally:
        worker.stop()
