"""KVM or TCG: chosen by booting a short probe guest with KVM, not by /dev/kvm's existence.

On some machines /dev/kvm exists but every KVM guest hangs (nested virtualisation without the
features QEMU needs). The probe boots vsperf's image with KVM and no NICs; when its init reports
within `PROBE_TIMEOUT_S`, KVM works. The answer is cached (per host kernel, QEMU binary and
image) next to the images, so only the first run on a machine pays for a hanging probe.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

from vsperf.lab.env import LabEnv
from vsperf.vnf.qemu.image import GuestImage, kernel_cmdline
from vsperf.vnf.qemu.init_script import READY_MARKER
from vsperf.vnf.qemu.qemu import QEMU_BINARY, Accel

log = logging.getLogger(__name__)
PROBE_TIMEOUT_S = 20.0
PROBE_FILE = "accel-probe.json"


def probe_kvm(lab: LabEnv, image: GuestImage, binary: str = QEMU_BINARY) -> bool:
    """True when a KVM guest of `image` reaches its init's marker within PROBE_TIMEOUT_S."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    console = lab.work_path("kvm-probe-console.log")
    console.parent.mkdir(parents=True, exist_ok=True)
    console.unlink(missing_ok=True)
    append = kernel_cmdline(loopback="linux_bridge", fwd_mode="io", nics=0, cpus=1, hugepages=0, testpmd_args=())
    argv = [binary, "-accel", "kvm", "-cpu", "host", "-m", "256", "-smp", "1", "-nodefaults", "-no-user-config",
            "-display", "none", "-no-reboot", "-kernel", str(image.kernel_path), "-initrd", str(image.initrd_path),
            "-append", append, "-serial", f"file:{console}"]
    # Recorded in the run's state like every guest: a killed run's probe is stopped later too.
    proc = lab.spawn("qemu kvm-probe", argv, log_path=lab.work_path("kvm-probe.qemu.log"))
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    works = False
    try:
        while time.monotonic() < deadline and proc.alive():
            if console.exists() and READY_MARKER in console.read_text(encoding="utf-8", errors="replace"):
                works = True
                break
            time.sleep(0.2)
    finally:
        lab.stop(proc)
        console.unlink(missing_ok=True)
    return works


def _probe_key(image: GuestImage, binary: str) -> str:
    return f"{os.uname().release}|{binary}|{image.key}"


def choose_accel(setting: str, lab: LabEnv, image: GuestImage | None, cache_dir: Path,
                 binary: str = QEMU_BINARY) -> Accel:
    """GUEST_ACCEL resolved: "kvm"/"tcg" as given; "auto" probes KVM (cached) with `image`."""
    if setting == "kvm":
        return "kvm"
    if setting == "tcg" or image is None:
        return "tcg"
    cache = cache_dir.expanduser() / PROBE_FILE
    key = _probe_key(image, binary)
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if isinstance(known, dict) and key in known:
        return "kvm" if known[key] else "tcg"
    works = probe_kvm(lab, image, binary)
    log.info("KVM probe guest %s: using %s", "booted" if works else "did not boot", "kvm" if works else "tcg")
    known = known if isinstance(known, dict) else {}
    known[key] = works
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(known, indent=1), encoding="utf-8")
    return "kvm" if works else "tcg"
