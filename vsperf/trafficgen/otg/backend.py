"""otg: any Open Traffic Generator controller through snappi (Ixia-c/KENG, IxNetwork, vsgen).

One trial is one configuration (vsperf.trafficgen.otg.flows): set_config, start every flow,
poll the flow metrics until each flow reports `stopped`, wait the residual time (RFC 2544),
read frames_tx/frames_rx and store-and-forward latency, stop. The search stays in vsperf; the
controller only runs trials. Ixia hardware was not available to test this backend: it is
tested against vsgen's own OTG server (`vsperf otg-server`, vsperf.trafficgen.otg.server).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar, Literal
from urllib.parse import urlparse

from vsperf.errors import ConfigError, PrerequisiteError, TrafficGenError
from vsperf.host.host import Host
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.base import TrafficGenerator, check_burst, check_rate_trial, lead_in_note, limits_notes
from vsperf.trafficgen.otg import client
from vsperf.trafficgen.otg.flows import FlowPlan, burst_plans, rate_plans, trial_config
from vsperf.trafficgen.otg.metrics import FlowCounts, flow_counts, trial_result

log = logging.getLogger(__name__)

# VSPERF's Ixia settings that describe the two ports (aliases of TRAFFICGEN_OTG_PORTS).
IXIA_PORT_SETTINGS = ("TRAFFICGEN_IXIA_HOST", "TRAFFICGEN_IXIA_CARD", "TRAFFICGEN_IXIA_PORT1", "TRAFFICGEN_IXIA_PORT2")


def port_locations(settings: Mapping[str, Any], ports: Sequence[GenPort]) -> list[str]:
    """The controller's locations of the two generator ports.

    TRAFFICGEN_OTG_PORTS (or VSPERF's Ixia settings, `configured_ports`) when set (hardware:
    "chassis;card;port", Ixia-c: "host:port", ...);
    otherwise the ports' own: a testbed cable's `location` (a hardware generator's port), else
    "IFNAME@NETNS" (the local lab's ports, which vsgen's OTG server on this machine opens) or
    the interface name (a testbed's generator host). Set both, they must agree.

    In op2p decapsulation the deployment hands the tunnel side, generator port 2, first (it
    sends, inside the tunnel: its `encap`): the configured locations are taken in that order too."""
    configured = configured_ports(settings)
    swapped = len(ports) >= 2 and ports[0].encap is not None
    cabled = [p.location for p in ports[:2] if p.location]
    conflict = locations_conflict(configured, cabled[::-1] if swapped else cabled)
    if conflict:
        raise ConfigError(conflict)
    if configured:
        if len(configured) != 2:
            raise ConfigError(f"TRAFFICGEN_OTG_PORTS needs two port locations, got {len(configured)}")
        return configured[::-1] if swapped else configured
    if len(ports) < 2:
        raise TrafficGenError(f"otg needs two generator ports, the deployment gave {len(ports)}")
    return [p.location or (f"{p.ifname}@{p.netns}" if p.netns else p.ifname) for p in ports[:2]]


def configured_ports(settings: Mapping[str, Any]) -> list[str]:
    """The port locations the settings give: TRAFFICGEN_OTG_PORTS, or when it is empty VSPERF's
    TRAFFICGEN_IXIA_HOST, _CARD, _PORT1 and _PORT2 as "HOST;CARD;PORT1", "HOST;CARD;PORT2" (the
    location form of Ixia chassis ports); [] when neither is set."""
    configured = [str(p) for p in settings["TRAFFICGEN_OTG_PORTS"]]
    ixia = [str(settings[name]).strip() for name in IXIA_PORT_SETTINGS]
    if configured or not any(ixia):
        return configured
    if not all(ixia):
        unset = ", ".join(name for name, value in zip(IXIA_PORT_SETTINGS, ixia, strict=True) if not value)
        raise ConfigError(f"VSPERF's TRAFFICGEN_IXIA_HOST, _CARD, _PORT1 and _PORT2 give the otg generator's ports "
                          f"together, {unset} empty: set them, or TRAFFICGEN_OTG_PORTS")
    host, card, port1, port2 = ixia
    return [f"{host};{card};{port1}", f"{host};{card};{port2}"]


def locations_conflict(configured: Sequence[str], cabled: Sequence[str]) -> str:
    """Why TRAFFICGEN_OTG_PORTS (`configured`) cannot go with a testbed's cabled generator
    locations (`cabled`): "" when either is empty or they are the same."""
    if configured and cabled and list(configured) != list(cabled):
        return (f"TRAFFICGEN_OTG_PORTS {list(configured)} differ from the testbed's cabled generator ports "
                f"{list(cabled)}: leave TRAFFICGEN_OTG_PORTS empty (the testbed file's cabling is used)")
    return ""


def check_location(location: str) -> str:
    """TRAFFICGEN_OTG_LOCATION as an http(s) URL, or a one-line ConfigError."""
    parsed = urlparse(location)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(
            f"TRAFFICGEN_OTG_LOCATION must be the controller's URL, e.g. https://10.0.0.5:8443 or "
            f"http://127.0.0.1:8080 (vsperf otg-server), got {location!r}"
        )
    return location.rstrip("/")


class OtgTrafficGenerator(TrafficGenerator):
    """Ixia-c/KENG, IxNetwork, vsperf otg-server via snappi (needs vsperf[otg], TRAFFICGEN_OTG_LOCATION)."""

    NAME: ClassVar[str] = "otg"
    FRAME_MIX: ClassVar[bool] = True
    ALIASES: ClassVar[tuple[str, ...]] = ("Ixia", "IxNet")
    PORT_LOCATIONS: ClassVar[bool] = True  # it sends a testbed cable's locations to its controller
    # Frames inside VXLAN, GENEVE and GRE (op2p decapsulation), as vsgen builds them (otg.tunnel).
    TUNNEL_FRAMES: ClassVar[bool] = True

    @classmethod
    def locations_problem(cls, settings: Mapping[str, Any], cabled: Sequence[str]) -> str:
        return locations_conflict(configured_ports(settings), cabled)

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._api: Any = None
        self._ports: tuple[GenPort, ...] = ()
        self._locations: list[str] = []
        self._version = ""

    @property
    def location(self) -> str:
        return check_location(str(self.settings["TRAFFICGEN_OTG_LOCATION"]))

    # --- lifecycle ----------------------------------------------------------------------------

    def _connect(self) -> Any:
        if self._api is None:
            self._api = client.connect(self.location, bool(self.settings["TRAFFICGEN_OTG_VERIFY_TLS"]),
                                       float(self.settings["TRAFFICGEN_OTG_TIMEOUT_S"]),
                                       str(self.settings["TRAFFICGEN_OTG_EXT"]))
        return self._api

    def check_prerequisites(self) -> None:
        client.load_snappi()
        location = self.location
        try:
            self._version = self._query_version()
        except TrafficGenError as exc:
            raise PrerequisiteError(
                f"{exc}; start the controller (for the local lab: vsperf otg-server --listen 127.0.0.1:PORT) "
                f"or set TRAFFICGEN_OTG_LOCATION (now {location})"
            ) from None

    def _query_version(self) -> str:
        api = self._connect()
        reply = client.call("get_version", self.location, api.get_version)
        app = str(reply.app_version or "unknown controller")
        return f"{app} (OTG API {reply.api_spec_version or '?'}, snappi {client.snappi_version() or '?'})"

    def version(self) -> str:
        if not self._version:
            try:
                self._version = self._query_version()
            except (TrafficGenError, PrerequisiteError, ConfigError) as exc:
                return f"unknown ({exc})"
        return self._version

    def start(self, ports: Sequence[GenPort]) -> None:
        self._locations = port_locations(self.settings, ports)
        if not self.settings["TRAFFICGEN_OTG_PORTS"] and any(str(self.settings[n]) for n in IXIA_PORT_SETTINGS):
            log.info("otg: port locations %s from VSPERF's TRAFFICGEN_IXIA_HOST, _CARD, _PORT1, _PORT2 "
                     "(TRAFFICGEN_OTG_PORTS is empty)", ", ".join(self._locations))
        self._ports = tuple(ports)
        self._connect()
        log.debug("otg: controller %s, ports %s", self.location, ", ".join(self._locations))

    def stop(self) -> None:
        api, self._api = self._api, None
        if api is not None:
            try:
                self._transmit(api, "stop")
            except TrafficGenError as exc:  # nothing of ours may be running: say so, go on
                log.debug("otg: stopping traffic at teardown: %s", exc)
        self._ports = ()

    # --- trials -------------------------------------------------------------------------------

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        check_rate_trial(rate_fps, duration_s)
        plans = rate_plans(self._directions(traffic), rate_fps, duration_s)
        warm = self._warm_up(traffic, rate_fps)
        counts = self._run(traffic, plans, duration_s)
        return self._result("rate", traffic, plans, counts, rate_fps, duration_s, warm)

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        check_burst(frames)
        plans = burst_plans(self._directions(traffic), frames)
        expected_s = frames / max(1.0, traffic.line_rate_fps)
        warm = self._warm_up(traffic, traffic.line_rate_fps)
        counts = self._run(traffic, plans, expected_s)
        return self._result("burst", traffic, plans, counts, traffic.line_rate_fps, 0.0, warm)

    def _warm_up(self, traffic: Traffic, rate_fps: float) -> int:
        """The warm start as flows of their own before the trial's (a ramp at its mean rate); the
        frames they sent (0 without one)."""
        warm = traffic.warm_start
        if warm is None:
            return 0
        count = max(1, warm.frames(rate_fps))
        plans = rate_plans(self._directions(traffic), count / warm.duration_s, warm.duration_s)
        return sum(c.frames_tx for c in self._run(traffic, plans, warm.duration_s))

    # --- internals ----------------------------------------------------------------------------

    def _directions(self, traffic: Traffic) -> list[Any]:
        if self._api is None or len(self._ports) < 2:
            raise TrafficGenError("otg: trial before start(ports)")
        try:
            return list(directions(traffic, self._ports))
        except ConfigError as exc:
            raise TrafficGenError(f"otg: {exc}") from exc

    def _transmit(self, api: Any, state: Literal["start", "stop"], names: Sequence[str] = ()) -> None:
        control = api.control_state()
        control.traffic.flow_transmit.state = state
        control.traffic.flow_transmit.flow_names = list(names)
        client.call(f"{state} traffic", self.location, api.set_control_state, control)

    def _metrics(self, api: Any, names: Sequence[str]) -> list[FlowCounts]:
        request = api.metrics_request()
        request.flow.flow_names = list(names)
        reply = client.call("get_metrics", self.location, api.get_metrics, request)
        return [flow_counts(m) for m in reply.flow_metrics]

    def _run(self, traffic: Traffic, plans: Sequence[FlowPlan], expected_s: float) -> list[FlowCounts]:
        api = self._connect()
        try:
            config = trial_config(api, traffic, self._locations, plans, [p.encap for p in self._ports[:2]])
        except (ValueError, TypeError) as exc:
            raise TrafficGenError(f"otg: cannot express the trial as an OTG config: {exc}") from exc
        names = [p.name for p in plans]
        client.call("set_config", self.location, api.set_config, config)
        self._transmit(api, "start", names)
        try:
            self._wait_stopped(api, names, expected_s)
        except BaseException:
            self._transmit(api, "stop", names)
            raise
        residual = float(self.settings["TRAFFICGEN_RESIDUAL_WAIT_S"])
        time.sleep(residual)  # RFC 2544: in-flight frames arrive before the counters are read
        counts = self._metrics(api, names)
        self._transmit(api, "stop", names)
        return counts

    def _wait_stopped(self, api: Any, names: Sequence[str], expected_s: float) -> None:
        poll_s = float(self.settings["TRAFFICGEN_OTG_POLL_S"])
        deadline = time.monotonic() + expected_s + float(self.settings["TRAFFICGEN_OTG_STOP_TIMEOUT_S"])
        time.sleep(expected_s)  # nothing can have stopped before the flows' planned end
        while True:
            counts = self._metrics(api, names)
            if counts and all(c.transmit == "stopped" for c in counts):
                return
            if time.monotonic() > deadline:
                running = [c.name for c in counts if c.transmit != "stopped"]
                raise TrafficGenError(
                    f"otg: flow(s) {', '.join(running) or '?'} still transmitting "
                    f"{self.settings['TRAFFICGEN_OTG_STOP_TIMEOUT_S']} s after they should have ended "
                    "(TRAFFICGEN_OTG_STOP_TIMEOUT_S)"
                )
            time.sleep(poll_s)

    def _result(self, kind: Literal["rate", "burst"], traffic: Traffic, plans: Sequence[FlowPlan],
                counts: Sequence[FlowCounts], rate_fps: float, duration_s: float, warm_frames: int) -> TrialResult:
        try:
            result = replace(trial_result(kind, traffic, plans, counts, rate_fps, duration_s),
                             warm_frames=warm_frames, notes=limits_notes(
                                 traffic, latency="OTG flow metrics give latency as minimum, average and maximum: "
                                                  "no latency distribution",
                                 sizes="OTG flow metrics count frames, not their sizes: frames received per size "
                                       "not measured",
                                 warm=lead_in_note(traffic, "the OTG controller",
                                                   "a residual wait (TRAFFICGEN_RESIDUAL_WAIT_S)")))
        except ValueError as exc:
            raise TrafficGenError(f"otg: {exc}") from exc
        log.debug("otg %s trial: %d frames sent, %d received, %.1f fps achieved, flags %s", kind,
                  result.tx_frames, result.rx_frames, result.actual_tx_rate_fps, ",".join(result.flags) or "-")
        return result
