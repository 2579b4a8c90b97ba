"""The vhost-user ports of a VNF: their sockets in a directory of the run that the lab removes."""

from __future__ import annotations

from pathlib import Path

from vsperf.dpdk.eal import UNIX_PATH_MAX_CHARS
from vsperf.errors import DeploymentError
from vsperf.lab.env import LabEnv
from vsperf.vswitch.base import SwitchPort


def vhost_dir(lab: LabEnv) -> Path:
    """Directory of the vhost-user sockets (its name carries the run id, as removable dirs must)."""
    return lab.work_path(f"vhost-{lab.ctx.run_id}")


def vhost_socket_path(lab: LabEnv, index: int, port: int) -> Path:
    """Socket of VNF `index`'s port `port` (short: unix socket paths are limited to 107 chars)."""
    return vhost_dir(lab) / f"v{index}p{port}.sock"


def vhost_user_ports(lab: LabEnv, index: int) -> tuple[SwitchPort, SwitchPort]:
    """The two vhost-user ports of VNF `index` (their sockets in `vhost_dir`, which the lab removes
    at teardown); DeploymentError when a socket path is too long for a unix socket."""
    lab.track_dir(vhost_dir(lab))
    ports = []
    for k in (0, 1):
        path = vhost_socket_path(lab, index, k)
        if len(str(path)) > UNIX_PATH_MAX_CHARS:
            raise DeploymentError(f"vhost-user socket path too long ({len(str(path))} chars): {path}")
        ports.append(SwitchPort(name=f"vnf{index}.{k}", kind="vhostuser", role="vnf", socket_path=str(path)))
    return ports[0], ports[1]
