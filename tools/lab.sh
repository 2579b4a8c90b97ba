#!/usr/bin/env bash
# The main job: a real RFC 2544 throughput test of Open vSwitch (userspace datapath) on this
# machine's local lab: veth ports, real frames, results and a Level Test Report.
# Arguments are passed to vsperf; without any, a short phy2phy_tput runs.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [ $# -eq 0 ]; then
    set -- phy2phy_tput --vswitch ovs \
        --test-params "TRAFFICGEN_DURATION=3;TRAFFICGEN_PKT_SIZES=(64,512,1518)"
fi
exec .venv/bin/vsperf "$@"
