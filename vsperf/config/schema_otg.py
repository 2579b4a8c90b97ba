"""Settings of the otg generator (Open Traffic Generator controllers via snappi). Defaults:
conf/08_otg.yaml."""

from __future__ import annotations

from vsperf.config.types import NAME, SECONDS, Bool, Int, ListOf, OneOf, Setting, Str

_IXIA_PART = OneOf(Str(), Int(min=0, max=65535))  # VSPERF writes '1'; --test-params reads 1 as a number

SETTINGS: dict[str, Setting] = {
    "TRAFFICGEN_OTG_LOCATION": Setting(
        Str(),
        "URL of the OTG controller (TRAFFICGEN: otg), e.g. https://10.0.0.5:8443 for Ixia-c/KENG or "
        "http://127.0.0.1:8080 for vsperf otg-server."),
    "TRAFFICGEN_OTG_VERIFY_TLS": Setting(
        Bool(),
        "Verify the controller's TLS certificate (https locations); false for self-signed controllers."),
    "TRAFFICGEN_OTG_PORTS": Setting(
        ListOf(NAME),
        "Locations of the two generator ports as the controller names them (e.g. 'chassis;1;1'); "
        "empty: the deployment's generator ports as IFNAME@NETNS (vsperf otg-server on this machine)."),
    # VSPERF's Ixia settings, aliases of TRAFFICGEN_OTG_PORTS (vsperf.trafficgen.otg.backend.configured_ports).
    "TRAFFICGEN_IXIA_HOST": Setting(
        Str(),
        "VSPERF's Ixia chassis address: with TRAFFICGEN_IXIA_CARD, _PORT1 and _PORT2 the otg generator's "
        "port locations 'HOST;CARD;PORT1' and 'HOST;CARD;PORT2' when TRAFFICGEN_OTG_PORTS is empty."),
    "TRAFFICGEN_IXIA_CARD": Setting(_IXIA_PART, "VSPERF's Ixia card of both ports (see TRAFFICGEN_IXIA_HOST)."),
    "TRAFFICGEN_IXIA_PORT1": Setting(_IXIA_PART, "VSPERF's Ixia port of generator port 0 (see TRAFFICGEN_IXIA_HOST)."),
    "TRAFFICGEN_IXIA_PORT2": Setting(_IXIA_PART, "VSPERF's Ixia port of generator port 1 (see TRAFFICGEN_IXIA_HOST)."),
    "TRAFFICGEN_OTG_EXT": Setting(
        Str(choices=("", "ixnetwork")),
        "snappi extension to drive the controller with: empty (the OTG HTTP API: Ixia-c, KENG, vsperf "
        "otg-server) or ixnetwork (IxNetwork through snappi-ixnetwork: pip install 'vsperf[ixnetwork]')."),
    "TRAFFICGEN_OTG_TIMEOUT_S": Setting(
        SECONDS,
        "Longest wait for one answer of the controller."),
    "TRAFFICGEN_OTG_POLL_S": Setting(
        SECONDS,
        "Interval of the flow metrics polls that wait for a trial's flows to stop."),
    "TRAFFICGEN_OTG_STOP_TIMEOUT_S": Setting(
        SECONDS,
        "How long after their planned end the flows may still transmit before the trial fails."),
}
