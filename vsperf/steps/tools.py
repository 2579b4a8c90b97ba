"""The `tools`, `namespace` and `veth` objects of TestSteps (VSPERF's TestStepsTools and its
namespace/veth helpers), run on the DUT host through its executor: every program is in
commands.log, every namespace and veth pair in the run's journal (the release removes them).

`tools exec_shell` runs its command through a shell, as VSPERF did (`sh -c COMMAND`: pipes,
`$((...))`, backquotes, redirections, `;` and `&` work), on the DUT host, in the switch's
namespace on the local lab (where its ports and bridges are). `sudo X ...` runs X anywhere in the
command (vsperf runs as root on its hosts; sudo need not be installed): a shell function `sudo`
is defined ahead of the command. `ovs-vsctl`, `ovs-ofctl`, `ovs-appctl` and `ovs-dpctl`, bare or
as `$TOOLS["ovs-vsctl"]`, reach the test's own Open vSwitch instance, never the system's: the
command's environment is the instance's (OVS_RUNDIR, OVS_DBDIR, ...: ovs-vsctl's default database
is its db.sock, ovs-ofctl finds its bridges' sockets there, ovs-appctl -t NAME its NAME.<pid>.ctl).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vsperf.config.pyexpr import Evaluator, NotComputable
from vsperf.errors import CommandError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess
from vsperf.steps.macros import StepError, filter_output
from vsperf.steps.model import check_command
from vsperf.traffic.streams import BENCHMARK_NET
from vsperf.vswitch.ovs import OvsVSwitch

SHELL_TIMEOUT_S = 120.0
OVS_PROGRAMS = ("ovs-vsctl", "ovs-ofctl", "ovs-appctl", "ovs-dpctl")
# VSPERF's TOOLS: the programs' names here (their paths on VSPERF's machine); the environment of a
# shell step points the OVS programs at the test's instance.
TOOLS = {name: name for name in (*OVS_PROGRAMS, "ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "qemu-system-x86_64",
                                 "bind-tool")}


# `sudo [-E|-H|-n|-S|--] X ...` runs X: vsperf is root on its hosts, where sudo may be missing.
SUDO_FUNCTION = 'sudo() { while [ $# -gt 0 ]; do case "$1" in -E|-H|-n|-S) shift;; --) shift; break;; ' \
                '*) break;; esac; done; "$@"; }'


def shell_argv(command: str) -> list[str]:
    """The argument list that runs `command` through a shell, `sudo` defined as above."""
    return ["sh", "-c", f"{SUDO_FUNCTION}\n{command}"]


@dataclass
class StepTools:
    """`tools`, `namespace` and `veth` on the DUT host (`host` None: a simulated DUT)."""

    host: Host | None
    netns: str | None  # the switch's namespace: the "root" namespace of the steps
    switch: OvsVSwitch | None = None
    lab: bool = True  # the local lab: addresses only inside 198.18.0.0/15
    background: list[HostProcess] = field(default_factory=list)

    def _host(self, what: str) -> Host:
        if self.host is None:
            raise StepError(f"{what} needs a deployed DUT: the DUT is simulated (TRAFFICGEN dummy)")
        return self.host

    # --- tools --------------------------------------------------------------------------------

    def assert_(self, condition: Any) -> bool:
        try:
            value = Evaluator().expression(str(condition))
        except NotComputable as exc:
            raise StepError(f"cannot evaluate {str(condition)[:80]!r}: {exc.problem}") from None
        if not value:
            raise StepError(f"condition {str(condition)[:120]!r} is not true")
        return True

    def eval(self, expression: Any) -> Any:
        try:
            return Evaluator().expression(str(expression))
        except NotComputable as exc:
            raise StepError(f"cannot evaluate {str(expression)[:80]!r}: {exc.problem}") from None

    def _shell(self, command: Any) -> tuple[list[str], dict[str, str] | None]:
        problem = check_command(str(command))
        if problem:
            raise StepError(problem)
        return shell_argv(str(command)), (self.switch.env() if self.switch is not None else None)

    def exec_shell(self, command: Any, regex: str | None = None) -> Any:
        host = self._host("tools exec_shell")
        argv, env = self._shell(command)
        try:
            proc = host.executor.run(argv, netns=self.netns, env=env, timeout_s=SHELL_TIMEOUT_S, check=False)
        except CommandError as exc:
            raise StepError(str(exc)) from exc
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise StepError(f"the command exited with {proc.returncode}" + (f": {detail[-1][:200]}" if detail else ""))
        return filter_output(proc.stdout, regex) if regex else proc.stdout

    def exec_shell_background(self, command: Any) -> int:
        host = self._host("tools exec_shell_background")
        argv, env = self._shell(command)
        proc = host.spawn("step shell", argv, netns=self.netns, env=env,
                          log_path=host.log_path(f"step-{len(self.background)}-shell"))
        self.background.append(proc)
        return proc.pid

    def stop_background(self) -> None:
        """Stop what exec_shell_background started (teardown)."""
        while self.background:
            proc = self.background.pop()
            if self.host is not None:
                self.host.stop_process(proc)

    # --- namespace and veth ---------------------------------------------------------------------

    def _check_address(self, address: str) -> None:
        if self.lab and ipaddress.IPv4Address(address) not in BENCHMARK_NET:
            raise StepError(f"address {address} is outside {BENCHMARK_NET}: the local lab uses only that range")

    def create_namespace(self, name: str) -> None:
        self._host("namespace").net.add_netns(str(name))

    def delete_namespace(self, name: str) -> None:
        self._host("namespace").net.del_netns(str(name))

    def assign_port_to_namespace(self, port: str, name: str, port_up: Any = False) -> None:
        host = self._host("namespace")
        host.run(["ip", *self._ns(self.netns), "link", "set", "dev", str(port), "netns", str(name)])
        if str(port_up).lower() in ("true", "yes", "1"):
            host.run(["ip", "-n", str(name), "link", "set", "dev", str(port), "up"])

    def add_ip_to_namespace_eth(self, port: str, name: str, address: str, cidr: Any) -> None:
        self._check_address(str(address))
        self._host("namespace").run(["ip", "-n", str(name), "addr", "add", f"{address}/{cidr}", "dev", str(port)])

    def reset_port_to_root(self, port: str, name: str) -> None:
        target = self.netns or "1"  # pid 1's namespace: the host's own
        self._host("namespace").run(["ip", "-n", str(name), "link", "set", "dev", str(port), "netns", target])

    def add_veth_port(self, port: str, peer_port: str) -> None:
        self._host("veth").net.add_veth(str(port), self.netns, str(peer_port), self.netns, mtu_bytes=1500)

    def del_veth_port(self, port: str, peer_port: str) -> None:
        self._host("veth").net.del_link(str(port), self.netns)

    def bring_up_eth_port(self, eth_port: str, namespace: str | None = None) -> None:
        self._host("veth").run(["ip", *self._ns(namespace or self.netns), "link", "set", "dev", str(eth_port), "up"])

    @staticmethod
    def _ns(netns: str | None) -> list[str]:
        return ["-n", netns] if netns else []

    def check(self, action: str, result: Any, args: Mapping[int, Any] | Any) -> bool:
        """VSPERF's checks of tools: assert and exec_shell return a result; eval something."""
        if action == "eval":
            return result is not None
        return True
