"""The snappi client of an Open Traffic Generator controller: loading, connecting, errors.

snappi is an optional dependency (`pip install vsperf[otg]`): it is imported here only, on
first use, so that vsperf without it still lists and checks the backend. Two gaps of snappi's
HTTP transport are closed where the connection is made: it sends every request with
`verify=False` and without a timeout, whatever the caller asked for. The session's adapters
are wrapped so that TRAFFICGEN_OTG_VERIFY_TLS and TRAFFICGEN_OTG_TIMEOUT_S really apply.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from vsperf.errors import PrerequisiteError, TrafficGenError

INSTALL_HINT = "pip install 'vsperf[otg]'"
# snappi logs its own warnings ("Version check is disabled", ...) to the logger it is given.
_SNAPPI_LOG = logging.getLogger("vsperf.trafficgen.otg.snappi")


def load_snappi() -> ModuleType:
    """The snappi module, or a one-line PrerequisiteError naming the extra to install."""
    try:
        return importlib.import_module("snappi")
    except ImportError as exc:
        raise PrerequisiteError(
            f"the otg generator needs the snappi package ({exc}); install it with {INSTALL_HINT}"
        ) from None


def snappi_version() -> str:
    """The installed snappi's version ("" when it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("snappi")
    except metadata.PackageNotFoundError:
        return ""


def new_api(location: str = "http://127.0.0.1:1") -> Any:
    """A snappi HTTP Api object (also the factory of every OTG message class)."""
    snappi = load_snappi()
    return snappi.api(location=location, verify=False, logger=_SNAPPI_LOG, loglevel=logging.ERROR)


def _enforce(send: Callable[..., Any], verify: bool, timeout_s: float) -> Callable[..., Any]:
    def send_checked(request: Any, **kwargs: Any) -> Any:
        kwargs["verify"] = verify
        kwargs["timeout"] = kwargs.get("timeout") or timeout_s
        return send(request, **kwargs)

    return send_checked


def connect(location: str, verify_tls: bool, timeout_s: float, ext: str = "") -> Any:
    """A snappi Api talking to the controller at `location` (http:// or https:// URL).

    `ext` names a snappi extension (e.g. "ixnetwork": snappi-ixnetwork drives IxNetwork's own
    REST API with its own HTTP client, to which the TLS and timeout settings do not reach)."""
    if ext:
        snappi = load_snappi()
        try:
            return snappi.api(location=location, ext=ext, logger=_SNAPPI_LOG, loglevel=logging.ERROR)
        except Exception as exc:  # snappi raises a bare Exception for a missing extension
            raise PrerequisiteError(
                f"snappi extension {ext!r} is not usable ({error_message(exc)}); install it with "
                f"pip install 'vsperf[{ext}]'"
            ) from None
    api = new_api(location)
    session = getattr(getattr(api, "_transport", None), "_session", None)
    if session is None:  # a snappi whose transport changed: refuse rather than ignore TLS
        raise PrerequisiteError(
            f"snappi {snappi_version()} has no HTTP session to configure; install a snappi that vsperf "
            f"supports with {INSTALL_HINT}"
        )
    adapters = importlib.import_module("requests.adapters")
    for prefix in ("http://", "https://"):
        adapter = adapters.HTTPAdapter()
        adapter.send = _enforce(adapter.send, verify_tls, timeout_s)
        session.mount(prefix, adapter)
    return api


def error_message(exc: BaseException) -> str:
    """One line from a failed snappi call: the controller's `errors` list when it sent one."""
    error = exc.args[0] if len(exc.args) == 1 else None
    errors = getattr(error, "errors", None)
    if errors is not None:
        code = getattr(error, "code", None)
        text = "; ".join(" ".join(str(e).split()) for e in errors) or "no message"
        return f"{text} (code {code})" if code is not None else text
    text = " ".join(str(exc).split()) or type(exc).__name__
    if type(exc).__module__.startswith("requests"):  # a transport failure: its root cause is enough
        if "timed out" in text.lower():
            return "no answer within TRAFFICGEN_OTG_TIMEOUT_S"
        cause = re.search(r"\[Errno -?\d+\][^'\"()]*", text)
        return f"cannot connect ({cause.group(0).strip() if cause else type(exc).__name__})"
    return text[:400]


def call(what: str, location: str, func: Callable[..., Any], *args: Any) -> Any:
    """Run one snappi call; any failure becomes a one-line TrafficGenError."""
    try:
        return func(*args)
    except Exception as exc:  # snappi raises bare Exceptions carrying the controller's Error
        raise TrafficGenError(f"OTG controller {location}: {what} failed: {error_message(exc)}") from exc
