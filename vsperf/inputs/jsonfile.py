"""Bounded JSON: results.json and every other JSON vsperf reads.

Strict JSON only: NaN and Infinity (which Python's json module accepts, and vsperf never writes)
are refused, and so are numbers too big for a float (1e999, read as infinity), nesting deeper
than RESULTS_MAX_DEPTH (a file nested 100,000 deep used to crash the parser with a
RecursionError) and, where asked, more than a number of values.
"""

from __future__ import annotations

import json
from typing import Any

from vsperf.errors import ConfigError
from vsperf.inputs.limits import RESULTS_MAX_DEPTH, RESULTS_MAX_NODES
from vsperf.inputs.shape import check_shape


class JsonError(ConfigError):
    """A JSON text vsperf refuses: malformed, non-standard numbers, or too deep."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_json(text: str, where: str, *, max_depth: int = RESULTS_MAX_DEPTH,
              max_nodes: int = RESULTS_MAX_NODES) -> Any:
    """Parse JSON `text`; JsonError naming `where` when it is malformed, holds NaN or Infinity,
    nests deeper than `max_depth`, holds more than `max_nodes` values, or does not fit in memory."""
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise JsonError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:  # parse_constant's refusal
        raise JsonError(f"{where}: not valid JSON ({exc})") from None
    except RecursionError:
        raise JsonError(f"{where}: nested more than {max_depth} levels deep; vsperf refuses it") from None
    except MemoryError:
        raise JsonError(f"{where}: too big to read in the memory vsperf may use") from None
    return check_shape(data, where, max_depth=max_depth, max_nodes=max_nodes, finite=True)
