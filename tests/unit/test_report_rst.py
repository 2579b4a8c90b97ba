"""The RST Level Test Report, rendered from results.json alone and checked with docutils."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from vsperf.errors import ConfigError
from vsperf.report.formats import render_report as render_formats
from vsperf.report.markup import format_value
from vsperf.results.load import load_results
from vsperf.results.model import ComponentInfo
from vsperf.results.writer import ResultsWriter
from vsperf.search.measurer import FLAG_UNDER_DELIVERY, LatencyStats, TrialResult
from vsperf.search.outcome import SearchOutcome

docutils_core = pytest.importorskip("docutils.core", reason="docutils checks the RST (pip install docutils)")
from docutils import nodes  # noqa: E402

NO_ANOMALIES = "No anomalies were detected during the course of this test."
HOSTILE_ERROR = "ovs-vswitchd died:\n  *** |bad| `x` ref_ ::\n1. not a list"
LINE_64 = 29_761_904.761904761


def _trial(
    size: int, rate: float, sent: float, rx_ratio: float = 1.0, flags: tuple[str, ...] = ()
) -> TrialResult:
    tx = int(sent * 60)
    return TrialResult(
        kind="rate",
        frame_size_bytes=size,
        requested_rate_fps=rate,
        duration_s=60.0,
        tx_frames=tx,
        rx_frames=int(tx * rx_ratio),
        actual_tx_rate_fps=sent,
        line_rate_fps=LINE_64 * 84 / (size + 20),
        latency=LatencyStats(min_ns=5420.0, avg_ns=9002.0, max_ns=190440.0),
        flags=flags,
        purpose="search",
    )


THROUGHPUT = {
    64: SearchOutcome(
        metrics={
            "tx_rate_fps": 23316602.825,
            "throughput_rx_fps": 23316602.825,
            "tx_rate_mbps": 11938.101,
            "throughput_rx_mbps": 11938.101,
            "tx_rate_percent": 78.344,
            "throughput_rx_percent": 78.344,
            "frame_loss_percent": 0.0,
            "min_latency_ns": 5420.0,
            "max_latency_ns": 190440.0,
            "avg_latency_ns": 9002.0,
            "latency_p99_ns": None,
        },
        trials=(
            _trial(64, LINE_64, LINE_64 * 0.9, flags=(FLAG_UNDER_DELIVERY,)),
            _trial(64, 20_000_000.0, 20_000_000.0),
            _trial(64, 23316602.825, 23316602.825),
        ),
        details={"search": "binary", "precision_fps": 1000},
    ),
    1518: SearchOutcome(
        metrics={"throughput_rx_fps": 1625470.065, "throughput_rx_percent": 100.0, "frame_loss_percent": 0.0},
        trials=(_trial(1518, 1625470.065, 1625470.065),),
    ),
}
B2B = SearchOutcome(
    metrics={"b2b_frames": 21713, "b2b_frame_loss_percent": 0.0},
    trials=(
        TrialResult("burst", 64, LINE_64, 0.001, 21713, 21713, LINE_64, LINE_64, purpose="verification"),
    ),
)


STATISTICS = {
    "Process: ovs-vswitchd": {"PID": 94617, "%usr": 199.93, "%CPU": 200.0, "CPU": "1", "VSZ": 4143516},
    "Process: ovsdb-server": {"PID": 94616, "%CPU": 0.0},
}


TESTBED_HOSTS = [
    {"name": "dut", "roles": ["DUT"], "address": "dut (root@192.0.2.10:22)", "os": "Debian GNU/Linux 12 (bookworm)",
     "kernel": "6.1.0-18-amd64", "cpu_model": "Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz", "cpu_cores_logical": 64,
     "cpu_cores_physical": 32, "cpu_sockets": 1, "memory_kb": 263856172, "board": "Supermicro X12SPi-TF",
     "hostname": "dut1", "nics": [{"name": "ens1f0", "driver": "ice", "firmware": "4.20", "bus": "0000:3b:00.0"}]},
    {"name": "tgen", "roles": ["traffic generator"], "address": "tgen (root@192.0.2.11:22)", "os": "Debian",
     "kernel": "6.1.0-18-amd64", "cpu_model": "AMD EPYC 7313", "cpu_cores_logical": 32, "memory_kb": 131000000,
     "board": "unknown", "hostname": "tgen1", "nics": []},
]


def _make_run(results_dir: Path, *, simulated: bool = False, finish: bool = True,
              testbed: bool = False) -> ResultsWriter:
    writer = ResultsWriter(
        results_dir,
        run_id="abc123",
        command_line=["vsperf", "phy2phy_tput", "back2back", "pvp_tput"],
        simulated=simulated,
        environment={
            "os": "CentOS Linux 7 (Core)",
            "kernel": "3.10.0-327.13.1.el7.x86_64",
            "cpu_model": "Intel(R) Xeon(R) CPU E5-2699 v3 @ 2.30GHz",
            "cpu_cores_logical": 72,
            "cpu_cores_physical": 36,
            "cpu_sockets": 2,
            "memory_kb": 65696348,
            "board": "Intel Corporation S2600WTT",
            "vsperf_version": "0.1.0",
            "vsperf_git_commit": "22ffe5b07adeb514572dc3db8b435ef4107e348b",
            "nics": [{"name": "vsp-abc-g0", "driver": "veth"}, "vsp-abc-g1 (veth)"],
            **({"testbed_hosts": TESTBED_HOSTS} if testbed else {}),
        },
        settings={
            "REPORT_DOCUMENT_ID": "OPNFV_vswitchperf_LTR_{date}_DRAFT",
            "TRAFFICGEN_LOSSRATE": 0.0,
            "TRAFFICGEN_DURATION": 60,
            "TRAFFIC": {"l3": {"proto": "udp"}},
        },
        settings_sources={"TRAFFICGEN_DURATION": "conf/03_traffic.yaml"},
        clock=lambda: "2016-05-11T07:36:56+00:00",
    )
    components = [
        ComponentInfo("trafficgen", "xdpgen", "0.1"),
        ComponentInfo("vswitch", "ovsdpdk", "3.1.0", {"datapath": "netdev"}),
        ComponentInfo("dpdk", "dpdk", "22.11"),
    ]

    def start(name: str, traffic_type: str, deployment: str = "p2p") -> int:
        return writer.start_test(
            name=name,
            description=f"LTD.{name}",
            deployment=deployment,
            traffic_type=traffic_type,
            bidir=True,
            frame_modification=None,
            parameters={"TRAFFIC": {"traffic_type": traffic_type}},
            components=components,
        )

    index = start("phy2phy_tput", "rfc2544_throughput")
    for size, outcome in THROUGHPUT.items():
        writer.add_frame_size(index, size, outcome, STATISTICS if size == 64 else None)
    if not finish:
        return writer
    writer.finish_test(index, "passed")
    index = start("back2back", "rfc2544_back2back")
    writer.add_frame_size(index, 64, B2B)
    writer.finish_test(index, "passed")
    index = start("pvp_tput", "rfc2544_throughput", "pvp")
    writer.set_components(
        index, [*components, ComponentInfo("vnf", "testpmd", "22.11", {"guest": "virtio_user"})]
    )
    writer.finish_test(index, "failed", HOSTILE_ERROR)
    writer.finish_run("finished")
    return writer


def _doctree(path: Path) -> nodes.document:
    stream = io.StringIO()
    doc = docutils_core.publish_doctree(
        path.read_text(), settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream}
    )
    problems = [m.astext() for m in doc.findall(nodes.system_message) if m["level"] >= 2]
    assert not problems and not stream.getvalue(), (problems, stream.getvalue())
    return doc


def _sections(doc: nodes.document) -> dict[str, list[nodes.section]]:
    found: dict[str, list[nodes.section]] = {}
    for section in doc.findall(nodes.section):
        found.setdefault(section[0].astext(), []).append(section)
    return found


def _table_rows(section: nodes.Element) -> list[list[str]]:
    table = next(iter(section.findall(nodes.table)))
    return [
        [" ".join(e.astext().split()) for e in row.findall(nodes.entry)] for row in table.findall(nodes.row)
    ]



def render_report(results_dir: Path) -> list[Path]:
    """The RST report alone, through the one entry point (no plots: the RST is what is checked)."""
    return render_formats(results_dir, ("rst",), plots=False, parallel=False)

@pytest.fixture
def report(tmp_path: Path) -> tuple[Path, nodes.document]:
    """A report rendered in a directory that holds results.json and nothing else."""
    _make_run(tmp_path / "run")
    alone = tmp_path / "copy"
    alone.mkdir()
    shutil.copy(tmp_path / "run" / "results.json", alone / "results.json")
    (path,) = render_report(alone)
    assert path == alone / "report.rst"
    return path, _doctree(path)


def test_every_metric_value_is_in_its_table(report: tuple[Path, nodes.document]) -> None:
    _, doc = report
    tests = {s[0].astext(): s for s in _sections(doc)["Test ID: PHY2PHY_TPUT"]}
    (test,) = tests.values()
    sizes = {s[0].astext(): s for s in test.findall(nodes.section)}
    for size, outcome in THROUGHPUT.items():
        rows = _table_rows(sizes[f"Test results for packet size: {size}"])
        assert rows[0] == ["Metric", "Result"]
        table = dict((k, v) for k, v in rows[1:])
        for key, value in outcome.metrics.items():
            assert table.pop(key) == format_value(value), key
        assert table == {"type": "rfc2544_throughput", "packet_size": str(size), "traffic_type": "udp"}
    assert dict(_table_rows(sizes["Test results for packet size: 64"])[1:])["avg_latency_ns"] == "9002.000"
    assert dict(_table_rows(sizes["Test results for packet size: 64"])[1:])["latency_p99_ns"] == "n/a"


def test_statistics_tables(report: tuple[Path, nodes.document]) -> None:
    _, doc = report
    (section,) = _sections(doc)["Statistics collected"]  # only 64 B of phy2phy_tput has some
    text = " ".join(section.astext().split())
    assert "Process: ovs-vswitchd:" in text and "Process: ovsdb-server:" in text
    tables = list(section.findall(nodes.table))
    rows = [
        [" ".join(e.astext().split()) for e in r.findall(nodes.entry)] for r in tables[0].findall(nodes.row)
    ]
    assert rows == [
        ["Statistic", "Value"],
        ["PID", "94617"],
        ["%usr", "199.930"],
        ["%CPU", "200.000"],
        ["CPU", "1"],
        ["VSZ", "4143516"],
    ]


def test_trial_log_lists_every_trial(report: tuple[Path, nodes.document]) -> None:
    _, doc = report
    logs = _sections(doc)["Trial log"]
    assert len(logs) == 3  # 64 and 1518 B of phy2phy_tput, 64 B of back2back
    rows = _table_rows(logs[0])
    assert rows[0][:3] == ["#", "Purpose", "Offered rate (fps)"]
    assert len(rows) == 1 + len(THROUGHPUT[64].trials)
    first = THROUGHPUT[64].trials[0]
    assert rows[1] == [
        "1",
        "search",
        format_value(first.requested_rate_fps),
        "100.000",
        format_value(first.actual_tx_rate_fps),
        "60.000",
        str(first.tx_frames),
        str(first.rx_frames),
        "0.000",
        FLAG_UNDER_DELIVERY,
    ]


def test_anomalies_say_none_only_when_true(report: tuple[Path, nodes.document]) -> None:
    path, doc = report
    anomalies = [s.astext() for s in _sections(doc)["Anomalies"]]
    assert len(anomalies) == 3
    tput, b2b, failed = anomalies
    assert NO_ANOMALIES not in tput and "1 of 3 trials flagged generator_under_delivery" in tput
    assert NO_ANOMALIES in b2b
    assert NO_ANOMALIES not in failed
    assert " ".join(HOSTILE_ERROR.split()) in " ".join(failed.split())
    assert path.read_text().count(NO_ANOMALIES) == 1


def test_structure_and_environment(report: tuple[Path, nodes.document]) -> None:
    _, doc = report
    sections = _sections(doc)
    for title in (
        "Introduction",
        "Document identifier",
        "Scope",
        "References",
        "Details of the Level Test Report",
        "Rationale for decisions",
        "Conclusions",
        "General",
        "Glossary",
        "Test ID: BACK2BACK",
        "Test ID: PVP_TPUT",
    ):
        assert title in sections, title
    assert len(sections["Test Environment"]) == 3
    text = " ".join(doc.astext().split())
    assert "OPNFV_vswitchperf_LTR_2016-05-11_DRAFT" in text
    assert "NIC(s): name: vsp-abc-g0, driver: veth vsp-abc-g1 (veth)" in text
    assert "Board: Intel Corporation S2600WTT [2 sockets]" in text
    assert "CPU cores: 72 logical, 36 physical" in text
    assert "Memory: 65696348 kB" in text
    assert "vsperf: Version: 0.1.0, GIT tag: 22ffe5b07adeb514572dc3db8b435ef4107e348b" in text
    assert "Traffic Generator: xdpgen, Version: 0.1" in text
    assert "vSwitch: ovsdpdk, Version: 3.1.0, datapath: netdev" in text
    assert "DPDK Version: 22.11" in text
    assert "VNF: testpmd, Version: 22.11, guest: virtio_user" in text
    assert "Bidirectional: True" in text
    assert "Mbps: 1,000,000 bits per second of layer-2 frames" in text
    assert "phy2phy_tput (p2p, rfc2544_throughput): throughput_rx_fps ranged from 1625470.065 fps" in text
    assert "3 test(s) ran: 2 passed (phy2phy_tput, back2back); 1 failed (pvp_tput)." in text
    assert "SIMULATED" not in text and "Simulated:" not in text
    assert not list(doc.findall(nodes.warning))


def test_on_a_testbed_the_environment_describes_the_dut_host_and_the_controller_apart(tmp_path: Path) -> None:
    _make_run(tmp_path, testbed=True)
    (path,) = render_report(tmp_path)
    doc = _doctree(path)
    env = " ".join(_sections(doc)["Test Environment"][0].astext().split())
    # The facts VSPERF lists for its one host are the DUT host's (read there), not the controller's.
    assert "OS: Debian GNU/Linux 12 (bookworm) Kernel Version: 6.1.0-18-amd64" in env
    assert "CPU: Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz CPU cores: 64 logical, 32 physical" in env
    assert "Board: Supermicro X12SPi-TF [1 socket]" in env and "Host name: dut1" in env
    assert ("Controller (vsperf ran here): OS: CentOS Linux 7 (Core) Kernel Version: 3.10.0-327.13.1.el7.x86_64 "
            "Board: Intel Corporation S2600WTT [2 sockets]") in env
    assert "Testbed host tgen: Role: traffic generator Address: tgen (root@192.0.2.11:22)" in env
    assert "CPU cores: 32 logical Memory: 131000000 kB" in env  # physical cores not read: not shown
    assert "NIC: name: ens1f0, driver: ice, firmware: 4.20, bus: 0000:3b:00.0" in env
    assert not [r for r in doc.findall(nodes.reference) if r.get("refuri", "").startswith("mailto:")]
    assert not list(doc.findall(nodes.warning))


def test_simulated_runs_say_so(tmp_path: Path) -> None:
    _make_run(tmp_path, simulated=True)
    (path,) = render_report(tmp_path)
    doc = _doctree(path)
    (warning,) = doc.findall(nodes.warning)
    assert "SIMULATED RUN" in warning.astext()
    assert " ".join(doc.astext().split()).count("Simulated: yes") == 3


def test_report_of_a_killed_run(tmp_path: Path) -> None:
    _make_run(tmp_path, finish=False)  # never finished: status running on disk
    (path,) = render_report(tmp_path)
    text = " ".join(_doctree(path).astext().split())
    assert "Run status running" in text  # a docinfo field
    assert "The test had not finished when these results were written" in text
    assert NO_ANOMALIES not in text
    assert load_results(tmp_path).tests[0].packet_sizes == (64, 1518)


def test_empty_run_renders(tmp_path: Path) -> None:
    writer = ResultsWriter(
        tmp_path,
        run_id="r",
        command_line=[],
        simulated=False,
        environment={},
        settings={},
        settings_sources={},
    )
    writer.finish_run("interrupted")
    (path,) = render_report(tmp_path)
    text = " ".join(_doctree(path).astext().split())
    assert "No test was run." in text and "vsperf_LTR_" in text


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such results file"):
        render_report(tmp_path)
    _make_run(tmp_path)
    with pytest.raises(ConfigError, match="report format 'docx' is not supported"):
        render_formats(tmp_path, ("rst", "docx"), plots=False)
    assert not (tmp_path / "report.rst").exists()


def test_rerender_is_identical(tmp_path: Path) -> None:
    _make_run(tmp_path)
    (path,) = render_report(tmp_path)
    first = path.read_text()
    render_report(tmp_path)
    assert path.read_text() == first
