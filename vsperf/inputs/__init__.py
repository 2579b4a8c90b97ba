"""Everything vsperf reads, through one bounded loader (bounds in vsperf.inputs.limits).

- `read_text_file`: a regular file only (no FIFO, device or directory), at most N bytes, UTF-8;
- `load_yaml`: strict YAML 1.2 scalars, duplicate keys refused, aliases expanded at most
  MAX_NODES values, nesting at most MAX_DEPTH, no value containing itself;
- `load_json`: strict JSON (no NaN), bounded nesting;
- `check_value_text`, `check_shape`: a command-line or environment value, a parsed literal.
Conf files, --test-params, environment values, test-case files, testbed files, results.json
and the SSH files a testbed names all come through here.
"""

from vsperf.inputs.files import (
    InputError,
    check_value_text,
    decode_text,
    expand_path,
    file_kind,
    read_bytes,
    read_text_file,
)
from vsperf.inputs.jsonfile import JsonError, load_json
from vsperf.inputs.shape import ShapeError, check_shape
from vsperf.inputs.yamlfile import StrictLoader, load_yaml

__all__ = [
    "InputError",
    "JsonError",
    "ShapeError",
    "StrictLoader",
    "check_shape",
    "check_value_text",
    "decode_text",
    "expand_path",
    "file_kind",
    "load_json",
    "load_yaml",
    "read_bytes",
    "read_text_file",
]
