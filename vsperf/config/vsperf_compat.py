"""VSPERF's settings as vsperf reads them: names of backends, settings vsperf has no use for, TRAFFIC
keys of features it does not have, and a conf file's TEST_PARAMS.

`translate_layer` runs on every raw layer (conf file, environment, --test-params, a test case's
Parameters) before it is validated:

- a backend named as VSPERF named it (`TRAFFICGEN = 'Dummy'`, `VSWITCH = 'OvsDpdkVhost'`,
  `LOADGEN = 'StressNg'`) becomes vsperf's name (`dummy`, `ovs-dpdk`, `stress-ng`); VPP, which
  vsperf cannot run here, is refused with the reason (PrerequisiteError);
- a setting of VSPERF's that vsperf does not use (`TRAFFICGEN_STC_*`, `GUEST_IMAGE`, `PATHS`, ...)
  is dropped with one warning listing them, so that a user's 10_custom.conf loads unchanged; any
  other unknown name still fails validation, naming the closest valid one (VSPERF's
  TRAFFICGEN_IXIA_HOST, _CARD, _PORT1, _PORT2 are settings of the otg generator, its ports;
  TRAFFICGEN_IXNET_MACHINE/_PORT name IxNetwork's Tcl server, not the REST API server
  snappi-ixnetwork talks to: dropped, with a hint naming TRAFFICGEN_OTG_LOCATION);
- `TRAFFIC` keys of VSPERF features vsperf does not have (flow_control) are dropped while
  disabled and refused when enabled; `scapy` is dropped (`imix`, `latency_histogram` and
  `capture` are vsperf's settings too: see vsperf.config.schema_core);
- VSPERF's TRex settings of its own search are read as vsperf's search settings, which every
  generator's trials serve (`TREX_SEARCH_SETTINGS`): TRAFFICGEN_TREX_VERIFICATION_MODE and
  _DURATION as TRAFFICGEN_RFC2544_VERIFY and _VERIFY_DURATION_S, TRAFFICGEN_TREX_FORCE_PORT_SPEED
  with _PORT_SPEED (Mbit/s) as TRAFFICGEN_PORT_SPEED_GBPS; a layer that sets vsperf's name too
  keeps it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from vsperf.errors import ConfigError, PrerequisiteError, UserError

log = logging.getLogger(__name__)

VPP_MISSING = "VPP is not packaged for Debian 12 and vsperf has no VPP backend yet"

# VSPERF's class names of backends -> vsperf's registry names.
BACKEND_NAMES: dict[str, dict[str, str]] = {
    "TRAFFICGEN": {"Dummy": "dummy", "Ixia": "otg", "IxNet": "otg"},
    "VSWITCH": {"OvsVanilla": "ovs", "OvsDpdkVhost": "ovs-dpdk", "none": "none"},
    "LOADGEN": {"StressNg": "stress-ng"},
    "VNF": {},
}

# VSPERF's backends that vsperf does not have and cannot run here: why. (The registries know
# VSPERF's other class names as aliases of vsperf's backends, e.g. QemuDpdkVhostUser; a name no
# registry knows is refused there, listing the valid ones.)
MISSING_BACKENDS: dict[str, dict[str, str]] = {
    "VSWITCH": {"VppDpdkVhost": VPP_MISSING},
}

# Settings of VSPERF's that vsperf does not use: families by prefix (one per VSPERF backend or
# tool vsperf does not have) and single names.
IGNORED_PREFIXES = (
    "TRAFFICGEN_STC_", "TRAFFICGEN_IXIA_", "TRAFFICGEN_IXNET_", "TRAFFICGEN_XENA_",
    "TRAFFICGEN_MOONGEN_", "TRAFFICGEN_TREX_", "COLLECTD_", "CADVISOR_", "MC_", "NN_", "LOG_FILE_",
    "VSWITCH_VPP_", "OPNFV",
    # the decapsulation test frames of VSPERF's Ixia driver: vsperf builds them from the deployment
    "VXLAN_FRAME_", "GRE_FRAME_", "GENEVE_FRAME_",
)
IGNORED_NAMES = frozenset({
    "COLLECTOR_DIR", "CUMULATIVE_PARAMS", "DEFAULT_CMD_LOCALE", "DEFAULT_LOCALE",
    "EXCLUDE_MODULES", "GUEST_BOOT_DRIVE_TYPE", "GUEST_BRIDGE_IP", "GUEST_CPU_OPTIONS",
    "GUEST_DPDK_BIND_DRIVER", "GUEST_NICS", "GUEST_NIC_MERGE_BUFFERS_DISABLE", "GUEST_NIC_QUEUES",
    "GUEST_OVS_DPDK_DIR", "GUEST_OVS_DPDK_SHARE", "GUEST_QUEUE_STATS_MAPPING",
    "GUEST_SHARED_DRIVE_TYPE", "GUEST_SHARE_DIR", "GUEST_START_TIMEOUT", "GUEST_THREAD_BINDING",
    "LOADGEN_DIR", "OVS_APPCTL_ARGS", "OVS_CMD_TIMEOUT",
    "OVS_FLOW_TEMPLATE", "OVS_OFCTL_ARGS", "OVS_OLD_STYLE_MQ", "OVS_ROUTING_TABLES",
    "OVS_VSCTL_ARGS", "PACKAGE_LIST", "PATHS", "PIDSTAT_MONITOR", "PIDSTAT_OPTIONS",
    "PIDSTAT_SAMPLE_INTERVAL", "PKTFWD", "PKTFWD_DIR", "ROOT_DIR", "RTE_TARGET", "SHELL_CMD",
    "SYSMETRICS_DIR", "TESTPMD_CSUM_CALC", "TESTPMD_CSUM_LAYER", "TESTPMD_CSUM_PARSE_TUNNEL",
    "TEST_STEP_DELAY", "TRAFFICGEN_DIR", "TRAFFICGEN_DUMMY_RESULTS", "TRAFFICGEN_RFC2889_TRIALS",
    "VANILLA_TGEN_PORT1_IP", "VANILLA_TGEN_PORT1_MAC", "VANILLA_TGEN_PORT2_IP",
    "VANILLA_TGEN_PORT2_MAC", "VHOST_DEV_FILE", "VHOST_USER_SOCKS", "VNF_AFFINITIZATION_ON",
    "VNF_DIR", "VSWITCHD_DPDK_ARGS", "VSWITCHD_VANILLA_ARGS", "VSWITCH_AFFINITIZATION_ON",
    "VSWITCH_BRIDGE_NAME", "VSWITCH_DIR", "VSWITCH_DPDK_MULTI_QUEUES", "VSWITCH_FLOW_TIMEOUT",
    "VSWITCH_VHOST_CPU_MAP",
    "VSWITCH_VHOST_NET_AFFINITIZATION", "WHITELIST_NICS",
    "NICS",  # the DUT's NICs: what the deployment has (steps' $NICS, vsperf.steps.build.dut_nics)
})

# TRAFFIC keys of VSPERF features vsperf does not have: accepted while off.
_OFF_WHEN_DISABLED: tuple[str, ...] = ()
_DROPPED_TRAFFIC_KEYS = ("scapy",)  # T-Rex frame templates: vsperf builds its frames itself

TEST_PARAMS = "TEST_PARAMS"
TREX_SEARCH_SETTINGS = {"TRAFFICGEN_TREX_VERIFICATION_MODE": "TRAFFICGEN_RFC2544_VERIFY",
                        "TRAFFICGEN_TREX_VERIFICATION_DURATION": "TRAFFICGEN_RFC2544_VERIFY_DURATION_S"}
TREX_FORCE_SPEED, TREX_SPEED = "TRAFFICGEN_TREX_FORCE_PORT_SPEED", "TRAFFICGEN_TREX_PORT_SPEED"
IXNET_MACHINE = "TRAFFICGEN_IXNET_MACHINE"


def is_ignored_vsperf_setting(name: str) -> bool:
    """Whether `name` is one of VSPERF's settings that vsperf does not use."""
    return name in IGNORED_NAMES or name.startswith(IGNORED_PREFIXES)


