"""Where a run happens: the testbed file (hosts, DUT ports, cabling). Defaults: conf/11_testbed.yaml."""

from __future__ import annotations

from vsperf.config.types import Setting, Str

SETTINGS: dict[str, Setting] = {
    "TESTBED": Setting(
        Str(),
        "A testbed file (YAML: hosts over SSH or 'local', the DUT host, the generator host, the "
        "cabled ports; see docs/testbed.rst), as --testbed sets it. Empty: the local lab stands in "
        "for the whole testbed."),
}
