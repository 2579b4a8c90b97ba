"""The vhost-user ports of a VNF: their sockets in a work directory of the run on the VNF's host
(`vsperf.vnf.host.ProcessHost.work_dir`: removed at teardown, and after a killed run)."""

from __future__ import annotations

from pathlib import Path

from vsperf.dpdk.eal import UNIX_PATH_MAX_CHARS
from vsperf.errors import DeploymentError
from vsperf.lab.env import LabEnv
from vsperf.vnf.host import LabProcessHost, ProcessHost
from vsperf.vswitch.base import SwitchPort

VHOST_DIR_NAME = "vhost"  # the work directory of the sockets (its name on the host carries the run id)


def vhost_socket_path(directory: Path, index: int, port: int) -> Path:
    """Socket of VNF `index`'s port `port` (short: unix socket paths are limited to 107 chars)."""
    return directory / f"v{index}p{port}.sock"


def vhost_user_ports(host: ProcessHost | LabEnv, index: int) -> tuple[SwitchPort, SwitchPort]:
    """The two vhost-user ports of VNF `index` on `host` (the local lab's `LabEnv` stands for its
    `LabProcessHost`), their sockets in the host's work directory "vhost"; DeploymentError when a
    socket path is too long for a unix socket."""
    where = LabProcessHost(host) if isinstance(host, LabEnv) else host
    directory = where.work_dir(VHOST_DIR_NAME)
    ports = []
    for k in (0, 1):
        path = vhost_socket_path(directory, index, k)
        if len(str(path)) > UNIX_PATH_MAX_CHARS:
            raise DeploymentError(f"vhost-user socket path too long ({len(str(path))} chars): {path}")
        ports.append(SwitchPort(name=f"vnf{index}.{k}", kind="vhostuser", role="vnf", socket_path=str(path)))
    return ports[0], ports[1]
