"""Starting the pktgens of a trial on the generator host: one per namespace of the ports, their
command line from the settings, the check that the binary there has Lua, and what the run's journal
holds so that the teardown (or the next run after a kill) removes it."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import pytest
from fake_pktgen import fake_pktgen, free_port
from gen_host import generator_host, recorded
from settings_util import make_settings

from vsperf.errors import ConfigError, PrerequisiteError, TrafficGenError
from vsperf.host.names import RunNames, run_dirs_removal
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.pktgen.launch import LUA_MARKER, Endpoint, Launched, check_binary, launch, pktgen_config

PORTS = (GenPort(None, "lo", "02:00:00:00:00:01", "198.18.0.1"), GenPort(None, "lo", "02:00:00:00:00:02",
                                                                       "198.18.1.1"))


def _settings(**values: Any) -> Any:
    return make_settings({"TRAFFICGEN_PKTGEN_TIMEOUT_S": 10, "TRAFFICGEN_PKTGEN_PORT": free_port(), **values})


def test_config_from_the_settings() -> None:
    settings = make_settings(TRAFFICGEN_PKTGEN_LCORES=["0@0,1@1", "2@2,3@3"], TRAFFICGEN_PKTGEN_MEMORY_MB=1536,
                             TRAFFICGEN_PKTGEN_EAL_ARGS=["--log-level=7"])
    first = pktgen_config(settings, 0, "pktgen", ["g0", "g1"], "vspab12pg0")
    assert (first.lcores, first.memory_mb, first.ifnames, first.extra_eal_args) == (
        "0@0,1@1", 3072, ("g0", "g1"), ("--log-level=7",))  # memory per port
    assert first.lua_address == "127.0.0.1" and first.lua_port == 22022
    assert pktgen_config(settings, 1, "pktgen", ["g2"], "vspab12pg1").lcores == "2@2,3@3"
    assert pktgen_config(settings, 2, "pktgen", ["g4"], "vspab12pg2").lcores == "0@0,1@1"  # round robin
    with pytest.raises(ConfigError, match=r"^TRAFFICGEN_PKTGEN_LCORES is empty"):
        pktgen_config(make_settings(TRAFFICGEN_PKTGEN_LCORES=[]), 0, "pktgen", ["g0"], "vspab12pg0")


@pytest.mark.parametrize("name", ["local", "gen"])
def test_the_binary_must_be_a_pktgen_with_lua_on_the_generator_host(tmp_path: Path, name: str) -> None:
    where, there = ("", "") if name == "local" else ("host gen: ", " there")
    with generator_host(tmp_path, name) as host:
        missing = str(tmp_path / "nope")
        with pytest.raises(PrerequisiteError, match=rf"^{where}{missing} is missing: build Pktgen-DPDK >= 23.06 with "
                                                    rf"Lua \(docs/trafficgens.rst\) and set TRAFFICGEN_PKTGEN_BINARY "
                                                    rf"to its path{there}$"):
            check_binary(host, missing)
        binary = tmp_path / "pktgen"
        binary.write_bytes(b"\x7fELF no lua in here")
        binary.chmod(0o755)
        with pytest.raises(PrerequisiteError, match=rf"^{where}{binary} was built without Lua: rebuild Pktgen-DPDK "
                                                    r"with meson -Denable_lua=true \(see docs/trafficgens.rst\)$"):
            check_binary(host, str(binary))
        binary.write_bytes(b"\x7fELF " + LUA_MARKER.encode())
        check_binary(host, str(binary))
        assert recorded(host, "dir") == [] and recorded(host, "process") == []  # a check creates nothing


def test_the_ports_of_one_namespace_share_one_pktgen(tmp_path: Path) -> None:
    with generator_host(tmp_path, "gen") as host:
        into = Launched()
        try:
            launch(_settings(TRAFFICGEN_PKTGEN_BINARY=str(fake_pktgen(tmp_path))), host, PORTS, into)
            assert into.endpoints == [Endpoint(0, 0), Endpoint(0, 1)]
            (proc,) = into.processes
            assert proc.label == "pktgen 0 on host gen" and proc.netns is None
            assert proc.cfg.ifnames == ("lo", "lo") and proc.cfg.file_prefix == f"{host.names.tag}pg0"
            assert len(into.clients) == 1
        finally:
            for proc in into.processes:
                proc.stop()
        assert recorded(host, "process") == []


def test_what_a_pktgen_leaves_is_journaled_and_swept_by_the_next_run(tmp_path: Path) -> None:
    with generator_host(tmp_path) as host:
        into = Launched()
        settings = _settings(TRAFFICGEN_PKTGEN_BINARY=str(fake_pktgen(tmp_path, fail="fake pktgen: no ports")))
        with pytest.raises(TrafficGenError, match=r"^pktgen 0 exited \(code 3\) while starting: "
                                                  r"fake pktgen: no ports$"):
            launch(settings, host, PORTS, into)
        (proc,) = into.processes  # filled as they start: the caller stops it
        assert into.endpoints == []
        runtime = f"/var/run/dpdk/{proc.cfg.file_prefix}"
        dirs = [e.name for e in recorded(host, "dir")]
        assert runtime in dirs and str(host.names.run_dir("logs")) in dirs
        names = RunNames(host.run_id)
        assert all(names.owns_path(d) for d in dirs)
        # the sweep after a kill matches them by name, and no other run's
        removal = run_dirs_removal(host.run_id)
        patterns = [removal[i + 1] for i, a in enumerate(removal) if a == "-name"]
        assert all(any(fnmatch.fnmatch(Path(d).name, p) for p in patterns) for d in dirs)
        assert not any(fnmatch.fnmatch(proc.cfg.file_prefix.replace(host.run_id, "ff0000"), p) for p in patterns)
        proc.stop()
        assert recorded(host, "process") == []
