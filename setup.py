"""Package list for setuptools (metadata is in pyproject.toml).

The data folders conf/, testcases/ and templates/ sit at the top of the repository (the layout
VSPERF users know) and ship inside the wheel as vsperf.conf, vsperf.testcases, vsperf.templates.
"""

from setuptools import find_packages, setup

DATA = {"vsperf.conf": "conf", "vsperf.testcases": "testcases", "vsperf.templates": "templates"}

setup(
    packages=[*find_packages(include=["vsperf", "vsperf.*"]), *DATA],
    package_dir={"vsperf": "vsperf", **DATA},
)
