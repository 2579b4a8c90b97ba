"""The environment a run measured on, for results.json and the report's Test Environment.

Reads files only (/etc/os-release, /proc, /sys/class/dmi/id): no root needed, and it never
fails: a value that cannot be read becomes "unknown". The NICs are added by the runner from
the deployment, not here.
"""

from __future__ import annotations

import os
import platform
import socket
import tempfile
from pathlib import Path
from typing import Any

from vsperf import __version__
from vsperf.errors import VsperfError
from vsperf.executor import Executor

UNKNOWN = "unknown"

# Placeholders firmware writes into DMI fields it does not fill in.
_DMI_JUNK = {"", "to be filled by o.e.m.", "default string", "not specified", "none", "system product name"}

# The checkout vsperf runs from when it is not installed (vsperf/ sits at its top).
_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def os_name(root: Path = Path("/")) -> str:
    """PRETTY_NAME from os-release, e.g. "Debian GNU/Linux 12 (bookworm)"."""
    for rel in ("etc/os-release", "usr/lib/os-release"):
        text = _read(root / rel)
        if text is None:
            continue
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() == "PRETTY_NAME":
                return value.strip().strip("\"'") or UNKNOWN
    return UNKNOWN


def kernel_release(root: Path = Path("/"), *, this_machine: bool = True) -> str:
    """Kernel release, e.g. "6.1.0-18-amd64" (`this_machine`: the running kernel's when the file
    cannot be read; another host's stays "unknown")."""
    return _read(root / "proc/sys/kernel/osrelease") or (platform.release() if this_machine else "") or UNKNOWN


def hostname(root: Path = Path("/"), *, this_machine: bool = True) -> str:
    """This host's name (`this_machine`: see `kernel_release`)."""
    return _read(root / "proc/sys/kernel/hostname") or (socket.gethostname() if this_machine else "") or UNKNOWN


def cpu_info(root: Path = Path("/"), *, this_machine: bool = True) -> dict[str, Any]:
    """CPU model, logical and physical core counts and sockets from /proc/cpuinfo.

    Physical cores count distinct (physical id, core id) pairs; where the kernel does not
    say (some ARM and virtual machines), they stay "unknown" rather than guessed. Without
    /proc/cpuinfo, `this_machine` falls back on Python's idea of this machine's CPUs; another
    host's stay "unknown".
    """
    text = _read(root / "proc/cpuinfo") or ""
    model = None
    logical = 0
    cores: set[tuple[str, str]] = set()
    sockets: set[str] = set()
    package = ""
    for line in text.splitlines():
        key, sep, value = (part.strip() for part in line.partition(":"))
        if not sep:
            continue
        if key == "processor":
            logical += 1
            package = ""
        elif key in ("model name", "Model", "Hardware", "cpu model") and model is None and value:
            model = value
        elif key == "physical id":
            package = value
            sockets.add(value)
        elif key == "core id":
            cores.add((package, value))
    return {
        "cpu_model": model or (platform.processor() if this_machine else "") or UNKNOWN,
        "cpu_cores_logical": logical or (os.cpu_count() if this_machine else 0) or UNKNOWN,
        "cpu_cores_physical": len(cores) or UNKNOWN,
        "cpu_sockets": len(sockets) or UNKNOWN,
    }


def memory_kb(root: Path = Path("/")) -> int | str:
    """MemTotal from /proc/meminfo, in kB."""
    for line in (_read(root / "proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            fields = line.split()
            if len(fields) >= 2 and fields[1].isdigit():
                return int(fields[1])
    return UNKNOWN


def board(root: Path = Path("/")) -> str:
    """Main board "vendor name" from DMI, else the system's "vendor product", else "unknown"."""
    dmi = root / "sys/class/dmi/id"
    for vendor_file, name_file in (("board_vendor", "board_name"), ("sys_vendor", "product_name")):
        parts = [_read(dmi / vendor_file), _read(dmi / name_file)]
        useful = [p for p in parts if p and p.lower() not in _DMI_JUNK]
        if useful:
            return " ".join(useful)
    return UNKNOWN


def git_commit(executor: Executor | None, checkout: Path = _SOURCE_ROOT) -> str | None:
    """The commit vsperf runs from when it runs from a git checkout, else None.

    With an executor, `git rev-parse HEAD` (logged like every command); without one, or
    when git is missing, .git/HEAD is read directly.
    """
    if not (checkout / ".git").exists():
        return None
    if executor is not None:
        try:
            proc = executor.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], check=False, timeout_s=10)
        except Exception:  # environment capture never fails a run
            proc = None
        if proc is not None and proc.returncode == 0 and _is_sha(proc.stdout.strip()):
            return proc.stdout.strip()
    return _read_head(checkout / ".git")


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _read_head(git_dir: Path) -> str | None:
    head = _read(git_dir / "HEAD")
    if head is None:
        return None
    if _is_sha(head):
        return head
    if not head.startswith("ref:"):
        return None
    ref = head[4:].strip()
    direct = _read(git_dir / ref)
    if direct and _is_sha(direct):
        return direct
    for line in (_read(git_dir / "packed-refs") or "").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _is_sha(sha):
            return sha
    return None  # a branch without commits yet


