"""vsperf's settings: layered (defaults < conf file < environment < --test-params < test case),
typed and validated as they are loaded.

    settings = load_settings(conf_file, env=os.environ, test_params="TRAFFICGEN_DURATION=10")
    settings["TRAFFICGEN_DURATION"]                         # 10.0
    settings.source("TRAFFICGEN_DURATION")                  # '--test-params'
    test_settings = settings.merged(test.parameters, "test case phy2phy_tput")
"""

from vsperf.config.loader import Settings, load_settings
from vsperf.config.params import load_yaml, parse_test_params, parse_value, render_value
from vsperf.config.schema import CONSTRAINTS, SETTINGS_SCHEMA
from vsperf.config.schema_core import traffic_from_settings
from vsperf.config.types import Setting

__all__ = [
    "CONSTRAINTS",
    "SETTINGS_SCHEMA",
    "Setting",
    "Settings",
    "load_settings",
    "load_yaml",
    "parse_test_params",
    "parse_value",
    "render_value",
    "traffic_from_settings",
]
