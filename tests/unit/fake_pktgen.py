"""A stand-in for Pktgen-DPDK (no DPDK, no root): it needs a terminal on stdin, as pktgen does,
listens on the Lua socket its `-g ADDRESS:PORT` names, answers every request line `{"ok": true}`
and exits at `pktgen.quit()`. What it received goes to its stderr (pktgen's log), one line each.
"""

from __future__ import annotations

import socket
import stat
import sys
from pathlib import Path

_SCRIPT = r'''
import json, os, socket, sys
# Pktgen_Version (the string check_binary looks for: "built with Lua")
argv = sys.argv[1:]
if not os.isatty(0):
    print("scrn_constructor: tcgetattr failed", file=sys.stderr); sys.exit(4)
address, port = argv[argv.index("-g") + 1].rsplit(":", 1)
print("argv " + " ".join(argv), file=sys.stderr, flush=True)
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((address, int(port)))
server.listen(4)
while True:
    conn, _ = server.accept()
    with conn, conn.makefile("rb") as lines:
        for raw in lines:
            line = raw.decode().strip()
            if not line.startswith("vsperf_call("):
                continue  # the reply helper
            print("request " + line, file=sys.stderr, flush=True)
            conn.sendall(json.dumps({"ok": True, "value": None}).encode() + b"\n")
            if "pktgen.quit()" in line:
                sys.exit(0)
'''


def fake_pktgen(directory: Path, *, fail: str = "") -> Path:
    """The stand-in, as an executable in `directory`; with `fail`, one that prints `fail` and
    exits 3 at once (a pktgen that finds no ports)."""
    path = directory / "fake-pktgen"
    body = f"print({fail!r}, file=sys.stderr); sys.exit(3)\n" if fail else _SCRIPT
    path.write_text(f"#!{sys.executable}\nimport sys\n# Pktgen_Version\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def free_port() -> int:
    """A TCP port of the loopback nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
