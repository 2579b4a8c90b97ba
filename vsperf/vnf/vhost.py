"""The vhost-user ports of a VNF: their sockets in a directory of the run on the VNF's host
(`vsperf.host.Host.work_dir`: removed at teardown, and after a killed run)."""

from __future__ import annotations

from pathlib import PurePosixPath

from vsperf.dpdk.eal import UNIX_PATH_MAX_CHARS
from vsperf.errors import DeploymentError
from vsperf.host.host import Host
from vsperf.vswitch.base import SwitchPort

VHOST_DIR_NAME = "vhost"  # the work directory of the sockets (its name on the host carries the run id)


def vhost_socket_path(directory: PurePosixPath, index: int, port: int) -> PurePosixPath:
    """Socket of VNF `index`'s port `port` (short: unix socket paths are limited to 107 chars)."""
    return directory / f"v{index}p{port}.sock"


def vhost_user_ports(host: Host, index: int) -> tuple[SwitchPort, SwitchPort]:
    """The two vhost-user ports of VNF `index` on `host`, their sockets in the run's directory
    "vhost" there; DeploymentError when a socket path is too long for a unix socket."""
    directory = host.work_dir(VHOST_DIR_NAME)
    ports = []
    for k in (0, 1):
        path = vhost_socket_path(directory, index, k)
        if len(str(path)) > UNIX_PATH_MAX_CHARS:
            raise DeploymentError(f"vhost-user socket path too long ({len(str(path))} chars): {path}")
        ports.append(SwitchPort(name=f"vnf{index}.{k}", kind="vhostuser", role="vnf", socket_path=str(path)))
    return ports[0], ports[1]
