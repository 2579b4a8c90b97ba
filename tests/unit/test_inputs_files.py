"""Reading an input file: regular files only, bounded, UTF-8, each refusal one line naming the file."""

from __future__ import annotations

import codecs
import os
import time
from pathlib import Path

import pytest

from vsperf.inputs import InputError, check_value_text, expand_path, read_text_file
from vsperf.inputs.files import read_bytes
from vsperf.inputs.limits import size_text


def test_a_regular_utf8_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(codecs.BOM_UTF8 + "KEY: 'é'\n".encode())
    assert read_text_file(path, "conf file a.yaml", 1024) == "KEY: 'é'\n"  # the BOM is dropped


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(InputError, match=r"^conf file fifo: is a FIFO \(named pipe\), not a regular file"):
        read_text_file(fifo, "conf file fifo", 1024)
    assert time.monotonic() - started < 1  # no writer ever comes: opening it must not wait for one


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "a character device"), ("/", "a directory")])
def test_devices_and_directories_are_refused(path: str, kind: str) -> None:
    with pytest.raises(InputError, match=rf"^x: is {kind}, not a regular file; give the path of a file$"):
        read_text_file(Path(path), "x", 1024)


def test_missing_and_impossible_paths(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^x: no such file$"):
        read_text_file(tmp_path / "nope", "x", 10)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match=r"^x: a part of the path .*/file/y is a file, not a directory$"):
        read_text_file(tmp_path / "file" / "y", "x", 10)


def test_size_is_bounded_by_the_file_system_and_while_reading(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with big.open("wb") as fh:
        fh.truncate(3 * 1024 * 1024)  # sparse: refused from its size, without reading it
    too_big = r"^x: 3 MiB, more than the 1 MiB vsperf reads from such a file; is it the right file\?$"
    with pytest.raises(InputError, match=too_big):
        read_bytes(big, "x", 1024 * 1024)
    # /proc reports 0 bytes: the bound holds while reading
    with pytest.raises(InputError, match=r"^x: over 16 bytes, more than the 16 bytes"):
        read_bytes(Path("/proc/self/status"), "x", 16)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{"a": 1}'.encode("utf-16"), r"^f: is UTF-16 text; save it as UTF-8$"),
        (b"a: 1\nb: \xff\n", r"^f: not UTF-8 text \(byte 0xff on line 2\); save it as UTF-8$"),
        (b"a: 1\n\x00\x01\x02", r"^f: holds a NUL byte on line 2: a binary file, not text$"),
    ],
)
def test_text_must_be_utf8(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "f"
    path.write_bytes(data)
    with pytest.raises(InputError, match=message):
        read_text_file(path, "f", 1024)


def test_home_of_an_unknown_user() -> None:
    with pytest.raises(InputError, match=r"^LOG_DIR: '~nosuchuser': no such user's home directory; write the full"):
        expand_path("~nosuchuser/x", "LOG_DIR")
    assert expand_path("/a/b", "x") == Path("/a/b")


def test_values_are_bounded() -> None:
    assert check_value_text("abc", "v", 3) == "abc"
    with pytest.raises(InputError, match=r"^v: 4 characters, more than the 3 vsperf reads in one value"):
        check_value_text("abcd", "v", 3)
    with pytest.raises(InputError, match=r"^v: holds a NUL character$"):
        check_value_text("a\x00", "v", 3)


def test_size_text() -> None:
    assert [size_text(n) for n in (17, 1024, 1536, 300 * 1024, 64 * 1024 * 1024)] == [
        "17 bytes", "1 KiB", "1.5 KiB", "300 KiB", "64 MiB"]
