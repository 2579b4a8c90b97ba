"""`vsperf otg-server`: vsgen as an Open Traffic Generator, for vsperf's otg backend or any
snappi script (`snappi.api(location="http://127.0.0.1:PORT")`)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

import click

from vsperf.config.schema_vsgen import PATHS
from vsperf.config.schema_vsgen import Path as TxPath
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.host.release import release
from vsperf.host.workdir import new_run_id
from vsperf.trafficgen.otg.client import load_snappi
from vsperf.trafficgen.otg.server import OtgServer, check_listen_address
from vsperf.trafficgen.otg.session import ServerOptions, ServerSession
from vsperf.trafficgen.otg.translate import PortLocation
from vsperf.trafficgen.vsgen.build import locate_engine
from vsperf.trafficgen.vsgen.settings import MIN_KERNEL, kernel_version


def parse_listen(text: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 as [::1]:PORT) as (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--listen needs HOST:PORT, e.g. 127.0.0.1:8080, got {text!r}")
    return host.strip("[]"), int(port)


def parse_port(text: str) -> tuple[str, PortLocation]:
    """NAME=IFNAME[@NETNS] as (name, location)."""
    name, sep, where = text.partition("=")
    ifname, _, netns = where.partition("@")
    if not sep or not name or not ifname or len(ifname) > 15:
        raise ConfigError(f"--port needs NAME=IFNAME[@NETNS] (IFNAME up to 15 characters), got {text!r}")
    return name, PortLocation(ifname, netns or None)


def parse_cpus(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(c) for c in text.split(",") if c.strip())
    except ValueError:
        raise ConfigError(f"--cpus needs CPU numbers separated by commas, got {text!r}") from None


def check_host() -> None:
    """What the engine needs: Linux with XDP live frames, and root."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        raise PrerequisiteError("vsperf otg-server runs the vsgen engine: it needs Linux and root")
    if kernel_version(os.uname().release) < MIN_KERNEL:
        raise PrerequisiteError(f"vsperf otg-server needs Linux >= {MIN_KERNEL[0]}.{MIN_KERNEL[1]} (XDP live frames)")


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@click.command(name="otg-server", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--listen", required=True, metavar="HOST:PORT", help="Loopback address to serve on (port 0: any).")
@click.option("--allow-remote", "remote", is_flag=True,
              help="Allow a --listen address other than loopback, e.g. on a testbed's controller link. No "
                   "authentication: whoever reaches it may send traffic on the served ports.")
@click.option("--port", "ports", multiple=True, metavar="NAME=IFNAME[@NETNS]",
              help="A port clients may name in their config's port locations (repeatable).")
@click.option("--netns-prefix", "prefixes", multiple=True, metavar="PREFIX",
              help="Also serve locations IFNAME@NETNS in namespaces named PREFIX* (e.g. vsp: the local lab).")
@click.option("--engine", default="", metavar="PATH", help="vsgen engine binary (default: vsperf's).")
@click.option("--path", "tx_path", type=click.Choice(PATHS), default="auto", show_default=True,
              help="How vsgen transmits.")
@click.option("--cpus", default="", metavar="LIST", help="CPUs of the transmit threads, flow i on entry i.")
@click.option("--residual-wait", "residual_s", type=click.FloatRange(0, 60), default=2.0, show_default=True,
              help="Seconds frames may still arrive after the last one is sent (RFC 2544: 2).")
def otg_server_command(listen: str, remote: bool, ports: tuple[str, ...], prefixes: tuple[str, ...], engine: str,
                       tx_path: str, cpus: str, residual_s: float) -> None:
    """Serve vsgen through the Open Traffic Generator HTTP API until Ctrl-C or SIGTERM."""
    host, port_number = parse_listen(listen)
    check_listen_address(host, remote=remote)
    declared = dict(parse_port(p) for p in ports)
    if not declared and not prefixes:
        raise ConfigError("vsperf otg-server needs --port NAME=IFNAME[@NETNS] or --netns-prefix PREFIX")
    load_snappi()
    check_host()
    work_dir = Path(tempfile.mkdtemp(prefix="vsperf-otg-"))
    run_id = new_run_id()
    # The engine runs through this machine as a host of its own: in a journal of the server's run,
    # so that a vsperf run after a SIGKILL of the server stops an engine it left.
    journal = Journal(run_id)
    try:
        executor = LocalExecutor(CommandLog(work_dir / "commands.log"))
        path: TxPath = next(p for p in PATHS if p == tx_path)
        options = ServerOptions(binary=locate_engine(executor, engine).path, ports=declared,
                                netns_prefixes=tuple(prefixes), path=path, cpus=parse_cpus(cpus),
                                residual_s=residual_s)
        session = ServerSession(Host("local", executor, RunNames(run_id), journal), options)
        server = OtgServer(session, host, port_number, remote=remote)
        previous: Any = signal.signal(signal.SIGTERM, _stop)
        try:
            click.echo(f"vsperf otg-server: serving OTG on {server.url} (pid {os.getpid()})", nl=True)
            sys.stdout.flush()
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("vsperf otg-server: stopping", err=True)
        finally:
            signal.signal(signal.SIGTERM, previous)
            server.close()
    finally:
        release(journal, {"local": LocalExecutor()})
        shutil.rmtree(work_dir, ignore_errors=True)
