"""The worker process: its first line, one answer per request line, failures as answers, the end
of its input; run for real (`python -m vsperf.trafficgen.trex.worker`) with a stand-in for TRex's
client (fixtures_trex/client, given as --client-path)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from vsperf.trafficgen.trex.protocol import (
    Close,
    Closed,
    Connect,
    Connected,
    Failure,
    Ready,
    RunTrial,
    StreamSpec,
    TrialCounts,
    decode_answer,
    encode,
)
from vsperf.trafficgen.trex.stl import Session, TrexRequestError
from vsperf.trafficgen.trex.worker import serve

FAKE_CLIENT = Path(__file__).parent / "fixtures_trex" / "client"
STREAM = StreamSpec(port=0, pg_id=1, frames=50, pps=1000.0, frame_size_bytes=64, src_mac="02:00:00:00:00:01",
                    dst_mac="02:00:00:00:00:02", src_ip="198.18.0.1", dst_ip="198.18.1.1", src_udp=3000,
                    dst_udp=3001)


def worker(client_path: Path = FAKE_CLIENT) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vsperf.trafficgen.trex.worker", "--client-path", str(client_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ask(proc: subprocess.Popen[str], line: str) -> object:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return decode_answer(proc.stdout.readline())


def test_a_session_through_the_worker_process() -> None:
    proc = worker()
    try:
        assert proc.stdout is not None
        ready = decode_answer(proc.stdout.readline())
        assert isinstance(ready, Ready) and ready.protocol == 1
        connected = ask(proc, encode(Connect()))
        assert isinstance(connected, Connected) and connected.server_version == "v3.07"
        counts = ask(proc, encode(RunTrial(streams=(STREAM,), residual_s=0.0)))
        assert isinstance(counts, TrialCounts) and counts.streams[0].tx_frames == 50
        assert isinstance(ask(proc, "garbage"), Failure)  # a bad line: a failure answer, the worker goes on
        assert isinstance(ask(proc, encode(Close())), Closed)
        assert proc.wait(10) == 0  # Close ends it
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_a_refusing_server_is_a_failure_answer_of_its_kind() -> None:
    proc = worker()
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        failure = ask(proc, encode(Connect(server="version-mismatch")))
        assert isinstance(failure, Failure) and failure.kind == "version" and "RPC version mismatch" in failure.message
    finally:
        proc.kill()
        proc.communicate()


def test_the_end_of_its_input_ends_the_worker() -> None:
    proc = worker()
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.readline()
    proc.stdin.close()  # vsperf gone
    assert proc.wait(10) == 0


def test_a_missing_client_is_its_only_line(tmp_path: Path) -> None:
    proc = worker(tmp_path)
    out, _err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    lines = out.splitlines()
    assert len(lines) == 1
    failure = decode_answer(lines[0])
    assert isinstance(failure, Failure) and failure.kind == "client" and "no trex/ directory" in failure.message


def test_printing_clients_cannot_break_the_protocol(tmp_path: Path) -> None:
    # a client that prints on import: its words go to stderr, the protocol's first line is still Ready
    noisy = tmp_path / "noisy"
    (noisy / "trex" / "stl").mkdir(parents=True)
    for init in (noisy / "trex" / "__init__.py", noisy / "trex" / "stl" / "__init__.py"):
        init.write_text("")
    (noisy / "trex" / "stl" / "api.py").write_text("print('hello from the client')\n")
    proc = worker(noisy)
    out, err = proc.communicate(input="", timeout=30)
    assert isinstance(decode_answer(out.splitlines()[0]), Ready) and "hello from the client" in err


class _Broken(Session):
    def __init__(self) -> None:
        super().__init__(api=None)

    def connect(self, req: Connect) -> Connected:
        raise TrexRequestError("trex", "no port 1")

    def run_trial(self, req: RunTrial, on_start: object = None) -> TrialCounts:
        raise RuntimeError("client bug\nsecond line")


def test_serve_answers_every_request_even_when_it_fails() -> None:
    requests = io.StringIO("\n".join([encode(Connect()), encode(RunTrial(streams=(STREAM,))), encode(Close())]))
    answers = io.StringIO()
    serve(_Broken(), requests, answers)
    lines = [decode_answer(line) for line in answers.getvalue().splitlines()]
    assert lines[0] == Failure(kind="trex", message="no port 1")
    assert lines[1] == Failure(kind="trex", message="RuntimeError: client bug second line")
    assert lines[2] == Closed()
