"""`vsperf guest-image build [--output DIR] [--rebuild]`: build (or find cached) vsperf's guest image."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from vsperf.config import load_settings
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.vnf.qemu.image import ImageBuilder


@click.group(name="guest-image", context_settings={"help_option_names": ["-h", "--help"]})
def guest_image_command() -> None:
    """vsperf's QEMU guest image (kernel + initramfs from Debian packages)."""


@guest_image_command.command(name="build")
@click.option("--output", type=click.Path(path_type=Path), metavar="DIR",
              help="Directory to keep images in (default: GUEST_IMAGE_CACHE_DIR).")
@click.option("--rebuild", is_flag=True, help="Build even when an image for these package versions exists.")
@click.option("--conf-file", type=click.Path(path_type=Path), metavar="FILE", help="User settings file.")
def build_command(output: Path | None, rebuild: bool, conf_file: Path | None) -> None:
    """Build the guest image for the installed package versions; print where it is."""
    settings = load_settings(conf_file, env=os.environ)
    cache_dir = output or Path(str(settings["GUEST_IMAGE_CACHE_DIR"])).expanduser()
    cache_dir.mkdir(parents=True, exist_ok=True)
    # The commands that made the image are logged next to it, as a run logs its own.
    executor = LocalExecutor(CommandLog(cache_dir / "commands.log"))
    started = time.monotonic()
    image = ImageBuilder(executor, cache_dir, metapackage=str(settings["GUEST_KERNEL_PACKAGE"])).get(rebuild=rebuild)
    manifest = image.manifest()
    versions = manifest["versions"]
    state = f"built in {image.build_time_s:.1f} s" if image.build_time_s else "cached"
    click.echo(f"guest image {image.key} ({state}, {time.monotonic() - started:.1f} s)")
    click.echo(f"  kernel:   {image.kernel_path} ({versions['kernel_package']} {versions['kernel_version']})")
    click.echo(f"  initrd:   {image.initrd_path} ({manifest['initrd_bytes'] // 1024} KiB, "
               f"{len(manifest['files'])} files; busybox {versions['busybox']}, DPDK {versions['dpdk']})")
    click.echo(f"  manifest: {image.directory / 'manifest.json'}")
