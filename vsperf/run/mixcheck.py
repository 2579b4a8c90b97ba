"""Frame mixes (IMIX) checked when a test is planned: a traffic type or a generator that cannot
send one refuses it in one line, before anything is deployed."""

from __future__ import annotations

from collections.abc import Sequence

from vsperf.errors import ConfigError
from vsperf.run.kinds import TrafficPlan
from vsperf.trafficgen.base import TrafficGenerator


def check_frame_mixes(test_name: str, frames: Sequence[TrafficPlan], generator: type[TrafficGenerator]) -> None:
    """ConfigError when a frame size of `frames` is a mix that the test's traffic type or
    `generator` cannot send."""
    mixed = [f.traffic for f in frames if f.traffic.mix is not None]
    if not mixed or mixed[0].mix is None:
        return
    name, traffic_type = mixed[0].mix.name, mixed[0].traffic_type
    why = frames[0].kind.no_mix
    if why:
        raise ConfigError(f"test {test_name}: {traffic_type} cannot send the frame mix {name} ({why}); "
                          f"give it frame sizes in TRAFFICGEN_PKT_SIZES, with TRAFFIC imix disabled")
    for traffic in mixed:
        if why := generator.frame_mix_problem(traffic):
            raise ConfigError(f"test {test_name}: {why}; use --trafficgen vsgen, trafgen, trex, otg or dummy")
