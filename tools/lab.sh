#!/usr/bin/env bash
# The main job: a real RFC 2544 throughput test of Open vSwitch (userspace datapath) on this
# machine's local lab: veth ports, real frames, results and a Level Test Report.
# Arguments are passed to vsperf; without any, a short phy2phy_tput runs.
set -euo pipefail
# Root is needed (packages, namespaces, switches): as root, run as is (sudo may not even be
# installed); otherwise run again under sudo.
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        exec sudo -- "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" "$@"
    fi
    echo "$(basename "$0"): needs root: run it as root (sudo is not installed)" >&2
    exit 2
fi
cd "$(dirname "$0")/.."
tools/setup.sh
if [ $# -eq 0 ]; then
    set -- phy2phy_tput --vswitch ovs \
        --test-params "TRAFFICGEN_DURATION=3;TRAFFICGEN_PKT_SIZES=(64,512,1518)"
fi
exec .venv/bin/vsperf "$@"
