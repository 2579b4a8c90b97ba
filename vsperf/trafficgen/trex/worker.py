"""The TRex client worker: `python -m vsperf.trafficgen.trex.worker [--client-path DIR]`.

A process of its own (see vsperf.trafficgen.trex.protocol for why): it imports TRex's client
(the lbr-trex-client package, or the client of a TRex tree given with --client-path), writes a
`Ready` line, then answers each request line on its standard input with one answer line. It
exits after `Close` or at the end of its input (vsperf gone). The protocol's lines go to the
standard output it was started with; anything else printed (the client's and scapy's own
messages) goes to its standard error, vsperf's log file of the worker.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import platform
import sys
import warnings
from typing import IO, Any

from vsperf.trafficgen.trex.protocol import (
    Close,
    Connect,
    Failure,
    ProtocolError,
    Ready,
    RunTrial,
    Started,
    decode_request,
    encode,
)
from vsperf.trafficgen.trex.stl import Session, TrexRequestError

CLIENT_PACKAGE = "lbr_trex_client"  # PyPI lbr-trex-client: TRex's client, repackaged
CLIENT_MODULE = "trex.stl.api"


def load_client(client_path: str) -> Any:
    """TRex's STL API module: from `client_path` (a TRex tree's interactive/ directory) or the
    lbr-trex-client package. Raises ImportError naming what is missing."""
    if client_path:
        if not os.path.isdir(os.path.join(client_path, "trex")):
            raise ImportError(f"{client_path} holds no TRex client (no trex/ directory)")
        sys.path.insert(0, client_path)
    else:
        importlib.import_module(CLIENT_PACKAGE)  # puts TRex's bundled libraries on sys.path
    return importlib.import_module(CLIENT_MODULE)


def serve(session: Session, requests: IO[str], answers: IO[str]) -> None:
    """Answer each request line until Close or the end of `requests`."""
    for line in requests:
        if not line.strip():
            continue
        try:
            request = decode_request(line)
        except ProtocolError as exc:
            _write(answers, encode(Failure(kind="protocol", message=str(exc))))
            continue
        try:
            if isinstance(request, Connect):
                answer: Any = session.connect(request)
            elif isinstance(request, RunTrial):
                started = (lambda: _write(answers, encode(Started()))) if request.announce_start else None
                answer = session.run_trial(request, started)
            else:
                answer = session.close()
        except TrexRequestError as exc:
            answer = session.failure(exc)
        except Exception as exc:  # the worker's boundary: anything the client raised, as one line
            answer = Failure(kind="trex", message=f"{type(exc).__name__}: {exc}".replace("\n", " "))
        _write(answers, encode(answer))
        if isinstance(request, Close):
            return
    with contextlib.suppress(Exception):  # vsperf is gone: release the server's ports
        session.close()


def _write(out: IO[str], line: str) -> None:
    out.write(line + "\n")
    out.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vsperf-trex-worker", description=__doc__)
    parser.add_argument("--client-path", default="", help="a TRex tree's automation/trex_control_plane/interactive")
    args = parser.parse_args(argv)
    # The protocol keeps the standard output it was given; print() and the client's messages go to stderr.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    warnings.filterwarnings("ignore")  # scapy's deprecation warnings on every import
    try:
        api = load_client(args.client_path)
    except Exception as exc:  # ImportError, or whatever a broken client raises while importing
        where = args.client_path or f"the {CLIENT_PACKAGE} package"
        _write(answers, encode(Failure(kind="client", message=f"cannot import TRex's client from {where}: "
                                                                f"{type(exc).__name__}: {exc}".replace("\n", " "))))
        return 2
    _write(answers, encode(Ready(python=platform.python_version())))
    serve(Session(api), sys.stdin, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
