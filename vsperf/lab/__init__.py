"""The local lab: real topologies of veth ports, namespaces, switches and VNFs on this machine.

The runner uses three functions: `check_prerequisites` (before anything is created),
`build_deployment` (a `vsperf.deployment.Deployment` for p2p, pvp, pvvpN, pvpvN, clean) and
`cleanup_leftovers` (removes what killed runs left behind). The modules they live in import
the vswitch and VNF base classes, which themselves import `vsperf.lab.env`; the functions
below import lazily so that importing any `vsperf.lab` module never cycles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vsperf.context import RunContext
    from vsperf.deployment import Deployment
    from vsperf.executor import Executor
    from vsperf.registry import Registries
    from vsperf.traffic import Traffic

__all__ = ["build_deployment", "check_prerequisites", "cleanup_leftovers"]


def build_deployment(
    name: str,
    *,
    settings: Mapping[str, Any],
    registries: Registries,
    ctx: RunContext,
    traffic: Traffic,
    frame_modification: str | None,
) -> Deployment:
    """The deployment `name` (not deployed yet: use it as a context manager)."""
    from vsperf.lab.deploy import build_deployment as build

    return build(
        name,
        settings=settings,
        registries=registries,
        ctx=ctx,
        traffic=traffic,
        frame_modification=frame_modification,
    )


def check_prerequisites(*, settings: Mapping[str, Any], registries: Registries, deployment: str) -> None:
    """Raise PrerequisiteError (one line: what to install or do) before anything is created."""
    from vsperf.lab.prereq import check_prerequisites as check

    check(settings=settings, registries=registries, deployment=deployment)


def cleanup_leftovers(executor: Executor) -> list[str]:
    """Remove what killed vsperf runs left behind; return a description of each removal."""
    from vsperf.lab.leftovers import cleanup_leftovers as cleanup

    return cleanup(executor)
