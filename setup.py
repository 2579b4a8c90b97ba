"""Package list for setuptools (metadata is in pyproject.toml).

The data folders conf/, testcases/ and templates/ sit at the top of the repository (the layout
VSPERF users know) and ship inside the wheel as vsperf.conf, vsperf.testcases, vsperf.templates.
The vsgen engine's C sources are package data (vsperf/trafficgen/vsgen/csrc), and the engine itself
is compiled into the wheel (vsperf/trafficgen/vsgen/bin/vsgen-engine) when the build tools are there.
"""

import shutil
import subprocess
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

DATA = {
    "vsperf.conf": "conf",
    "vsperf.testcases": "testcases",
    "vsperf.templates": "templates",
}
ENGINE_SOURCES = Path(__file__).resolve().parent / "vsperf" / "trafficgen" / "vsgen" / "csrc"


class BuildPyWithEngine(build_py):
    """build_py, then the vsgen engine (C + BPF, `make -C vsperf/trafficgen/vsgen/csrc`) into its bin/.

    A machine without the compilers still installs vsperf: the engine is then built on first
    use from those sources, and vsperf names the Debian packages that are missing (see
    vsperf/trafficgen/vsgen/build.py). Editable installs always build on first use (into a cache keyed by
    the sources, so an edited source rebuilds).
    """

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        out = Path(self.get_finalized_command("build").build_temp) / "vsgen"
        target = Path(self.build_lib) / "vsperf" / "trafficgen" / "vsgen" / "bin" / "vsgen-engine"
        try:
            subprocess.run(["make", "-s", "-C", str(ENGINE_SOURCES), f"OUT={out.resolve()}"], check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            self.announce(f"vsgen engine not built ({exc}): vsperf builds it on first use", level=3)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(out / "vsgen-engine", target)


setup(
    packages=[*find_packages(include=["vsperf", "vsperf.*"]), *DATA],
    package_dir={"vsperf": "vsperf", **DATA},
    cmdclass={"build_py": BuildPyWithEngine},
)
