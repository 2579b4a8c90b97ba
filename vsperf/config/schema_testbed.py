"""Where a run happens: the testbed file (hosts, DUT ports, cabling), and OVS-DPDK's hugepages
on a testbed's DUT host (VSPERF's names). Defaults: conf/11_testbed.yaml."""

from __future__ import annotations

from vsperf.config.types import MAX_MEMORY_MB, NAME, Bool, Int, ListOf, OneOf, Setting, Str

SETTINGS: dict[str, Setting] = {
    "TESTBED": Setting(
        Str(),
        "A testbed file (YAML: hosts over SSH or 'local', the DUT host, the generator host, the "
        "cabled ports; see docs/testbed.rst), as --testbed sets it. Empty: the local lab stands in "
        "for the whole testbed."),
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
