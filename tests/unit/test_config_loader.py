"""Layered settings: order, provenance, nested merges, errors with their origin, immutability."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vsperf import paths
from vsperf.config import Settings, load_settings, parse_value
from vsperf.errors import ConfigError


def config_error(**kwargs: object) -> str:
    kwargs.setdefault("env", {})
    with pytest.raises(ConfigError) as info:
        load_settings(**kwargs)  # type: ignore[arg-type]
    message = str(info.value)
    assert "\n" not in message, message
    return message


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_defaults_and_their_source() -> None:
    s = load_settings(env={})
    assert s["TRAFFICGEN_DURATION"] == 30.0
    assert s["TRAFFICGEN_PKT_SIZES"] == [64, 128, 512, 1024, 1518]
    assert s["TRAFFIC"]["bidir"] is True
    assert s["TRAFFIC"]["l3"]["srcip"] == "198.18.0.1"
    assert s.source("TRAFFICGEN_DURATION") == "default (01_trafficgen.yaml)"
    assert s.source("LOG_DIR") == "default (00_common.yaml)"


def test_layer_order_and_provenance(tmp_path: Path) -> None:
    conf = write(tmp_path / "my.yaml", "TRAFFICGEN_DURATION: 7\nTRAFFICGEN_LOSSRATE: 1\nVERBOSITY: debug\n")
    env = {"TRAFFICGEN_LOSSRATE": "2", "VERBOSITY": "warning", "PATH": "/bin", "HOME": "/root"}
    s = load_settings(conf, env=env, test_params="VERBOSITY=error")
    assert (s["TRAFFICGEN_DURATION"], s.source("TRAFFICGEN_DURATION")) == (7.0, f"conf file {conf}")
    assert (s["TRAFFICGEN_LOSSRATE"], s.source("TRAFFICGEN_LOSSRATE")) == (2.0, "environment")
    assert (s["VERBOSITY"], s.source("VERBOSITY")) == ("error", "--test-params")
    t = s.merged({"VERBOSITY": "info"}, "test case phy2phy_tput")
    assert (t["VERBOSITY"], t.source("VERBOSITY")) == ("info", "test case phy2phy_tput")
    assert s["VERBOSITY"] == "error"  # merged made a new Settings
    assert t.sources()["TRAFFICGEN_DURATION"] == f"conf file {conf}"


def test_nested_settings_merge_key_by_key(tmp_path: Path) -> None:
    conf = write(tmp_path / "my.yaml", "TRAFFIC:\n  bidir: false\n  l4: {srcport: 5000}\n")
    s = load_settings(conf, env={}, test_params="TRAFFIC={'multistream': 100, 'l4': {'dstport': 5001}}")
    traffic = s["TRAFFIC"]
    assert traffic["bidir"] is False
    assert traffic["multistream"] == 100
    assert traffic["l4"] == {"enabled": True, "srcport": 5000, "dstport": 5001}
    assert traffic["traffic_type"] == "rfc2544_throughput"  # untouched keys keep their default
    assert s.source("TRAFFIC") == "--test-params"  # the highest layer that touched it
    t = s.merged({"TRAFFIC": {"vlan": {"enabled": True, "id": 10}}}, "test case phy2phy_tput_mod_vlan")
    assert t["TRAFFIC"]["vlan"] == {"enabled": True, "id": 10, "priority": 0, "cfi": 0}
    assert t["TRAFFIC"]["bidir"] is False


def test_lists_and_maps_replace() -> None:
    s = load_settings(env={}, test_params="TRAFFICGEN_PKT_SIZES=(64,);"
                                          "TRAFFICGEN_DUMMY_DUT={'capacity_fps': {64: 1e6, 1518: 8e5}}")
    assert s["TRAFFICGEN_PKT_SIZES"] == [64]
    t = s.merged({"TRAFFICGEN_DUMMY_DUT": {"capacity_fps": {128: 9e5}}}, "test case x")
    assert t["TRAFFICGEN_DUMMY_DUT"]["capacity_fps"] == {128: 9e5}
    assert t["TRAFFICGEN_DUMMY_DUT"]["buffer_frames"] == 20000


def test_environment_values_are_parsed_like_test_params(monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_settings(env={"TRAFFICGEN_PKT_SIZES": "(64,128)", "TRAFFIC": "{bidir: false}"})
    assert s["TRAFFICGEN_PKT_SIZES"] == [64, 128]
    assert s["TRAFFIC"]["bidir"] is False
    assert s.source("TRAFFIC") == "environment"
    monkeypatch.setenv("TRAFFICGEN_DURATION", "12")
    assert load_settings()["TRAFFICGEN_DURATION"] == 12.0  # env=None reads os.environ
    assert load_settings(env={})["TRAFFICGEN_DURATION"] == 30.0


def test_unknown_settings_name_origin_and_suggestion(tmp_path: Path) -> None:
    assert config_error(test_params="TRAFFICGEN_DURATON=10") == (
        "unknown setting 'TRAFFICGEN_DURATON' in --test-params (did you mean 'TRAFFICGEN_DURATION'?)"
    )
    conf = write(tmp_path / "x.yaml", "TRAFFIC:\n  bidr: false\n")
    assert config_error(conf_file=conf) == (
        f"unknown key 'TRAFFIC.bidr' in conf file {conf} (did you mean 'TRAFFIC.bidir'?)"
    )
    assert "vsperf --list-settings" in config_error(test_params="QWERTYUIOP=1")
    with pytest.raises(ConfigError, match=r"unknown setting 'TRAFFICGEN_LOSRATE' in test case t1 "):
        load_settings(env={}).merged({"TRAFFICGEN_LOSRATE": 1}, "test case t1")


def test_wrong_types_name_key_expectation_value_and_origin(tmp_path: Path) -> None:
    assert config_error(test_params="TRAFFICGEN_DURATION=ten") == (
        "TRAFFICGEN_DURATION: expected a number (seconds), got str 'ten' (from --test-params)"
    )
    assert config_error(test_params="TRAFFIC={'bidir': 'on'}") == (
        "TRAFFIC.bidir: expected true or false, got str 'on': write true or false (from --test-params)"
    )
    assert config_error(env={"TRAFFICGEN_RFC2544_TESTS": "True"}) == (
        "TRAFFICGEN_RFC2544_TESTS: expected an integer, got bool True (from environment)"
    )
    # any IPv4 address is a valid setting (a real testbed's); the local lab refuses those outside
    # 198.18.0.0/15 when it deploys
    conf = write(tmp_path / "x.yaml", "TRAFFIC:\n  l3:\n    dstip: 10.0.0.1\n")
    assert load_settings(conf, env={})["TRAFFIC"]["l3"]["dstip"] == "10.0.0.1"
    conf = write(tmp_path / "y.yaml", "TRAFFIC:\n  l3:\n    dstip: 10.0.0.300\n")
    assert config_error(conf_file=conf) == (
        f"TRAFFIC.l3.dstip: expected an IPv4 address, got '10.0.0.300' (from conf file {conf})")
    assert "TRAFFICGEN_PKT_SIZES[1]: expected an integer in 64..9018 (bytes), got 32" in config_error(
        test_params="TRAFFICGEN_PKT_SIZES=[64, 32]")
    assert "expected a non-empty list" in config_error(test_params="TRAFFICGEN_PKT_SIZES=[]")


def test_int_accepted_as_float_but_not_bool() -> None:
    s = load_settings(env={}, test_params="TRAFFICGEN_LOSSRATE=1;TRAFFICGEN_PORT_SPEED_GBPS=25")
    assert isinstance(s["TRAFFICGEN_LOSSRATE"], float) and s["TRAFFICGEN_PORT_SPEED_GBPS"] == 25.0
    assert "got bool True" in config_error(test_params="TRAFFICGEN_LOSSRATE=True")


def test_conf_file_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    assert config_error(conf_file=missing) == f"conf file {missing}: no such file"
    bad = write(tmp_path / "bad.yaml", "TRAFFICGEN_DURATION: 10\nTRAFFIC:\n  bidir: false\n   x: 1\n")
    assert config_error(conf_file=bad).startswith(f"conf file {bad}: malformed YAML at line 4, column 5: ")
    python_style = write(tmp_path / "old.conf", "TRAFFICGEN_DURATION = 10\n")  # VSPERF's form
    assert load_settings(python_style, env={})["TRAFFICGEN_DURATION"] == 10.0
    executable = write(tmp_path / "exec.conf", "import os\nTRAFFICGEN_DURATION = os.getpid()\n")
    assert config_error(conf_file=executable).startswith(f"conf file {executable}: line 2: TRAFFICGEN_DURATION: "
                                                         f"it uses os, not computed (line 1: an import")
    scalar = write(tmp_path / "scalar.yaml", "just words\n")
    assert "expected a YAML mapping of settings" in config_error(conf_file=scalar)
    assert "is a directory" in config_error(conf_file=tmp_path)
    empty = write(tmp_path / "empty.yaml", "# nothing yet\n")
    assert load_settings(empty, env={})["TRAFFICGEN_DURATION"] == 30.0


def test_rate_bounds_constraint_names_both_sources() -> None:
    message = config_error(test_params="TRAFFICGEN_RFC2544_MIN_RATE_PERCENT=100")
    assert message == (
        "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT (100) must be below TRAFFICGEN_RFC2544_MAX_RATE_PERCENT (100) "
        "(TRAFFICGEN_RFC2544_MIN_RATE_PERCENT from --test-params, "
        "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT from default (01_trafficgen.yaml))"
    )
    s = load_settings(env={}, test_params="TRAFFICGEN_RFC2544_MAX_RATE_PERCENT=50;"
                                          "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT=10")
    assert s["TRAFFICGEN_RFC2544_MIN_RATE_PERCENT"] == 10.0
    assert s["TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"] == 50.0
    with pytest.raises(ConfigError, match="must be below"):
        s.merged({"TRAFFICGEN_RFC2544_MIN_RATE_PERCENT": 60}, "test case t")


def test_settings_are_immutable() -> None:
    s = load_settings(env={})
    sizes = s["TRAFFICGEN_PKT_SIZES"]
    sizes.append(9000)
    traffic = s["TRAFFIC"]
    traffic["l3"]["srcip"] = "1.2.3.4"
    dump = s.as_dict()
    dump["TRAFFIC"]["bidir"] = False
    assert s["TRAFFICGEN_PKT_SIZES"] == [64, 128, 512, 1024, 1518]
    assert s["TRAFFIC"]["l3"]["srcip"] == "198.18.0.1"
    assert s["TRAFFIC"]["bidir"] is True
    s.sources()["TRAFFIC"] = "me"
    assert s.source("TRAFFIC") == "default (01_trafficgen.yaml)"
    with pytest.raises(TypeError):
        s["LOG_DIR"] = "/x"  # type: ignore[index]
    overrides = {"TRAFFIC": {"l2": {"srcmac": "00:00:00:00:00:01"}}}
    t = s.merged(overrides, "test case t")
    overrides["TRAFFIC"]["l2"]["srcmac"] = "00:00:00:00:00:02"
    assert t["TRAFFIC"]["l2"]["srcmac"] == "00:00:00:00:00:01"


def test_mapping_api_as_dict_and_describe() -> None:
    s = load_settings(env={}, test_params="TRAFFICGEN_DURATION=10")
    assert isinstance(s, Settings)
    assert set(s) == set(s.as_dict()) == set(s.sources())
    assert len(s) == len(s.as_dict())
    assert json.loads(json.dumps(s.as_dict()))["TRAFFICGEN_DURATION"] == 10.0
    rows = s.describe()
    assert [r[0] for r in rows] == sorted(s)
    by_name = {name: (value, source) for name, value, source in rows}
    assert by_name["TRAFFICGEN_DURATION"] == ("10.0", "--test-params")
    for name, value, _ in rows:
        assert parse_value(value, name) == s[name]  # what --list-settings shows can be pasted back


def test_merged_with_nothing_keeps_everything() -> None:
    s = load_settings(env={})
    assert s.merged({}, "test case t") == s


def copy_defaults(tmp_path: Path) -> Path:
    folder = tmp_path / "conf"
    shutil.copytree(paths.data_dir("conf"), folder)
    return folder


def test_default_files_apply_in_name_order(tmp_path: Path) -> None:
    folder = copy_defaults(tmp_path)
    write(folder / "99_site.yaml", "TRAFFICGEN_DURATION: 60\nTRAFFIC: {bidir: false}\n")
    s = load_settings(env={}, conf_dir=folder)
    assert (s["TRAFFICGEN_DURATION"], s.source("TRAFFICGEN_DURATION")) == (60.0, "default (99_site.yaml)")
    assert s["TRAFFIC"]["bidir"] is False and s["TRAFFIC"]["multistream"] == 0


def test_defaults_must_cover_every_setting_and_key(tmp_path: Path) -> None:
    folder = copy_defaults(tmp_path)
    text = (folder / "01_trafficgen.yaml").read_text()
    (folder / "01_trafficgen.yaml").write_text(text.replace("TRAFFICGEN_DURATION: 30\n", ""))
    assert "setting TRAFFICGEN_DURATION has no default" in config_error(conf_dir=folder)
    (folder / "01_trafficgen.yaml").write_text(text.replace("    dstport: 3001\n", ""))
    assert config_error(conf_dir=folder).startswith("TRAFFIC.l4.dstport: missing")


def test_bad_default_file_names_itself(tmp_path: Path) -> None:
    folder = copy_defaults(tmp_path)
    write(folder / "50_extra.yaml", "TRAFFICGEN_DURATION: -1\n")
    assert config_error(conf_dir=folder) == (
        "TRAFFICGEN_DURATION: expected a number in 0.001..604800 (seconds), got -1 (from default (50_extra.yaml))"
    )
