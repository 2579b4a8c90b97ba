"""QEMU guest settings (VNFs qemu-vhost-user, qemu-virtio-net), VSPERF's names and meanings.

Every GUEST_* setting is a list with one entry per VM; a shorter list is extended with its first
entry, and strings may carry the macros #VMINDEX, #MAC(mac[, step]), #IP(ip[, step]) and
#EVAL(arithmetic) (vsperf.vnf.qemu.macros; never Python's eval). GUEST_LOOPBACK and
GUEST_TESTPMD_FWD_MODE are shared with the netns VNF (schema_lab). Defaults: conf/09_guest.yaml.
"""

from __future__ import annotations

from vsperf.config.types import NAME, Int, ListOf, OneOf, Setting, Str

_INT_OR_MACRO = OneOf(Int(min=0, max=10**7), NAME)  # MiB, CPUs, pages, seconds: bounded all alike
_TEXT = ListOf(Str(), min_len=1)

SETTINGS: dict[str, Setting] = {
    "GUEST_IMAGE": Setting(
        _TEXT,
        "Disk image of each VM (qcow2, booted with -snapshot, so never modified); '' boots vsperf's own "
        "image (`vsperf guest-image build`)."),
    "GUEST_IMAGE_CACHE_DIR": Setting(
        NAME,
        "Where `vsperf guest-image build` keeps built images, one directory per package-version key."),
    "GUEST_KERNEL_PACKAGE": Setting(
        NAME,
        "Debian (meta)package whose kernel vsperf's guest image boots (downloaded, never installed)."),
    "GUEST_ACCEL": Setting(
        Str(choices=("auto", "kvm", "tcg")),
        "QEMU accelerator: auto probes KVM with a short guest and falls back to TCG (-cpu max); TCG "
        "numbers are functional only."),
    "GUEST_MEMORY": Setting(
        ListOf(_INT_OR_MACRO, min_len=1),
        "Memory of each VM in MB (shared with the switch through a memfd for vhost-user)."),
    "GUEST_HUGEPAGES_NR": Setting(
        ListOf(_INT_OR_MACRO, min_len=1),
        "2 MB hugepages each VM's kernel reserves at boot for its testpmd loopback."),
    "GUEST_SMP": Setting(
        ListOf(_INT_OR_MACRO, min_len=1),
        "QEMU -smp of each VM: a vCPU count or a topology ('sockets=1,cores=2')."),
    "GUEST_CORE_BINDING": Setting(
        ListOf(ListOf(_INT_OR_MACRO), min_len=1),
        "Host CPUs each VM's QEMU runs on (taskset), e.g. [['#EVAL(6+2*#VMINDEX)', '#EVAL(7+2*#VMINDEX)']]; "
        "[] leaves it unbound."),
    "GUEST_NICS_NR": Setting(
        ListOf(_INT_OR_MACRO, min_len=1),
        "virtio NICs of each VM; the local lab's pvp/pvvp VNFs have exactly 2 (one per switch port)."),
    "GUEST_TESTPMD_PARAMS": Setting(
        _TEXT,
        "testpmd arguments in each VM: vsperf's image uses the application part (after ' -- ', '-i' "
        "dropped); a user's image runs `dpdk-testpmd` with the whole string."),
    "GUEST_TIMEOUT": Setting(
        ListOf(_INT_OR_MACRO, min_len=1),
        "Seconds each VM may take from QEMU's start until it forwards; later the test fails with the "
        "console's last lines."),
    "GUEST_USERNAME": Setting(_TEXT, "Login of each user GUEST_IMAGE on its serial console."),
    "GUEST_PASSWORD": Setting(_TEXT, "Password of each user GUEST_IMAGE."),
    "GUEST_PROMPT_LOGIN": Setting(_TEXT, "Regex of each user GUEST_IMAGE's login prompt."),
    "GUEST_PROMPT_PASSWORD": Setting(_TEXT, "Regex of each user GUEST_IMAGE's password prompt."),
    "GUEST_PROMPT": Setting(_TEXT, "Regex of each user GUEST_IMAGE's shell prompt after login."),
}
