"""The interface every traffic generator backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from vsperf.errors import TrafficGenError
from vsperf.host.host import Host
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort


class TrafficGenerator(ABC):
    """A traffic generator backend: a context manager and a `Measurer`.

    It runs on `host` (`vsperf.host.Host`: this machine, or a testbed's generator host;
    `Host.probe()` for the checks made before anything is deployed): every command through its
    executor, every process it leaves running started through it (recorded in the run's
    journal). `start(ports)` connects to (or launches) the generator on the ports the deployment
    gives it; `stop()` releases everything it started. `trial` and `burst` implement
    `vsperf.search.measurer.Measurer`.
    """

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()
    # True when the generator answers from a model instead of sending frames: the runner then
    # deploys nothing and every result says the DUT was simulated.
    SIMULATED: ClassVar[bool] = False
    # True when its ports may be a hardware generator's port locations (a testbed cable's
    # `trafficgen: {location}`) rather than interfaces of the generator host.
    PORT_LOCATIONS: ClassVar[bool] = False
    # True when it sends a frame mix (Traffic.mix: several sizes, interleaved in proportion).
    FRAME_MIX: ClassVar[bool] = False
    # True when one process of the generator owns both ports (TRex): the local lab then puts the
    # generator ends of its ports in one network namespace instead of one each.
    PORTS_IN_ONE_NAMESPACE: ClassVar[bool] = False

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        self.settings = settings
        self.host = host
        # True when the DUT's switch runs on the generator's host, so that the CPUs its PMD
        # threads busy-poll (VSWITCH_PMD_CPU_MASK) are busy there too: always on the local lab;
        # on a testbed the runner sets it (the DUT host is the generator host, by name).
        self.switch_on_host = True

    @classmethod
    def locations_problem(cls, settings: Mapping[str, Any], cabled: Sequence[str]) -> str:
        """Why the settings cannot go with a testbed's cabled port locations `cabled` ("" when
        they can); only for generators with PORT_LOCATIONS."""
        return ""

    @classmethod
    def frame_mix_problem(cls, traffic: Traffic) -> str:
        """Why it cannot send `traffic`'s frame mix ("" when it can, or there is none); asked when
        the run is planned."""
        if traffic.mix is None or cls.FRAME_MIX:
            return ""
        return f"traffic generator {cls.NAME} cannot send the frame mix {traffic.mix.name}"

    def check_prerequisites(self) -> None:  # noqa: B027 - optional hook
        """Raise PrerequisiteError naming what to install or do on `self.host` (a probe of the
        host it will run on); called before anything is created."""

    def start(self, ports: Sequence[GenPort]) -> None:  # noqa: B027 - optional hook
        """Prepare to send on `ports` (two ports: 0 -> 1 and, bidirectionally, 1 -> 0)."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Release every resource started by `start`."""

    @abstractmethod
    def version(self) -> str:
        """Version of the generator, for the report."""

    @abstractmethod
    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        """See `Measurer.trial`."""

    @abstractmethod
    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        """See `Measurer.burst`."""

    def __enter__(self) -> TrafficGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---- What every generator does with a trial before sending it ------------------------------


def check_rate_trial(rate_fps: float, duration_s: float) -> None:
    """TrafficGenError unless the rate and the duration of a rate trial are positive."""
    if rate_fps <= 0 or duration_s <= 0:
        raise TrafficGenError(f"a trial needs a positive rate and duration, got {rate_fps} fps, {duration_s} s")


def check_burst(frames: int) -> None:
    """TrafficGenError unless a burst has at least one frame."""
    if frames <= 0:
        raise TrafficGenError(f"a burst needs at least one frame, got {frames}")


def rate_shares(rate_fps: float, duration_s: float, directions: int) -> tuple[float, list[int]]:
    """A rate trial split evenly over `directions`: the rate of each and the frames each sends
    (at least one)."""
    per_direction = rate_fps / directions
    return per_direction, [max(1, round(per_direction * duration_s))] * directions


def lead_in_note(traffic: Traffic, name: str, pause: str) -> str:
    """What a generator that cannot chain a warm start and a trial without a pause says: the
    warm start is a separate lead-in before the counted frames ("" without a warm start)."""
    warm = traffic.warm_start
    if warm is None:
        return ""
    ramp = " (a ramp is sent as a lead-in at its mean rate)" if warm.mode == "ramp" else ""
    return (f"warm start ({warm.describe()}) sent by {name} as a separate lead-in, {pause} before the counted "
            f"frames{ramp}")


def limits_notes(traffic: Traffic, *, latency: str = "", sizes: str = "", warm: str = "") -> tuple[str, ...]:
    """A trial's notes of what the generator could not do as asked: `latency` when TRAFFIC
    latency_histogram is on, `sizes` for a frame mix, `warm` with a warm start (each "" when it could)."""
    notes = [latency if traffic.latency_histogram else "", sizes if traffic.mix is not None else "",
             warm if traffic.warm_start is not None else ""]
    return tuple(n for n in notes if n)


def burst_shares(frames: int, directions: int) -> list[int]:
    """A burst split over `directions` (the first sends the remainder; each at least one frame)."""
    shares = [frames // directions] * directions
    shares[0] += frames - sum(shares)
    return [max(1, n) for n in shares]
