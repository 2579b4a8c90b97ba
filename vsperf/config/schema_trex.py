"""Settings of the trex generator (Cisco TRex, stateless mode). Defaults: conf/12_trex.yaml.

VSPERF's TRex settings keep their names where they mean the same here (the server's host and
user, its directory, its ports, the latency streams' rate, promiscuous ports, learning traffic).
Its verification and port-speed settings are read as the settings of vsperf's one search
(vsperf.config.vsperf_compat); the rest (live results files, its own search's threshold and
repeats, the number of verification trials) are ignored with a warning.
"""

from __future__ import annotations

from vsperf.config.types import SECONDS, Bool, Int, MacAddress, OneOf, Setting, Str

SETTINGS: dict[str, Setting] = {
    "TRAFFICGEN_TREX_BASE_DIR": Setting(
        Str(),
        "TRex's directory (the one holding t-rex-64 and _t-rex-64: scripts/ of a build, or the unpacked "
        "release), on the host the server runs on; empty: the directory of t-rex-64 found on PATH."),
    "TRAFFICGEN_TREX_HOST_IP_ADDR": Setting(
        Str(),
        "Host of a TRex server already running (started with -i); vsperf reaches its RPC ports through an "
        "SSH connection to it (a loopback address: directly). Empty: vsperf starts the server."),
    "TRAFFICGEN_TREX_USER": Setting(
        Str(),
        "SSH user for TRAFFICGEN_TREX_HOST_IP_ADDR (empty: root); keys from the SSH agent, host key "
        "from ~/.ssh/known_hosts."),
    "TRAFFICGEN_TREX_PORT1": Setting(
        OneOf(Str(choices=("",)), MacAddress()),
        "MAC address of TRex port 0 on a running server (VSPERF): checked before the first trial; empty: "
        "not checked."),
    "TRAFFICGEN_TREX_PORT2": Setting(
        OneOf(Str(choices=("",)), MacAddress()),
        "MAC address of TRex port 1 on a running server (see TRAFFICGEN_TREX_PORT1)."),
    "TRAFFICGEN_TREX_START_SERVER": Setting(
        Bool(),
        "On a testbed: vsperf starts the server on the generator host (false: a server already running "
        "there, reached through the testbed's SSH connection)."),
    "TRAFFICGEN_TREX_CONFIG_FILE": Setting(
        Str(),
        "A trex_cfg.yaml on the server's host for the server vsperf starts; empty: vsperf writes one for "
        "the generator ports (vdevs on kernel interfaces, PCI devices as they are)."),
    "TRAFFICGEN_TREX_LOW_END": Setting(
        Bool(),
        "Write low_end: true in the config vsperf writes (one core for everything: a machine of 2 CPUs); "
        "false: TRex takes a master, a latency and a worker core (TRAFFICGEN_TREX_CORES)."),
    "TRAFFICGEN_TREX_CORES": Setting(
        Str(),
        "CPU list of a TRex that is not low end, as TRex's platform section takes it: "
        "'MASTER,LATENCY,WORKER...' (e.g. '0,1,2'); empty: TRex's defaults."),
    "TRAFFICGEN_TREX_VDEV_ARGS": Setting(
        Str(),
        "Options of the net_af_packet vdev on each kernel interface (its ring: a short one drops "
        "above ~40 kframes/s; framesz must hold the largest frame)."),
    "TRAFFICGEN_TREX_SYNC_PORT": Setting(
        Int(min=1, max=65535, unit="TCP port"),
        "TCP port of the server's RPC (TRex's default 4501), on the server's loopback for a server vsperf starts."),
    "TRAFFICGEN_TREX_ASYNC_PORT": Setting(
        Int(min=1, max=65535, unit="TCP port"),
        "TCP port of the server's event publisher (TRex's default 4500)."),
    "TRAFFICGEN_TREX_LATENCY_PPS": Setting(
        Int(min=0, max=1_000_000, unit="frames/s"),
        "VSPERF's latency streams: frames/s of timestamped frames each direction sends within a rate "
        "trial (at most a tenth of its rate); 0: none, no latency."),
    "TRAFFICGEN_TREX_PROMISCUOUS": Setting(
        Bool(),
        "Put TRex's ports in promiscuous mode (VSPERF: multistream L2 tests, SR-IOV)."),
    "TRAFFICGEN_TREX_LEARNING_MODE": Setting(
        Bool(),
        "VSPERF's TRex learning: before the first trial of each frame size, TRex sends "
        "TRAFFICGEN_TREX_LEARNING_DURATION s at 1 % of line rate so that switches learn the addresses "
        "(not recorded; vsperf's recorded learning trial is TRAFFICGEN_LEARNING_DURATION_S)."),
    "TRAFFICGEN_TREX_LEARNING_DURATION": Setting(
        SECONDS,
        "Length of TRex's learning traffic (TRAFFICGEN_TREX_LEARNING_MODE)."),
    "TRAFFICGEN_TREX_CLIENT_PATH": Setting(
        Str(),
        "Directory of the TRex Python client to use (a TRex tree's "
        "automation/trex_control_plane/interactive); empty: the lbr-trex-client package (pip install "
        "'vsperf[trex]')."),
    "TRAFFICGEN_TREX_PYTHON": Setting(
        Str(),
        "Python that runs the TRex client (3.11 or older: the client uses `imp`); empty: vsperf's own."),
    "TRAFFICGEN_TREX_TIMEOUT_S": Setting(
        SECONDS,
        "How long vsperf waits for the server to answer (its start, a connection, one request)."),
}
