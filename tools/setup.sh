#!/usr/bin/env bash
# Prepare this checkout on a fresh Debian 12 machine: the Debian packages the local lab needs
# (when run as root) and a virtual environment in .venv with vsperf installed.
#   tools/setup.sh            # lab packages + .venv with vsperf
#   tools/setup.sh --test     # the same plus the test tools (pytest, ruff, mypy)
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--test" ] && extras="[test]"

# Debian packages: the local lab's switches, generators and tools. Installing them with no
# init system would try to start the system's OVS: a policy-rc.d that exits 101 prevents that.
# vsgen's engine is C + BPF: make, gcc, clang, libbpf-dev, linux-libc-dev. nftables, tcpreplay and
# iperf3 serve the generator's integration tests and bench/bench_generators.py. Pango, HarfBuzz and
# fonts let WeasyPrint write the PDF report; poppler-utils turns its pages into PNGs for checks.
# openssh-server and openssh-client: the testbed tests' throwaway SSH hosts (sshd, ssh-keygen).
# qemu-system-x86, qemu-utils: the QEMU guests (VNFs qemu-vhost-user, qemu-virtio-net); busybox-static
# goes into `vsperf guest-image build`'s initramfs (cpio reads it back in the image's tests);
# syslinux, mtools, dosfstools make the bootable qcow2 with a login of the GUEST_IMAGE test.
# postgresql: the results store's tests start a private PostgreSQL server (initdb into a temporary
# directory) to run the same tests as on SQLite; chromium + chromium-driver: the dashboard's tests
# load its pages in headless Chromium (selenium) and take screenshots. tcpdump captures the generator
# ports (TRAFFIC capture, frame modification checks); tshark dissects those captures in the tests.
# libfaketime: the shared-testbed tests run a controller whose clock is days off the hosts' (leases
# never compare the two).
PACKAGES=(python3-venv python3-pip iproute2 ethtool kmod openvswitch-switch openvswitch-switch-dpdk
          dpdk-dev netsniff-ng sysstat stress-ng make gcc clang libbpf-dev libxdp-dev linux-libc-dev nftables
          tcpreplay iperf3 poppler-utils libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0
          fonts-dejavu-core openssh-server openssh-client qemu-system-x86 qemu-utils busybox-static cpio
          syslinux mtools dosfstools postgresql chromium chromium-driver tcpdump tshark libfaketime)
missing=()
for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing Debian packages: ${missing[*]}; run as root (or apt-get install them)" >&2
        echo "setup: continuing without them: only the simulated DUT (--trafficgen dummy) will work" >&2
    else
        echo "setup: installing ${missing[*]}"
        policy=/usr/sbin/policy-rc.d
        restore=""
        if [ -e "$policy" ]; then restore=$(mktemp); cp -p "$policy" "$restore"; fi
        printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"
        trap 'if [ -n "$restore" ]; then mv "$restore" "$policy"; else rm -f "$policy"; fi' EXIT
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
fi

# The virtual environment, made with the system's python3 (>= 3.11).
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "setup: vsperf needs Python >= 3.11 ($python is $("$python" --version 2>&1))" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
# pip's own chatter (build warnings) goes to a log, shown only when the install fails.
log=.venv/pip-install.log
if ! { .venv/bin/python -m pip install -q --upgrade pip && .venv/bin/python -m pip install -q -e ".${extras}"; } \
        > "$log" 2>&1; then
    cat "$log" >&2
    echo "setup: pip install failed (log: $log)" >&2
    exit 1
fi
echo "setup: ready (.venv/bin/vsperf)"
