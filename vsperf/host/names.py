"""Names of everything a run creates on any host: each carries the tag "vsp" + run id.

The tag is how a later run recognises what a killed run left behind, and how two runs on one
machine (or one testbed host) stay apart. Interface names are limited to 15 characters
(IFNAMSIZ - 1), so the layout is fixed: "vsp" (3) + run id (<= 8) + a role letter + small indices.

| name                 | what                                                              |
|----------------------|-------------------------------------------------------------------|
| vsp<id>s             | namespace of the switch when the run made its ports (veth pairs)  |
| vsp<id>g<i>          | namespace of generator port i, and its end of the veth            |
| vsp<id>p<i>          | switch end of the veth of port i (in the switch's namespace)      |
| vsp<id>v<j>          | namespace of VNF j                                                |
| vsp<id>v<j>s<k>      | switch end of VNF j's port k (a veth, or a guest's tap)           |
| vsp<id>v<j>i<k>      | VNF end of VNF j's port k (inside vsp<id>v<j>)                    |
| vsp<id>v<j>b         | loopback bridge inside VNF j's namespace                          |
| vsp<id>b<k>          | bridge k of the switch (kernel bridge, or the OVS bridge)         |
| vsp<id><role>        | DPDK file prefix of a process (its runtime dir /var/run/dpdk/...) |
| /tmp/vsperf-<id>-<x> | directory x of the run on a host (files, sockets, logs)           |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

TAG_PREFIX = "vsp"
IFNAME_MAX_CHARS = 15  # IFNAMSIZ (16) minus the terminating NUL
RUN_DIR_PREFIX = "/tmp/vsperf-"  # a run's directories on a host: /tmp/vsperf-RUNID-NAME
DPDK_RUNTIME_ROOT = "/var/run/dpdk"
_RUN_ID_RE = re.compile(r"^[0-9a-z]{1,8}$")
_DIR_NAME_RE = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")
# The first letter of a DPDK role: never a hex digit, so that a run's DPDK prefixes and its run
# directories' pattern (`run_dirs_removal`) never match another run whose id starts with its id.
_DPDK_ROLE_RE = re.compile(r"^[g-z][a-z0-9]*$")
# Every tagged name: prefix, run id, then a role letter. Run ids are hex (see
# vsperf.host.workdir.new_run_id) so the role letters (b, g, p, s, v) never end a run id ambiguously
# as long as run ids stay within [0-9a-f]; the journals say the rest.
_TAGGED_RE = re.compile(rf"^{TAG_PREFIX}([0-9a-f]{{1,8}})[bgpsv]")


def check_run_id(run_id: str) -> str:
    """Return `run_id` if it can be part of interface names, else raise ValueError."""
    if not _RUN_ID_RE.match(run_id):
        raise ValueError(f"run id {run_id!r} must be 1-8 lower-case letters or digits")
    return run_id


@dataclass(frozen=True)
class VnfNames:
    """Names of VNF `index`'s namespace, links and loopback bridge on its host."""

    netns: str
    switch_ifs: tuple[str, str]  # switch end of port 0 and port 1 (in the switch's namespace)
    inner_ifs: tuple[str, str]  # VNF end of port 0 and port 1 (in `netns`)
    bridge: str  # loopback bridge inside `netns`


@dataclass(frozen=True)
class RunNames:
    """Names of the namespaces, links, bridges, directories and DPDK prefixes of one run."""

    run_id: str

    def __post_init__(self) -> None:
        check_run_id(self.run_id)

    @property
    def tag(self) -> str:
        """The prefix every name of this run starts with."""
        return TAG_PREFIX + self.run_id

    def _name(self, suffix: str) -> str:
        name = self.tag + suffix
        if len(name) > IFNAME_MAX_CHARS:
            raise ValueError(f"name {name!r} is longer than {IFNAME_MAX_CHARS} characters")
        return name

    @property
    def switch_netns(self) -> str:
        """Namespace holding the switch, its daemons and the switch ends of the run's veth ports."""
        return self._name("s")

    def gen_netns(self, port: int) -> str:
        """Namespace of generator port `port`."""
        return self._name(f"g{port}")

    def gen_if(self, port: int) -> str:
        """Generator end of the veth of port `port` (lives in `gen_netns(port)`)."""
        return self._name(f"g{port}")

    def phy_if(self, port: int) -> str:
        """Switch end of the veth of port `port` (lives in `switch_netns`)."""
        return self._name(f"p{port}")

    def vnf(self, index: int) -> VnfNames:
        """The names of VNF `index`."""
        base = f"v{index}"
        return VnfNames(self._name(base), (self._name(f"{base}s0"), self._name(f"{base}s1")),
                        (self._name(f"{base}i0"), self._name(f"{base}i1")), self._name(f"{base}b"))

    def bridge(self, index: int = 0) -> str:
        """Bridge `index` of the switch (a kernel bridge or an OVS bridge)."""
        return self._name(f"b{index}")

    def dpdk_prefix(self, role: str) -> str:
        """The DPDK --file-prefix of process `role` (a few letters): its runtime directory is
        /var/run/dpdk/<prefix>, found by the tag after a killed run."""
        if not _DPDK_ROLE_RE.match(role):
            raise ValueError(f"bad DPDK role {role!r}: a letter g-z, then lower-case letters or digits")
        return self.tag + role

    def run_dir(self, name: str) -> PurePosixPath:
        """Directory `name` of the run on a host: /tmp/vsperf-RUNID-NAME (short: unix socket
        paths live there)."""
        if not _DIR_NAME_RE.match(name) or ".." in name:
            raise ValueError(f"bad directory name {name!r}")
        return PurePosixPath(f"{RUN_DIR_PREFIX}{self.run_id}-{name}")

    def owns(self, name: str) -> bool:
        """True when `name` was made by this run's naming scheme (an interface or namespace)."""
        return name.startswith(self.tag) and len(name) > len(self.tag) and name[len(self.tag)] in "bgpsv"

    def owns_path(self, path: str) -> bool:
        """True when `path` is one of this run's directories on a host (a run directory, or the
        DPDK runtime directory of one of its file prefixes)."""
        pure = PurePosixPath(path)
        if str(pure.parent) == "/tmp":
            return pure.name.startswith(f"vsperf-{self.run_id}-")
        return (str(pure.parent) == DPDK_RUNTIME_ROOT and pure.name.startswith(self.tag)
                and _DPDK_ROLE_RE.match(pure.name[len(self.tag):]) is not None)


def is_tagged(name: str) -> bool:
    """True when `name` looks like a name vsperf creates (prefix + hex run id + role)."""
    return _TAGGED_RE.match(name) is not None


def run_dirs_removal(run_id: str) -> list[str]:
    """The command that removes run `run_id`'s directories on a host: /tmp/vsperf-RUNID-* and the
    DPDK runtime directories of its file prefixes, /var/run/dpdk/vspRUNID<role> (a role starts
    with g-z: another run whose id merely starts with this one's, vspRUNID4..., is not matched)."""
    tag = TAG_PREFIX + check_run_id(run_id)
    return ["find", "/tmp", DPDK_RUNTIME_ROOT, "-maxdepth", "1", "(", "-name", f"vsperf-{run_id}-*", "-o",
            "-name", f"{tag}[g-z]*", ")", "-exec", "rm", "-rf", "--", "{}", "+"]
