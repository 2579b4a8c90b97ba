"""vsperf.vnf.qemu.image: what goes into the guest image and how it is keyed, packed and booted."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
from pathlib import Path

import pytest

from vsperf.errors import PrerequisiteError
from vsperf.vnf.qemu.image import (
    image_key,
    kernel_cmdline,
    module_load_order,
    newc_archive,
    parse_ldd,
    parse_modules_dep,
)
from vsperf.vnf.qemu.init_script import FAILED_MARKER, INIT_SCRIPT, MODULE_GROUPS, READY_MARKER

MODULES_DEP = """\
kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko \
kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
kernel/drivers/virtio/virtio_pci_legacy_dev.ko:
kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko \
kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko
kernel/net/core/failover.ko:
"""

LDD = """\
\tlinux-vdso.so.1 (0x00007ffd4f5f1000)
\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f0c1c0a1000)
\tlibrte_bus_pci.so.23 => /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0/librte_bus_pci.so.23 (0x00007f0c1c08f000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f0c1c9d5000)
"""


def test_modules_load_after_their_dependencies() -> None:
    order = module_load_order(parse_modules_dep(MODULES_DEP), ["virtio_pci", "virtio_net"])
    names = [Path(p).stem for p in order]
    assert names.index("virtio_ring") < names.index("virtio") < names.index("virtio_pci")
    assert names.index("failover") < names.index("net_failover") < names.index("virtio_net")
    assert len(names) == len(set(names)) == 8


def test_a_missing_module_is_named() -> None:
    with pytest.raises(PrerequisiteError, match="uio_pci_generic"):
        module_load_order(parse_modules_dep(MODULES_DEP), ["uio_pci_generic"])


def test_ldd_paths_and_missing_libraries() -> None:
    assert parse_ldd(LDD) == ["/lib/x86_64-linux-gnu/libm.so.6",
                              "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0/librte_bus_pci.so.23",
                              "/lib64/ld-linux-x86-64.so.2"]
    with pytest.raises(PrerequisiteError, match=r"libfoo\.so\.1"):
        parse_ldd("\tlibfoo.so.1 => not found\n")


def test_key_changes_with_any_version() -> None:
    versions = {"kernel_package": "linux-image-6.1.0-56-cloud-amd64", "kernel_version": "6.1.192-2",
                "busybox": "1:1.35.0-4", "dpdk": "22.11.11"}
    assert image_key(versions) == image_key(dict(versions))
    assert image_key(versions) != image_key({**versions, "dpdk": "22.11.12"})


def test_kernel_cmdline_carries_the_loopback() -> None:
    line = kernel_cmdline(loopback="testpmd", fwd_mode="macswap", nics=2, cpus=1, hugepages=128,
                          testpmd_args=("--burst=64", "--rxd=512"))
    assert line.split() == ["console=ttyS0", "quiet", "panic=-1", "hugepages=128", "vsperf.loopback=testpmd",
                            "vsperf.fwd=macswap", "vsperf.nics=2", "vsperf.cpus=1",
                            "vsperf.testpmd=--burst=64,--rxd=512"]
    with pytest.raises(PrerequisiteError, match="commas or spaces"):
        kernel_cmdline(loopback="testpmd", fwd_mode="io", nics=2, cpus=1, hugepages=0, testpmd_args=("--a b",))


def test_init_script_markers_and_module_groups() -> None:
    assert READY_MARKER in INIT_SCRIPT and FAILED_MARKER in INIT_SCRIPT
    assert not any(p in INIT_SCRIPT for p in ("@READY@", "@FAILED@", "@MODULES@"))
    assert set(MODULE_GROUPS) == {"virtio", "uio", "bridge"}


@pytest.mark.skipif(not Path("/usr/bin/cpio").exists(), reason="cpio missing: apt-get install cpio")
def test_newc_archive_is_read_back_by_cpio(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "busybox").write_bytes(b"\x7fELF" + bytes(range(256)))
    (root / "init").write_text("#!/bin/busybox sh\n")
    (root / "init").chmod(0o755)
    (root / "lib").symlink_to("usr/lib")
    data = gzip.decompress(gzip.compress(newc_archive(root)))
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(["cpio", "-i", "-d", "--quiet", "--no-absolute-filenames"], input=data, cwd=out, check=True)
    assert (out / "bin" / "busybox").read_bytes() == (root / "bin" / "busybox").read_bytes()
    assert os.access(out / "init", os.X_OK)
    assert os.readlink(out / "lib") == "usr/lib"
    listing = subprocess.run(["cpio", "-t", "--quiet"], input=data, capture_output=True, check=True).stdout
    assert io.BytesIO(listing).read().decode().splitlines()[0] == "."
