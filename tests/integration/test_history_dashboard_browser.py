"""The dashboard in a real browser: Debian's headless Chromium driven by selenium.

A store of 1,000 runs of one series with a 10 % drop in the last runs (plus a second series
whose test name and tags are `<script>` tags): pages load without JavaScript errors, the chart
shows every point, the regression is marked at the run it starts, a point's click opens its
run's report, filters change what is shown. Screenshots go to $VSPERF_SCREENSHOTS (or the
test's temporary folder) to be looked at.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the history tests' run directories

from history_runs import START, write_run
from history_store import sqlite_store

from vsperf.history.dashboard.server import make_server
from vsperf.history.dashboard.site import SiteOptions, write_site
from vsperf.history.importer import import_dirs
from vsperf.history.query import Filters

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium missing: pip install -e .[test]")
from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                reason="chromium missing: apt-get install chromium chromium-driver (tools/setup.sh)")
RUNS, DROP_AT = 1000, 990
EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    root = tmp_path_factory.mktemp("dashboard")
    rng = random.Random(23)
    for i in range(RUNS):
        value = 1e6 * (1 + rng.gauss(0, 0.01)) * (0.9 if i >= DROP_AT else 1.0)
        write_run(root / "runs", run_id=f"r{i:04d}", started=START + timedelta(hours=6 * i),
                  throughput={("phy2phy_tput", 64): value, (EVIL, 64): 5e5 * (1 + rng.gauss(0, 0.01))},
                  vswitch=("ovs", "3.1.0" if i < 500 else "3.2.0"),
                  tags={"lab": EVIL if i % 4 == 0 else "rack3"})
    with sqlite_store(root) as store:
        import_dirs(store, [root / "runs"])
        write_site(store, root / "site", SiteOptions(Filters(metrics=("throughput_rx_fps",)), trend_runs=50))
        yield root, store


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--allow-file-access-from-files"):
        options.add_argument(argument)
    options.binary_location = str(CHROMIUM)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=webdriver.ChromeService(str(DRIVER)), options=options)
    except WebDriverException as exc:
        pytest.skip(f"headless chromium did not start: {exc.msg}")
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("VSPERF_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _errors(browser: Any) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def _series_page(root: Path, label: str) -> Path:
    return next(p for p in (root / "site" / "series").iterdir() if f"<title>{label} ·" in p.read_text())


def _chart_ready(browser: Any) -> None:
    WebDriverWait(browser, 60).until(lambda b: b.execute_script(
        "var c = document.getElementById('chart'); return c && c.data && c.querySelectorAll('path.point').length"))


def test_the_index_loads_and_its_filters_hide_rows(site: tuple[Path, Any], browser: Any, tmp_path: Path) -> None:
    root, _store = site
    browser.get((root / "site" / "index.html").as_uri())
    assert _errors(browser) == []
    rows = browser.find_elements(By.CSS_SELECTOR, "#series tbody tr")
    assert len(rows) == 2 and browser.find_element(By.ID, "shown").text == "2 of 2 series"
    assert browser.find_element(By.CSS_SELECTOR, "tr[data-classification=regression] td a").text == "phy2phy_tput"
    assert EVIL in [r.find_element(By.CSS_SELECTOR, "td a").text for r in rows]  # shown as text
    browser.save_screenshot(str(_shots(tmp_path) / "dashboard-index.png"))
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-filter=test]")).select_by_visible_text("phy2phy_tput")
    visible = [r for r in rows if r.is_displayed()]
    assert len(visible) == 1 and browser.find_element(By.ID, "shown").text == "1 of 2 series"
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-filter=classification]")).select_by_visible_text(
        "progression")
    assert [r for r in rows if r.is_displayed()] == []


def test_the_series_chart_shows_every_run_and_marks_the_regression(site: tuple[Path, Any], browser: Any,
                                                                   tmp_path: Path) -> None:
    root, _store = site
    browser.get(_series_page(root, "phy2phy_tput p2p 64 B throughput_rx_fps").as_uri())
    _chart_ready(browser)
    assert _errors(browser) == []
    counts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#chart .scatterlayer .trace'))"
        ".map(t => t.querySelectorAll('path.point').length)")
    assert counts[0] == RUNS  # every run is a point
    regression = browser.execute_script(
        "var d = document.getElementById('chart').data.find(t => t.meta === 'regression'); return [d.x, d.y];")
    assert regression[0][0] == (START + timedelta(hours=6 * DROP_AT)).strftime("%Y-%m-%d %H:%M:%S")
    assert counts[2] == len(regression[0]) >= 1  # drawn as markers
    assert "regression" in browser.find_element(By.CSS_SELECTOR, ".setup .badge").text
    browser.save_screenshot(str(_shots(tmp_path) / "dashboard-series.png"))
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-point-filter=version]")).select_by_visible_text(
        "ovs 3.2.0")
    assert browser.find_element(By.ID, "shown").text == f"{RUNS - 500} of {RUNS} runs shown"
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-point-filter=tag]")).select_by_visible_text(
        f"lab={EVIL}")  # the option's text is the tag itself, and no alert ran
    assert browser.find_element(By.ID, "shown").text == f"{(RUNS - 500) // 4} of {RUNS} runs shown"
    assert browser.execute_script("return document.querySelectorAll('#chart .scatterlayer .trace')[0]"
                                  ".querySelectorAll('path.point').length") == (RUNS - 500) // 4


def test_clicking_a_point_opens_its_runs_report(site: tuple[Path, Any], browser: Any) -> None:
    root, _store = site
    browser.get(_series_page(root, "phy2phy_tput p2p 64 B throughput_rx_fps").as_uri())
    _chart_ready(browser)
    browser.execute_script("Plotly.relayout('chart', {'xaxis.range': [arguments[0], arguments[1]]})",
                           (START + timedelta(hours=6 * 995 - 3)).strftime("%Y-%m-%d %H:%M:%S"),
                           (START + timedelta(hours=6 * 999 + 3)).strftime("%Y-%m-%d %H:%M:%S"))
    WebDriverWait(browser, 30).until(lambda b: len(b.find_elements(
        By.CSS_SELECTOR, "#chart .scatterlayer .trace:first-child path.point")) >= 5)
    points = browser.find_elements(By.CSS_SELECTOR, "#chart .scatterlayer .trace:first-child path.point")
    visible = [p for p in points if p.rect["x"] > 0 and p.rect["width"] > 0]
    target = max(visible, key=lambda p: p.rect["x"])  # the rightmost point: the newest run, r0999
    ActionChains(browser).move_to_element(target).pause(0.3).click().perform()
    WebDriverWait(browser, 30).until(lambda b: b.current_url.endswith("/results_r0999/report.html"))
    assert "report of r0999" in browser.find_element(By.TAG_NAME, "h1").text


def test_the_live_server_and_the_two_run_view(site: tuple[Path, Any], browser: Any, tmp_path: Path) -> None:
    _root, store = site
    server = make_server(store, SiteOptions(Filters(metrics=("throughput_rx_fps",)), trend_runs=50))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        browser.get(server.url)
        assert len(browser.find_elements(By.CSS_SELECTOR, "#series tbody tr")) == 2 and _errors(browser) == []
        browser.find_element(By.CSS_SELECTOR, "tr[data-classification=regression] td a").click()
        _chart_ready(browser)
        assert _errors(browser) == []
        browser.get(server.url + "compare.html?a=r0000&b=r0995")
        assert "Run B against run A" in browser.find_element(By.TAG_NAME, "h1").text
        assert browser.find_elements(By.CSS_SELECTOR, "table.compare tr.regression")
        browser.save_screenshot(str(_shots(tmp_path) / "dashboard-compare.png"))
        assert _errors(browser) == []
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
