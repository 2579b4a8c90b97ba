"""vsperf.deploy.base: the deployments that deploy nothing (a simulated DUT, --mode trafficgen with a
generator's own ports), and the context-manager contract every deployment keeps."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from vsperf.deploy.base import Deployment, NoDeployment, SimulatedDeployment
from vsperf.errors import DeploymentError
from vsperf.traffic.ports import GenPort


def test_a_simulated_dut_deploys_nothing_and_says_so() -> None:
    with SimulatedDeployment("pvp") as deployment:
        assert deployment.gen_ports == () and deployment.dut_pids() == {} and deployment.dut_ports() == ()
        assert [(c.role, c.name, c.version, c.details) for c in deployment.components()] == [
            ("vswitch", "simulated", "n/a", {"note": "device under test simulated"})]
        deployment.check_alive()
    with NoDeployment("p2p") as nothing:
        assert nothing.components() == [] and nothing.gen_ports == ()


class HalfDeployed(Deployment):
    """Fails half-way through deploy; records what teardown is asked to do."""

    name = "half"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def deploy(self) -> None:
        self.calls.append("deploy")
        raise DeploymentError("the switch did not start")

    def teardown(self) -> None:
        self.calls.append("teardown")

    @property
    def gen_ports(self) -> Sequence[GenPort]:
        return ()


def test_teardown_runs_after_a_failed_deploy() -> None:
    deployment = HalfDeployed()
    with pytest.raises(DeploymentError, match="the switch did not start"), deployment:
        pass
    assert deployment.calls == ["deploy", "teardown"]
