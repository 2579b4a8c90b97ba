"""Time of the Level Test Report: per format, serial against parallel, and the whole run.

The run is the 13 tests of seed 001 (VSPERF's report) at five frame sizes on the simulated DUT
(`--trafficgen dummy`), written in every format (RST, MD, HTML, PDF). Printed, each as the
min and median of `--repeat` rounds (the machine is shared: wall times are noisy, and the
process CPU time is printed next to them):
- each step of a serial rendering: plots, RST, Markdown, HTML, PDF (the time per format; the
  PDF as one document, and in parts merged, on one process and on PDF_PROCESSES);
- the whole report rendered serially and in parallel (worker processes), and their ratio;
- the whole `vsperf` run with every format against the 10 s target.
No assertions: numbers to read.

Run: PYTHONPATH=. .venv/bin/python bench/bench_report.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vsperf.report.anomalies import read_log_warnings
from vsperf.report.formats import OVERALL_LOG, render_report
from vsperf.report.html import doctree_to_html, embed_images, for_pdf, html_to_pdf
from vsperf.report.markdown import MarkdownWriter, parse_rst
from vsperf.report.pdflayout import import_weasyprint, layout_part
from vsperf.report.plots import Plot, write_plots
from vsperf.report.rst import render_rst
from vsperf.report.workers import PDF_PROCESSES
from vsperf.results.load import load_results, results_file

SEED_001_TESTS = [
    "phy2phy_tput", "back2back", "phy2phy_tput_mod_vlan", "phy2phy_cont", "pvp_cont", "pvvp_cont",
    "phy2phy_scalability", "pvp_tput", "pvp_back2back", "pvvp_tput", "pvvp_back2back", "phy2phy_cpu_load",
    "phy2phy_mem_load",
]
PARAMS = "TRAFFICGEN_PKT_SIZES=(64,128,512,1024,1518)"
TARGET_S = 10.0


def vsperf_run(results: Path, formats: str) -> None:
    """The seed's run on the simulated DUT, its report in `formats`."""
    argv = [sys.executable, "-m", "vsperf", *SEED_001_TESTS, "--trafficgen", "dummy", "--test-params", PARAMS,
            "--results-dir", str(results), "--report-format", formats]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise SystemExit(f"vsperf exited {done.returncode}:\n{tail}")


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """(wall s, CPU s of this process and its finished children) of `action()`."""
    before = os.times()
    start = time.perf_counter()
    action()
    wall = time.perf_counter() - start
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])
    return wall, cpu


def fresh_copy(source: Path, into: Path) -> Path:
    """A results directory with only what a run leaves before its report."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    for name in ("results.json", OVERALL_LOG):
        shutil.copy(source / name, into / name)
    return into


def serial_steps(results_dir: Path) -> dict[str, tuple[float, float]]:
    """Each step of a serial rendering, timed on its own."""
    source = results_file(results_dir)
    run = load_results(source)
    steps: dict[str, tuple[float, float]] = {}
    drawn: dict[int, list[Plot]] = {}

    def plots() -> None:
        drawn.update(write_plots(run, results_dir))

    steps["plots"] = timed(plots)
    texts: dict[str, object] = {}

    def rst() -> None:
        texts["rst"] = render_rst(run, source, drawn, read_log_warnings(results_dir / OVERALL_LOG))

    steps["rst"] = timed(rst)
    steps["md"] = timed(lambda: MarkdownWriter().render(parse_rst(str(texts["rst"]))))

    def html() -> None:
        texts["html"] = doctree_to_html(parse_rst(str(texts["rst"])))
        embed_images(str(texts["html"]), results_dir)

    steps["html"] = timed(html)
    pdf_html = for_pdf(str(texts["html"])).encode("utf-8")
    # The PDF laid out as one document (as before the parts), then in parts on one process
    # (the layout CPU time of the parts and their merge) and on PDF_PROCESSES.
    import_weasyprint()  # imported once, outside the timings (the PDF worker imports it early too)
    steps["pdf one document"] = timed(lambda: layout_part(pdf_html.decode("utf-8"), results_dir))
    steps["pdf parts, 1 process"] = timed(lambda: html_to_pdf(pdf_html, results_dir, results_dir / "bench.pdf"))
    steps[f"pdf parts, {PDF_PROCESSES} processes"] = timed(
        lambda: html_to_pdf(pdf_html, results_dir, results_dir / "bench.pdf", processes=PDF_PROCESSES))
    return steps


def line(name: str, samples: list[tuple[float, float]], note: str = "") -> str:
    walls = [w for w, _ in samples]
    cpus = [c for _, c in samples]
    return (f"{name:<28} wall min {min(walls):6.2f} s  median {statistics.median(walls):6.2f} s   "
            f"cpu min {min(cpus):6.2f} s  median {statistics.median(cpus):6.2f} s  {note}").rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds (min and median are printed)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="vsperf-bench-report-"))
    start_load = os.getloadavg()[0]  # the machine is shared: the load is part of the numbers
    try:
        base = work / "base"
        vsperf_run(base, "rst")  # the results every rendering below starts from
        steps: dict[str, list[tuple[float, float]]] = {}
        serial: list[tuple[float, float]] = []
        parallel: list[tuple[float, float]] = []
        whole: list[tuple[float, float]] = []
        text_only: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            for name, sample in serial_steps(fresh_copy(base, work / "steps")).items():
                steps.setdefault(name, []).append(sample)
            serial_dir = fresh_copy(base, work / "serial")
            serial.append(timed(lambda: render_report(serial_dir, parallel=False, strict=True)))  # noqa: B023
            parallel_dir = fresh_copy(base, work / "parallel")
            parallel.append(timed(lambda: render_report(parallel_dir, parallel=True, strict=True)))  # noqa: B023
            shutil.rmtree(work / "run", ignore_errors=True)
            whole.append(timed(lambda: vsperf_run(work / "run", "rst,md,html,pdf")))
            shutil.rmtree(work / "run-rst", ignore_errors=True)
            text_only.append(timed(lambda: vsperf_run(work / "run-rst", "rst")))
        pages = subprocess.run(["pdfinfo", str(work / "run" / "report.pdf")], capture_output=True, text=True,
                               check=False).stdout
        page_count = next((ln.split()[-1] for ln in pages.splitlines() if ln.startswith("Pages:")), "?")
        print(f"seed 001: {len(SEED_001_TESTS)} tests x 5 frame sizes, simulated DUT, {args.repeat} round(s), "
              f"{os.cpu_count()} CPU(s), load average {start_load:.1f} at the start, "
              f"{os.getloadavg()[0]:.1f} at the end; PDF pages: {page_count}")
        print("serial steps (the time per format):")
        for name, samples in steps.items():
            print("  " + line(name, samples))
        print("the whole report (plots + rst + md + html + pdf):")
        print("  " + line("serial", serial))
        print("  " + line("parallel (worker processes)", parallel))
        ratio = statistics.median(w for w, _ in serial) / statistics.median(w for w, _ in parallel)
        print(f"  serial / parallel, median wall: {ratio:.2f}x")
        print("the whole vsperf run (13 tests, then the report):")
        print("  " + line("rst only (plots drawn)", text_only))
        best = min(w for w, _ in whole)
        median = statistics.median(w for w, _ in whole)
        print("  " + line("every format", whole,
                          f"target {TARGET_S:.0f} s: min {'met' if best < TARGET_S else 'missed'}, "
                          f"median {'met' if median < TARGET_S else 'missed'}"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
