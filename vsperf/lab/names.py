"""Names of everything a run creates in the local lab: each carries the tag "vsp" + run id.

The tag is how `cleanup_leftovers` recognises what a killed run left behind, and how two runs
on one machine stay apart. Interface names are limited to 15 characters (IFNAMSIZ - 1), so the
layout is fixed: "vsp" (3) + run id (<= 8) + a role letter + small indices.

| name                 | what                                                              |
|----------------------|-------------------------------------------------------------------|
| vsp<id>s             | namespace of the switch (switch ends of every port, the daemons)  |
| vsp<id>g<i>          | namespace of generator port i                                     |
| vsp<id>g<i>          | generator end of the veth of port i (inside vsp<id>g<i>)          |
| vsp<id>p<i>          | switch end of the veth of port i (inside vsp<id>s)                |
| vsp<id>v<j>          | namespace of VNF j                                                |
| vsp<id>v<j>s<k>      | switch end of VNF j's port k (inside vsp<id>s)                    |
| vsp<id>v<j>i<k>      | VNF end of VNF j's port k (inside vsp<id>v<j>)                    |
| vsp<id>v<j>b         | loopback bridge inside VNF j's namespace                          |
| vsp<id>b<k>          | bridge k of the switch (kernel bridge, or the OVS bridge)         |
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TAG_PREFIX = "vsp"
IFNAME_MAX_CHARS = 15  # IFNAMSIZ (16) minus the terminating NUL
_RUN_ID_RE = re.compile(r"^[0-9a-z]{1,8}$")
# Every tagged name: prefix, run id, then a role letter. Run ids are hex (see
# vsperf.context.new_run_id) so the role letters (b, g, p, s, v) never end a run id ambiguously
# as long as run ids stay within [0-9a-f]; `run_id_of` relies on the state files for the rest.
_TAGGED_RE = re.compile(rf"^{TAG_PREFIX}([0-9a-f]{{1,8}})[bgpsv]")


def check_run_id(run_id: str) -> str:
    """Return `run_id` if it can be part of interface names, else raise ValueError."""
    if not _RUN_ID_RE.match(run_id):
        raise ValueError(f"run id {run_id!r} must be 1-8 lower-case letters or digits")
    return run_id


@dataclass(frozen=True)
class LabNames:
    """Names of the namespaces, links and bridges of one run."""

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
        """Namespace holding the switch, its daemons and the switch ends of every port."""
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

    def vnf_netns(self, vnf: int) -> str:
        """Namespace of VNF `vnf`."""
        return self._name(f"v{vnf}")

    def vnf_switch_if(self, vnf: int, port: int) -> str:
        """Switch end of VNF `vnf`'s port `port` (lives in `switch_netns`)."""
        return self._name(f"v{vnf}s{port}")

    def vnf_inner_if(self, vnf: int, port: int) -> str:
        """VNF end of VNF `vnf`'s port `port` (lives in `vnf_netns(vnf)`)."""
        return self._name(f"v{vnf}i{port}")

    def vnf_bridge(self, vnf: int) -> str:
        """Loopback bridge inside VNF `vnf`'s namespace."""
        return self._name(f"v{vnf}b")

    def bridge(self, index: int = 0) -> str:
        """Bridge `index` of the switch (a kernel bridge or an OVS bridge)."""
        return self._name(f"b{index}")

    def owns(self, name: str) -> bool:
        """True when `name` was made by this run's naming scheme."""
        return name.startswith(self.tag) and len(name) > len(self.tag) and name[len(self.tag)] in "bgpsv"


def is_tagged(name: str) -> bool:
    """True when `name` looks like a name vsperf's lab creates (prefix + hex run id + role)."""
    return _TAGGED_RE.match(name) is not None
