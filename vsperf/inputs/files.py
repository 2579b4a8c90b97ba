"""Reading an input file: a regular file only, bounded in size, UTF-8 text, or a one-line error.

Everything vsperf reads from a path comes through `read_text_file`: conf files, test-case files,
testbed files, results.json, and the SSH files a testbed names. What it refuses, and why:
- anything but a regular file: a FIFO would block forever, /dev/zero never ends, a directory is
  a slip of the tongue. The type is checked before the file is opened (opening some devices has
  side effects) and again on the open descriptor, which is opened non-blocking (a FIFO swapped in
  between cannot hang the open);
- more than `max_bytes`: checked on the size the file system reports and again while reading
  (a file in /proc reports 0 bytes, a file may grow);
- text that is not UTF-8 (the error says where the first bad byte is, and names UTF-16, which
  Windows editors write), or that holds NUL bytes (a binary file).
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path

from vsperf.errors import ConfigError
from vsperf.inputs.limits import size_text

_READ_CHUNK_BYTES = 64 * 1024
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class InputError(ConfigError):
    """An input file or value vsperf refuses to read: one line naming it, the problem and the fix."""


def file_kind(mode: int) -> str:
    """What a file of `mode` is, as a person says it ('a directory', 'a FIFO (named pipe)', ...)."""
    return next((name for test, name in _KINDS if test(mode)), "a regular file" if stat.S_ISREG(mode) else "special")


def expand_path(path: str | Path, what: str) -> Path:
    """`path` with a leading ~ or ~user expanded; InputError naming `what` when there is no such
    user (pathlib raises a bare RuntimeError)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        user = str(path).split("/", 1)[0]
        raise InputError(f"{what}: {user!r}: no such user's home directory; write the full path") from None


def _open_error(what: str, path: Path, exc: OSError) -> InputError:
    if exc.errno == errno.ENOENT:
        return InputError(f"{what}: no such file")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return InputError(f"{what}: permission denied; make it readable (chmod) or run as its owner")
    if exc.errno == errno.ENAMETOOLONG:
        return InputError(f"{what}: the path is too long for the file system")
    if exc.errno == errno.ENOTDIR:
        return InputError(f"{what}: a part of the path {path} is a file, not a directory")
    if exc.errno == errno.ELOOP:
        return InputError(f"{what}: too many levels of symbolic links")
    return InputError(f"{what}: cannot read it: {exc.strerror or exc}")


def _check_mode(what: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise InputError(f"{what}: is {file_kind(mode)}, not a regular file; give the path of a file")


def _too_big(what: str, max_bytes: int, size: str) -> InputError:
    return InputError(f"{what}: {size}, more than the {size_text(max_bytes)} vsperf reads from such a file; "
                      f"is it the right file?")


def read_bytes(path: Path, what: str, max_bytes: int) -> bytes:
    """The content of the regular file `path`, at most `max_bytes` long; InputError otherwise.

    `what` names the file in messages, e.g. 'conf file x.yaml'.
    """
    try:
        _check_mode(what, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _open_error(what, path, exc) from None
    try:
        status = os.fstat(fd)
        _check_mode(what, status.st_mode)
        if status.st_size > max_bytes:
            raise _too_big(what, max_bytes, size_text(status.st_size))
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, _READ_CHUNK_BYTES)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise _too_big(what, max_bytes, "over " + size_text(max_bytes))
            chunks.append(chunk)
    except OSError as exc:
        raise InputError(f"{what}: cannot read it: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


_UTF16_32_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)


def decode_text(data: bytes, what: str) -> str:
    """`data` as UTF-8 text (a leading UTF-8 byte-order mark is dropped); InputError naming the
    first byte that is not UTF-8, or the encoding a byte-order mark says the text is in."""
    for bom, name in _UTF16_32_BOMS:
        if data.startswith(bom):
            raise InputError(f"{what}: is {name} text; save it as UTF-8")
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{what}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
                         f"save it as UTF-8") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError(f"{what}: holds a NUL byte on line {line}: a binary file, not text")
    return text


def read_text_file(path: Path, what: str, max_bytes: int) -> str:
    """The UTF-8 text of the regular file `path` (at most `max_bytes`); InputError otherwise."""
    return decode_text(read_bytes(path, what, max_bytes), what)


def check_value_text(text: str, what: str, max_chars: int) -> str:
    """A value given on the command line or in the environment, refused when longer than
    `max_chars` or holding a NUL character; returned unchanged otherwise."""
    if len(text) > max_chars:
        raise InputError(f"{what}: {len(text):,} characters, more than the {max_chars:,} vsperf reads in one "
                         f"value; put such settings in a --conf-file")
    if "\x00" in text:
        raise InputError(f"{what}: holds a NUL character")
    return text
