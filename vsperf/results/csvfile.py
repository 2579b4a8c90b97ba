"""One CSV file per test, as VSPERF wrote them: `result_<idx>_<Name>_<Deployment>.csv`.

A row per frame size. Columns: the metric keys some row has (VSPERF's order first), then
fixed per-row attributes that make the file readable on its own (type, packet_size,
traffic_type, test id, deployment, switch and generator with versions, ...). Numbers are
written plainly, None as an empty cell. `type` holds VSPERF's value (rfc2544, rfc2889) and
`test_type` vsperf's precise one, also for results.json files written before they were split;
start_time, stop_time and test_execution_time are VSPERF's (vsperf.results.vsperf_keys).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vsperf.results.atomic import write_text_atomic
from vsperf.results.model import ROW_ATTRIBUTE_KEYS, RunResults, TestResult, metric_columns, traffic_protocol
from vsperf.results.vsperf_keys import TEST_TYPE, time_keys, vsperf_type

# Columns after the metrics, always present, in this order (stable across vsperf versions).
ATTRIBUTE_COLUMNS = (
    *ROW_ATTRIBUTE_KEYS,  # type (VSPERF's: rfc2544, rfc2889), packet_size, traffic_type (L3 protocol)
    TEST_TYPE,  # vsperf's traffic type, e.g. rfc2544_back2back
    "bidir",
    "frame_modification",
    "id",
    "deployment",
    "vswitch",
    "vswitch_version",
    "trafficgen",
    "trafficgen_version",
    "vnf",
    "test_status",
    "run_id",
    "simulated",
    "test_execution_time",
    "start_time",
    "stop_time",
)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def csv_filename(index: int, name: str, deployment: str) -> str:
    """VSPERF's name, e.g. result_0_phy2phy_tput_p2p.csv (characters unsafe in a file name
    become '_')."""
    return f"result_{index}_{_UNSAFE.sub('_', name)}_{_UNSAFE.sub('_', deployment)}.csv"


def format_cell(value: Any) -> str:
    """A value as a CSV cell: numbers plainly (shortest exact float), None empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    return str(value)  # ints, strings, and booleans as VSPERF wrote them: True, False


def _component_field(test: TestResult, role: str, attr: str, fallback: Any) -> Any:
    component = test.component(role)
    if component is None:
        return fallback
    return getattr(component, attr)


def _setting_name(settings: Mapping[str, Any], key: str) -> Any:
    """A backend name from a setting that may be a plain name or a {name: ...} mapping."""
    value = settings.get(key)
    if isinstance(value, Mapping):
        return value.get("name") or value.get("NAME")
    return value


def csv_header(test: TestResult) -> list[str]:
    """The columns of `test`'s CSV file."""
    return [*(c for c in metric_columns(test.results) if c not in ATTRIBUTE_COLUMNS), *ATTRIBUTE_COLUMNS]


def csv_rows(run: RunResults, test: TestResult) -> list[dict[str, Any]]:
    """One row (column -> value) per frame size of `test`."""
    vnfs = [c.name for c in test.components if c.role == "vnf"]
    fixed: dict[str, Any] = {
        "type": test.traffic_type,
        "traffic_type": traffic_protocol(test, run.settings),
        "bidir": test.bidir,
        "frame_modification": test.frame_modification,
        "id": test.name,
        "deployment": test.deployment,
        "vswitch": _component_field(test, "vswitch", "name", _setting_name(run.settings, "VSWITCH")),
        "vswitch_version": _component_field(test, "vswitch", "version", None),
        "trafficgen": _component_field(test, "trafficgen", "name", _setting_name(run.settings, "TRAFFICGEN")),
        "trafficgen_version": _component_field(test, "trafficgen", "version", None),
        "vnf": " ".join(vnfs) if vnfs else None,
        "test_status": test.status,
        "run_id": run.run_id,
        "simulated": run.simulated,
        **time_keys(test.started_at, test.finished_at),
    }
    rows = []
    for result in test.results:
        row = dict(fixed)
        row["packet_size"] = result.packet_size
        # A search that reports one of VSPERF's row attributes itself knows best.
        row.update(result.metrics)
        # results.json of earlier versions held the precise type in `type`
        precise = str(result.metrics.get(TEST_TYPE) or result.metrics.get("type") or test.traffic_type)
        row[TEST_TYPE], row["type"] = precise, vsperf_type(precise)
        rows.append(row)
    return rows


def render_csv(run: RunResults, test: TestResult) -> str:
    """The CSV text of `test` (header and one line per frame size)."""
    header = csv_header(test)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in csv_rows(run, test):
        writer.writerow([format_cell(row.get(column)) for column in header])
    return out.getvalue()


def write_test_csv(results_dir: Path, run: RunResults, test: TestResult) -> Path:
    """(Re)write `test`'s CSV file atomically in `results_dir`; returns its path."""
    path = results_dir / csv_filename(test.index, test.name, test.deployment)
    write_text_atomic(path, render_csv(run, test))
    return path