def missing_backend(setting: str, name: object) -> UserError | None:
    """The error for a VSPERF backend vsperf does not have (VPP: a PrerequisiteError), or None."""
    reason = MISSING_BACKENDS.get(setting, {}).get(name) if isinstance(name, str) else None
    if reason is None:
        return None
    error = PrerequisiteError if reason == VPP_MISSING else ConfigError
    return error(f"{setting} {name!r}: {reason}")


def backend_name(setting: str, name: object, where: str) -> object:
    """vsperf's name of the backend VSPERF called `name` for `setting` (TRAFFICGEN, VSWITCH, VNF,
    LOADGEN); other values are returned unchanged. A VSPERF backend vsperf lacks is refused."""
    if not isinstance(name, str) or setting not in BACKEND_NAMES:
        return name
    if name in BACKEND_NAMES[setting]:
        return BACKEND_NAMES[setting][name]
    error = missing_backend(setting, name)
    if error is not None:
        raise type(error)(f"{error} (from {where})")
    return name


def _truthy(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes")
    return bool(value)


def _traffic(value: object, where: str) -> object:
    if not isinstance(value, Mapping):
        return value
    out = dict(value)
    for key in _DROPPED_TRAFFIC_KEYS:
        out.pop(key, None)
    if "flow_control" in out:
        if _truthy(out["flow_control"]):
            raise ConfigError(f"TRAFFIC.flow_control ({where}): flow control is not supported by vsperf's "
                              f"generators; remove it or set it to False")
        del out["flow_control"]
    for key in _OFF_WHEN_DISABLED:
        if key not in out:
            continue
        section = out[key]
        if isinstance(section, Mapping) and not _truthy(section.get("enabled", False)):
            del out[key]
        else:
            raise ConfigError(f"TRAFFIC.{key} ({where}): VSPERF's {key} feature is not supported by "
                              f"vsperf yet; remove it or set its 'enabled' to False")
    return out


def _grouped(names: list[str]) -> list[str]:
    """Names, a VSPERF backend's family shown once as PREFIX* (count)."""
    families: dict[str, int] = {}
    single: list[str] = []
    for name in names:
        prefix = next((p for p in IGNORED_PREFIXES if name.startswith(p)), None)
        if prefix is None:
            single.append(name)
        else:
            families[prefix] = families.get(prefix, 0) + 1
    return sorted(single) + [f"{p}* ({n})" for p, n in sorted(families.items())]


def translate_layer(raw: Mapping[Any, Any], where: str, known: Mapping[str, Any]) -> dict[Any, Any]:
    """One raw layer with VSPERF's spellings turned into vsperf's (see the module docstring).

    `known` is the settings schema: a name it holds is never dropped. `where` names the layer in
    messages. The result is still raw: the loader validates it.
    """
    out: dict[Any, Any] = {}
    dropped: list[str] = []
    mapped, read = _trex_search_settings(raw, where)
    for name, value in raw.items():
        if name in read:
            continue  # read as vsperf's search settings (see `mapped`)
        if isinstance(name, str) and name not in known and is_ignored_vsperf_setting(name):
            dropped.append(name)
            continue
        if name in BACKEND_NAMES:
            value = backend_name(name, value, where)
        elif name == "TRAFFIC":
            value = _traffic(value, where)
        out[name] = value
    for name, value in mapped.items():
        out.setdefault(name, value)
    if dropped:
        log.warning("%s: ignored %d VSPERF settings vsperf does not use: %s", where, len(dropped),
                    ", ".join(_grouped(dropped)))
    if IXNET_MACHINE in dropped and str(raw[IXNET_MACHINE]).strip():
        # VSPERF drives IxNetwork through its Tcl server (TRAFFICGEN_IXNET_PORT is that port); a
        # guessed REST port would fail later with a less clear message.
        log.warning("%s: %s %s names IxNetwork's Tcl server; for --trafficgen otg through IxNetwork set "
                    "TRAFFICGEN_OTG_LOCATION=https://%s:REST_PORT (its API server) and TRAFFICGEN_OTG_EXT=ixnetwork",
                    where, IXNET_MACHINE, raw[IXNET_MACHINE], str(raw[IXNET_MACHINE]).strip())
    return out


def _trex_search_settings(raw: Mapping[Any, Any], where: str) -> tuple[dict[str, Any], set[str]]:
    """vsperf's search settings that VSPERF's TRex settings of `raw` give (see the module doc),
    and the names of those TRex settings."""
    mapped = {TREX_SEARCH_SETTINGS[name]: value for name, value in raw.items() if name in TREX_SEARCH_SETTINGS}
    read = {name for name in raw if name in TREX_SEARCH_SETTINGS}
    if TREX_FORCE_SPEED in raw:
        read.add(TREX_FORCE_SPEED)
    if TREX_FORCE_SPEED in raw and _truthy(raw[TREX_FORCE_SPEED]):
        read.add(TREX_SPEED)
        if TREX_SPEED not in raw:
            raise ConfigError(f"{where}: {TREX_FORCE_SPEED} needs {TREX_SPEED} (Mbit/s) in the same file, "
                              f"or set TRAFFICGEN_PORT_SPEED_GBPS")
        try:
            mapped["TRAFFICGEN_PORT_SPEED_GBPS"] = float(raw[TREX_SPEED]) / 1000.0
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: {TREX_SPEED} must be Mbit/s, got {raw[TREX_SPEED]!r}") from exc
    if mapped:
        log.info("%s: read VSPERF's TRex search settings as %s", where,
                 ", ".join(f"{k}={v}" for k, v in sorted(mapped.items())))
    return mapped, read


def drop_building_blocks(raw: Mapping[Any, Any], where: str, known: Mapping[str, Any]) -> dict[Any, Any]:
    """A conf file holding test definitions (PERFORMANCE_TESTS or INTEGRATION_TESTS, such as
    upstream's integration/01_testcases.conf) without the names it builds them from (STEP_* lists,
    ...): those are not settings. Other files are returned as they are (an unknown name stays an
    error there)."""
    if not any(name in raw for name in ("PERFORMANCE_TESTS", "INTEGRATION_TESTS")):
        return dict(raw)
    blocks = sorted(str(n) for n in raw if n not in known and not is_ignored_vsperf_setting(str(n))
                    and not str(n).startswith("_") and n != TEST_PARAMS)
    if blocks:
        log.info("%s: %s are building blocks of the file's tests, not settings", where, ", ".join(blocks))
    return {k: v for k, v in raw.items() if str(k) not in blocks}


def split_test_params(raw: Mapping[Any, Any], where: str) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """A conf file's settings without its TEST_PARAMS, and the TEST_PARAMS mapping ({} when absent).

    VSPERF applies a conf file's TEST_PARAMS over every other setting, as --test-params would.
    """
    rest = {k: v for k, v in raw.items() if k != TEST_PARAMS}
    params = raw.get(TEST_PARAMS, {})
    if params is None:
        return rest, {}
    if not isinstance(params, Mapping):
        raise ConfigError(f"{where}: TEST_PARAMS must be a mapping of SETTING: value, "
                          f"got {type(params).__name__}")
    if TEST_PARAMS in params:
        raise ConfigError(f"{where}: TEST_PARAMS may not set TEST_PARAMS")
    return rest, dict(params)
