"""Where a run happens: the testbed file (hosts, DUT ports, cabling), and OVS-DPDK's hugepages
on a testbed's DUT host (VSPERF's names). Defaults: conf/11_testbed.yaml."""

from __future__ import annotations

from vsperf.config.types import MAX_MEMORY_MB, NAME, SECONDS_OR_ZERO, Bool, Float, Int, ListOf, OneOf, Setting, Str

SETTINGS: dict[str, Setting] = {
    "TESTBED": Setting(
        OneOf(Str(), ListOf(NAME, min_len=1)),
        "A testbed file (YAML: hosts over SSH or 'local', the DUT host, the generator host, the "
        "cabled ports; see docs/testbed.rst), a pool file (testbeds: [FILE, ...]), or a list of "
        "them: the run takes the first free testbed that can run its tests. --testbed sets it (given "
        "several times: a list). Empty: the local lab stands in for the whole testbed."),
    "TESTBED_WAIT_S": Setting(
        SECONDS_OR_ZERO,
        "How long a run waits for a busy testbed (or for the first free one of a pool), in arrival "
        "order, as --testbed-wait sets it. 0: a busy testbed is one line naming its holder, exit 2."),
    "TESTBED_LEASE_S": Setting(
        Float(min=3, max=3600, unit="seconds"),
        "The lease of a run's testbed lock: the run renews it every quarter of this; a lock not "
        "renewed for this long (its run was killed, its controller lost) is taken over by the next "
        "run, and a run that could not renew its own for three quarters of it stops."),
    "DPDK_SOCKET_MEM": Setting(
        ListOf(OneOf(Int(min=0, max=MAX_MEMORY_MB, unit="MiB"), NAME), min_len=1),
        "Hugepage memory of OVS-DPDK's EAL per NUMA node in MiB (other_config:dpdk-socket-mem), as "
        "VSPERF's ['1024', '0']; used on a testbed's DUT host when OVS-DPDK runs on hugepages."),
    "HUGEPAGE_RAM_ALLOCATION": Setting(
        Int(min=0, max=MAX_MEMORY_MB * 1024, unit="kB"),
        "Free hugepage memory (kB) a testbed run makes sure the DUT host has before OVS-DPDK starts "
        "on hugepages (nr_hugepages raised, recorded and put back after); it must cover "
        "DPDK_SOCKET_MEM."),
    "HUGEPAGE_DIR": Setting(
        NAME,
        "A hugetlbfs mount on the DUT host where OVS-DPDK's EAL maps its hugepages "
        "(other_config:dpdk-hugepage-dir)."),
    "VSWITCH_DPDK_HUGEPAGES": Setting(
        Bool(),
        "On a testbed: OVS-DPDK on hugepages (DPDK_SOCKET_MEM, HUGEPAGE_RAM_ALLOCATION reserved) even "
        "without PCI ports; with a PCI port (driver vfio-pci or uio_pci_generic) it always is. "
        "false: --no-huge, as on the local lab."),
}
