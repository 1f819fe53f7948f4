"""The web page in a real browser: headless Chromium against a real `hopgraph serve` process.

Needs Debian's `chromium` and `chromium-driver` (/usr/bin/chromium, /usr/bin/chromedriver) and
the `selenium` package; skips with a message otherwise. Nothing is downloaded: Selenium is
pointed at those two binaries. The graph is ingested and served by child processes because a
Milvus Lite file is held by one process at a time.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BERNOULLI, QUESTION, need, run_process

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
API_KEY = "browser-test-key"
START_SECONDS = 120  # bound on the server's start (imports, model load, opening the graph)
WAIT_SECONDS = 60  # bound on each wait in the page


def _need_browser() -> None:
    # CI (.ci/run) installs the browser and sets HOPGRAPH_REQUIRE_BROWSER=1: there a missing
    # browser is a failure, not a skip.
    missing = pytest.fail if os.environ.get("HOPGRAPH_REQUIRE_BROWSER") == "1" else pytest.skip
    for binary, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not binary.exists():
            missing(f"{binary} not found (apt-get install {package})")
    pytest.importorskip("selenium", reason="selenium is not installed (pip install selenium)")
    for module in ("fastapi", "uvicorn"):
        pytest.importorskip(module, reason=f"{module} missing: the 'serve' extra is not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_health(url: str, server: subprocess.Popen[bytes], stderr: Path) -> None:
    """Poll GET /health until it answers; fail with the server's stderr if it exits."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"hopgraph serve exited with {server.returncode}:\n"
                        f"{stderr.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if json.load(reply).get("status") == "ok":
                    return
        except (OSError, urllib.error.URLError, ValueError):
            pass
        time.sleep(0.5)
    pytest.fail(f"hopgraph serve did not answer /health in {START_SECONDS} s:\n"
                f"{stderr.read_text(errors='replace')}")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """The Bernoulli graph, ingested and then served (with an API key) by child processes."""
    _need_browser()
    need(BERNOULLI)
    env = {"HOPGRAPH_URI": str(tmp_path / "demo.db"), "HOPGRAPH_GRAPH": "demo"}
    ingested = run_process("ingest", "--quiet", str(BERNOULLI), env=env, cwd=tmp_path)
    assert ingested.code == 0, ingested.stderr

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server_env = {**os.environ, **env, "HOPGRAPH_API_KEY": API_KEY}
    stderr = tmp_path / "serve.stderr"
    with stderr.open("wb") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "hopgraph.cli", "serve", "--host", "127.0.0.1",
             "--port", str(port)],
            env=server_env, cwd=tmp_path, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=err)
    try:
        _wait_for_health(url, server, stderr)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)


@pytest.fixture
def driver() -> Iterator[Any]:
    """Headless Chromium from Debian's packages (no browser download)."""
    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1280,1800"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                               options=options)
    try:
        yield browser
    finally:
        browser.quit()


def test_page_draws_the_multi_hop_path(served: str, driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, WAIT_SECONDS)

    def by_id(element_id: str) -> Any:
        return driver.find_element(By.ID, element_id)

    driver.get(f"{served}/")
    # The server wants a key: the page asks for it (on its first 401), keeps it and retries.
    wait.until(lambda _: by_id("auth").is_displayed())
    by_id("api-key").send_keys(API_KEY + "\n")
    wait.until(lambda _: "nano.json" in by_id("documents").text)
    assert driver.execute_script("return localStorage.getItem('hopgraph.apiKey')") == API_KEY

    by_id("question").send_keys(QUESTION)
    by_id("run").click()
    wait.until(lambda _: "Daniel Bernoulli" in by_id("graph-results").text
               or by_id("error").is_displayed())
    assert not by_id("error").is_displayed(), by_id("error").text
    assert by_id("timings").text.strip()

    bridges = driver.execute_script(
        "return window.hopgraphCy.nodes('[kind = \"bridge\"]').map(n => n.data('label'))")
    assert any("Johann Bernoulli" in label for label in bridges), bridges
    on_path = driver.execute_script("return window.hopgraphCy.edges('[?on_path]').length")
    assert on_path > 0

    # Clicking an entity adds its neighbours (GET /entities/{name}), without duplicates.
    driver.execute_script(
        "window.hopgraphCy.nodes('[kind = \"bridge\"]').first().emit('tap')")
    wait.until(lambda _: " relations, " in by_id("subgraph-status").text
               or by_id("error").is_displayed())
    assert not by_id("error").is_displayed(), by_id("error").text
    ids = driver.execute_script("return window.hopgraphCy.elements().map(e => e.id())")
    assert len(ids) == len(set(ids))

    screenshot = tmp_path / "page.png"
    assert driver.save_screenshot(str(screenshot))
    assert screenshot.stat().st_size > 0
    script_errors = [entry for entry in driver.get_log("browser")
                     if entry.get("source") == "javascript"]
    assert not script_errors, script_errors