def collect_environment(executor: Executor | None = None, *, root: Path = Path("/")) -> dict[str, Any]:
    """Everything the report's Test Environment needs about this host (see module doc).

    Keys: os, kernel, architecture, cpu_model, cpu_cores_logical, cpu_cores_physical,
    cpu_sockets, memory_kb, board, hostname, python, vsperf_version, vsperf_git_commit.
    `root` lets tests point the file reads at a fake tree.
    """
    env: dict[str, Any] = {
        "os": os_name(root),
        "kernel": kernel_release(root),
        "architecture": platform.machine() or UNKNOWN,
    }
    env.update(cpu_info(root))
    env["memory_kb"] = memory_kb(root)
    env["board"] = board(root)
    env["hostname"] = hostname(root)
    env["python"] = platform.python_version()
    env["vsperf_version"] = __version__
    env["vsperf_git_commit"] = git_commit(executor)
    return env


def parse_ethtool_driver(text: str) -> dict[str, str]:
    """driver, driver_version, firmware and bus (PCI address) from `ethtool -i IF` output."""
    keys = {"driver": "driver", "version": "driver_version", "firmware-version": "firmware", "bus-info": "bus"}
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in keys and value.strip():
            out[keys[key.strip()]] = value.strip()
    return out


def parse_ethtool_speed(text: str) -> str | None:
    """The link speed `ethtool IF` reports, e.g. "10000Mb/s" (None when unknown)."""
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep and key == "Speed" and value.strip() and not value.strip().startswith("Unknown"):
            return value.strip()
    return None


def port_details(executor: Executor, ifname: str, netns: str | None = None) -> dict[str, str]:
    """What the report says about a port: driver (veth on the local lab), driver version,
    firmware, PCI bus and nominal link speed, read with ethtool inside the port's namespace.
    Never fails: what cannot be read is left out (driver "unknown")."""
    details: dict[str, str] = {}
    for argv in (["ethtool", "-i", ifname], ["ethtool", ifname]):
        try:
            proc = executor.run(argv, netns=netns, check=False, timeout_s=10)
        except Exception:  # environment capture never fails a run (ethtool missing, ...)
            continue
        if proc.returncode != 0:
            continue
        if "-i" in argv:
            details.update(parse_ethtool_driver(proc.stdout))
        else:
            speed = parse_ethtool_speed(proc.stdout)
            if speed:
                details["speed"] = speed + (" (nominal: veth has no physical link)"
                                            if details.get("driver") == "veth" else "")
    details.setdefault("driver", "unknown")
    return details


# The files the readers above look at (relative to a host's /).
HOST_FILES = (
    "etc/os-release", "proc/sys/kernel/osrelease", "proc/sys/kernel/hostname", "proc/cpuinfo",
    "proc/meminfo", "sys/class/dmi/id/board_vendor", "sys/class/dmi/id/board_name",
    "sys/class/dmi/id/product_name", "sys/class/dmi/id/sys_vendor",
)


def describe_host(executor: Executor, interfaces: list[str]) -> dict[str, Any]:
    """OS, kernel, CPU, memory, board and host name of the executor's host, and `interfaces`'
    driver, firmware, PCI address and speed. The host's files are read through its executor
    (`cat`, logged, over SSH when remote) into a small tree shaped like its /, which the same
    readers as for this machine parse. Never fails: what cannot be read says so."""
    with tempfile.TemporaryDirectory(prefix="vsperf-host-") as tmp:
        root = Path(tmp)
        for rel in HOST_FILES:
            try:
                proc = executor.run(["cat", f"/{rel}"], check=False, timeout_s=10)
            except VsperfError:  # a file that cannot be read is reported "unknown", not fatal
                continue
            if proc.returncode == 0:
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(proc.stdout, encoding="utf-8")
        # What the host did not answer is "unknown", never this machine's value.
        info: dict[str, Any] = {"os": os_name(root), "kernel": kernel_release(root, this_machine=False)}
        info.update(cpu_info(root, this_machine=False))
        info.update({"memory_kb": memory_kb(root), "board": board(root),
                     "hostname": hostname(root, this_machine=False)})
    info["nics"] = [{"name": ifname, **port_details(executor, ifname)} for ifname in interfaces]
    return info
