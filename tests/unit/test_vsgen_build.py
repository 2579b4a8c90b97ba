"""Finding and building the vsgen engine (no compiler run: the build itself is an integration test)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from vsperf.errors import PrerequisiteError
from vsperf.executor import LocalExecutor
from vsperf.host.build import cache_root, source_files, source_hash
from vsperf.trafficgen.vsgen import build
from vsperf.trafficgen.vsgen.build import SOURCE_DIRS, find_sources, locate_engine, missing_build_tools


def sources(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    (src / "main.c").write_text("int main(void) { return 0; }\n")
    (src / "Makefile").write_text("all:\n")
    (src / "engine.h").write_text("/* h */\n")
    (src / "notes.txt").write_text("not a source\n")
    return src


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_checkout_holds_the_engine_sources() -> None:
    src = find_sources(SOURCE_DIRS)
    assert src is not None
    names = {p.name for p in source_files(src)}
    assert {"main.c", "vsgen.bpf.c", "vsgen_shared.h", "Makefile", "bpfobj.S"} <= names


def test_source_hash_follows_the_sources_only(tmp_path: Path) -> None:
    src = sources(tmp_path)
    first = source_hash(src)
    (src / "notes.txt").write_text("changed\n")
    assert source_hash(src) == first
    (src / "engine.h").write_text("/* changed */\n")
    assert source_hash(src) != first
    assert len(first) == 16


def test_cache_root_follows_xdg() -> None:
    assert cache_root({"XDG_CACHE_HOME": "/x"}) == Path("/x/vsperf")
    assert cache_root({"HOME": "/home/u"}) == Path("/home/u/.cache/vsperf")


def test_missing_build_tools_names_them(tmp_path: Path) -> None:
    assert missing_build_tools(lambda tool: None, tmp_path / "nope.h", tmp_path / "nope.h") == [
        "make", "cc", "clang", "libbpf-dev", "libxdp-dev"]
    header = tmp_path / "libbpf.h"
    header.write_text("")
    assert missing_build_tools(lambda tool: f"/usr/bin/{tool}", header, header) == []


def test_the_setting_wins(tmp_path: Path) -> None:
    engine = executable(tmp_path / "my-engine")
    found = locate_engine(LocalExecutor(), str(engine), packaged=executable(tmp_path / "pkg" / "e"))
    assert (found.path, found.origin) == (engine, "setting")


def test_a_setting_that_is_no_executable_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PrerequisiteError, match="not an executable"):
        locate_engine(LocalExecutor(), str(tmp_path / "missing"))


def test_the_packaged_binary_comes_before_the_sources(tmp_path: Path) -> None:
    packaged = executable(tmp_path / "pkg" / "vsgen-engine")
    found = locate_engine(LocalExecutor(), packaged=packaged, sources=(sources(tmp_path),))
    assert found.origin == "package"


def test_a_cached_build_is_reused(tmp_path: Path) -> None:
    src = sources(tmp_path)
    cached = executable(tmp_path / "cache" / f"vsgen-{source_hash(src)}" / "vsgen-engine")
    found = locate_engine(LocalExecutor(), packaged=tmp_path / "none", sources=(src,), cache=tmp_path / "cache")
    assert found.path == cached and found.origin.startswith("built from")


def test_no_sources_no_binary_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PrerequisiteError, match="neither installed nor buildable"):
        locate_engine(LocalExecutor(), packaged=tmp_path / "none", sources=(tmp_path / "empty",))


def test_missing_compilers_are_named_with_the_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "missing_build_tools", lambda: ["clang"])
    with pytest.raises(PrerequisiteError, match=r"clang is missing: apt-get install .*libbpf-dev"):
        locate_engine(LocalExecutor(), packaged=tmp_path / "none", sources=(sources(tmp_path),),
                      cache=tmp_path / "cache")
    assert not any((tmp_path / "cache").glob("*/vsgen-engine"))


def test_a_failed_build_is_a_prerequisite_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.system("command -v make >/dev/null") != 0:
        pytest.skip("make missing")
    monkeypatch.setattr(build, "missing_build_tools", lambda: [])
    src = sources(tmp_path)
    (src / "Makefile").write_text("all:\n\tfalse\n")
    with pytest.raises(PrerequisiteError, match="building the vsgen engine failed"):
        locate_engine(LocalExecutor(), packaged=tmp_path / "none", sources=(src,), cache=tmp_path / "cache")
