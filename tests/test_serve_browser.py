"""The web page in a real browser: headless Chromium against a real `hopgraph serve` process.

Needs Debian's `chromium` and `chromium-driver` (/usr/bin/chromium, /usr/bin/chromedriver) and
the `selenium` package; skips with a message otherwise. Nothing is downloaded: Selenium is
pointed at those two binaries. The Bernoulli graph is ingested and served by child processes
because a Milvus Lite file is held by one process at a time; a second graph is made and filled
through the server's API. One server serves the module's tests; each test has a browser of its
own (a fresh localStorage).
"""

from __future__ import annotations

import contextlib
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
from conftest import BERNOULLI, QUESTION, need, run_cli, run_process

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
API_KEY = "browser-test-key"
START_SECONDS = 120  # bound on the server's start (imports, model load, opening the graph)
WAIT_SECONDS = 60  # bound on each wait in the page

# The second graph: other content, under a document id that is markup (shown as text, whole).
ODD_DOC_ID = 'archive/2024/<img src=x onerror=alert(1)>&amp; "Lovelace" notes.txt'
OTHER_ROWS = [
    {"passage": "Ada Lovelace wrote the first published algorithm for the Analytical Engine, "
                "a mechanical computer designed by Charles Babbage.",
     "triplets": [["Ada Lovelace", "wrote an algorithm for", "the Analytical Engine"],
                  ["Charles Babbage", "designed", "the Analytical Engine"]]},
    {"passage": "Charles Babbage was an English mathematician who also designed the "
                "Difference Engine to compute polynomial tables.",
     "triplets": [["Charles Babbage", "designed", "the Difference Engine"],
                  ["the Difference Engine", "computes", "polynomial tables"]]},
]
OTHER_QUESTION = "Who designed the engine that Ada Lovelace wrote an algorithm for?"

# A third graph: a passage stored with a source (as a PDF's chunk is), one without.
SOURCED_ROWS = [
    {"passage": "3. Safety\nThe battery pack of the Kestrel Probe is charged at room "
                "temperature by Norrcell.",
     "triplets": [["Norrcell", "charges", "the Kestrel Probe battery pack"]],
     "doc_id": "report.pdf",
     "metadata": {"source": "report.pdf", "file": "report.pdf", "type": "pdf", "page": 3,
                  "headings": ["Field report", "3. Safety"], "start": 310, "end": 392}},
    {"passage": "Keller Polymers makes the Kestrel Probe casing for Norrcell.",
     "triplets": [["Keller Polymers", "makes", "the Kestrel Probe casing"],
                  ["Keller Polymers", "supplies", "Norrcell"]],
     "doc_id": "old-notes"},
]
SOURCED_QUESTION = "How is the Kestrel Probe battery charged?"

# The label box of each edge whose label shows (cytoscape draws on a canvas: its own label
# bounds stand in for SVG's getBBox), in model coordinates.
EDGE_LABEL_BOXES = """
const only = {includeNodes: false, includeEdges: false, includeLabels: true,
  includeMainLabels: true, includeSourceLabels: false, includeTargetLabels: false,
  includeOverlays: false, includeUnderlays: false, includeOutlines: false};
return window.hopgraphCy.edges()
  .filter((e) => e.visible() && e.style('label') !== '' && Number(e.style('text-opacity')) > 0)
  .map((e) => ({id: e.id(), label: e.style('label'), box: e.boundingBox(only)}));
"""


def _need_browser() -> None:
    # CI (.ci/run) installs the browser and sets HOPGRAPH_REQUIRE_BROWSER=1: there a missing
    # browser is a failure, not a skip.
    missing = pytest.fail if os.environ.get("HOPGRAPH_REQUIRE_BROWSER") == "1" else pytest.skip
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not binary.exists():
            missing(f"{binary} not found: install Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver; `bash .ci/run` does)")
    pytest.importorskip("selenium", reason="selenium is missing: pip install -e '.[dev]'")
    for module in ("fastapi", "uvicorn"):
        pytest.importorskip(module, reason=f"{module} is missing (the 'serve' extra): "
                                           "pip install -e '.[dev]'")


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


def _call(url: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """One API call with the key, its JSON reply."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
    call = urllib.request.Request(f"{url}{path}", data=data, headers=headers, method=method)
    with urllib.request.urlopen(call, timeout=60) as reply:
        return json.load(reply)


@contextlib.contextmanager
def serving_process(env: dict[str, str], cwd: Path, api_key: str | None = API_KEY
                    ) -> Iterator[str]:
    """`hopgraph serve` (with `api_key`, if any) as a child process on a free port, over the
    database `env` names; its URL once /health answers. Stopped on leaving."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server_env = {k: v for k, v in {**os.environ, **env}.items() if k != "HOPGRAPH_API_KEY"}
    if api_key is not None:
        server_env["HOPGRAPH_API_KEY"] = api_key
    stderr = cwd / "serve.stderr"
    with stderr.open("wb") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "hopgraph.cli", "serve", "--host", "127.0.0.1",
             "--port", str(port)],
            env=server_env, cwd=cwd, stdin=subprocess.DEVNULL,
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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The Bernoulli graph ("demo", the default), ingested and then served (with an API key)
    by child processes; a second graph, "other", is made and filled through the API."""
    _need_browser()
    need(BERNOULLI)
    tmp_path = tmp_path_factory.mktemp("browser")
    env = {"HOPGRAPH_URI": str(tmp_path / "demo.db"), "HOPGRAPH_GRAPH": "demo"}
    ingested = run_process("ingest", "--quiet", str(BERNOULLI), env=env, cwd=tmp_path)
    assert ingested.code == 0, ingested.stderr

    with serving_process(env, tmp_path) as url:
        _call(url, "POST", "/graphs", {"name": "other"})
        added = _call(url, "POST", "/graphs/other/documents",
                      {"doc_id": ODD_DOC_ID, "rows": OTHER_ROWS})
        assert added["passages_added"] == len(OTHER_ROWS), added
        _call(url, "POST", "/graphs", {"name": "sourced"})
        added = _call(url, "POST", "/graphs/sourced/documents", {"rows": SOURCED_ROWS})
        assert added["passages_added"] == len(SOURCED_ROWS), added
        yield url


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


class Page:
    """The page in the browser, with the waits the tests share."""

    def __init__(self, driver: Any, url: str) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver = driver
        self.url = url
        self.wait = WebDriverWait(driver, WAIT_SECONDS)

    def by_id(self, element_id: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.ID, element_id)

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def open_with_key(self) -> None:
        """Load the page, which asks for the key on its first 401; enter it."""
        self.driver.get(f"{self.url}/")
        self.wait.until(lambda _: self.by_id("auth").is_displayed())
        self.by_id("api-key").send_keys(API_KEY + "\n")
        self.wait.until(lambda _: "nano.json" in self.by_id("documents").text)

    def graphs(self) -> list[str]:
        return list(self.js("return [...document.getElementById('graph').options]"
                            ".map((o) => o.value)"))

    def choose_graph(self, name: str) -> None:
        from selenium.webdriver.support.ui import Select

        Select(self.by_id("graph")).select_by_value(name)

    def query(self, question: str, expect: str) -> None:
        """Run a query and wait for `expect` in the graph passages (or an error)."""
        box = self.by_id("question")
        box.clear()
        box.send_keys(question)
        self.by_id("run").click()
        self.wait.until(lambda _: expect in self.by_id("graph-results").text
                        or self.by_id("error").is_displayed())
        assert not self.by_id("error").is_displayed(), self.by_id("error").text
        # The drawing is done (laid out, labels placed) once its status counts it.
        self.wait.until(lambda _: " nodes, " in self.by_id("subgraph-status").text)

    def no_script_errors(self) -> None:
        errors = [entry for entry in self.driver.get_log("browser")
                  if entry.get("source") == "javascript"]
        assert not errors, errors


def _overlapping(labels: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The pairs of label boxes that share some area."""
    pairs = []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            p, q = a["box"], b["box"]
            if p["x1"] < q["x2"] and q["x1"] < p["x2"] and p["y1"] < q["y2"] and q["y1"] < p["y2"]:
                pairs.append((a["label"], b["label"]))
    return pairs


def test_page_draws_the_multi_hop_path(served: str, driver: Any, tmp_path: Path) -> None:
    page = Page(driver, served)
    by_id = page.by_id

    driver.get(f"{served}/")
    # The server wants a key: the graph list, graph counts and documents all wait for it, and
    # the documents panel says so.
    page.wait.until(lambda _: by_id("auth").is_displayed())
    page.wait.until(lambda _: "API key" in by_id("documents").text)
    assert "needs an API key" in by_id("graph-info").text
    assert page.graphs() == [""]  # "loading…": nothing listed yet
    # Once the key is entered, the list and the panels load, without reloading the page.
    page.js("window.notReloaded = true")
    by_id("api-key").send_keys(API_KEY + "\n")
    page.wait.until(lambda _: "nano.json" in by_id("documents").text)
    page.wait.until(lambda _: "passages" in by_id("graph-info").text)
    assert page.js("return window.notReloaded === true")
    assert not by_id("auth").is_displayed()
    assert page.js("return localStorage.getItem('hopgraph.apiKey')") == API_KEY
    assert page.graphs() == ["demo", "other", "sourced"]
    assert by_id("graph").get_attribute("value") == "demo"  # the server's default graph

    page.query(QUESTION, "Daniel Bernoulli")
    assert by_id("timings").text.strip()

    bridges = page.js(
        "return window.hopgraphCy.nodes('[kind = \"bridge\"]').map(n => n.data('label'))")
    assert any("Johann Bernoulli" in label for label in bridges), bridges
    on_path = page.js("return window.hopgraphCy.edges('[?on_path]').length")
    assert on_path > 0

    # Clicking an entity adds its neighbours (GET /entities/{name}), without duplicates.
    page.js("window.hopgraphCy.nodes('[kind = \"bridge\"]').first().emit('tap')")
    page.wait.until(lambda _: " relations, " in by_id("subgraph-status").text
                    or by_id("error").is_displayed())
    assert not by_id("error").is_displayed(), by_id("error").text
    ids = page.js("return window.hopgraphCy.elements().map(e => e.id())")
    assert len(ids) == len(set(ids))
    assert any("/graphs/demo/entities/" in name for name in page.js(
        "return performance.getEntriesByType('resource').map((e) => e.name)"))
    assert not _overlapping(page.js(EDGE_LABEL_BOXES))  # labels placed again after adding

    screenshot = tmp_path / "page.png"
    assert driver.save_screenshot(str(screenshot))
    assert screenshot.stat().st_size > 0
    page.no_script_errors()


def test_edge_labels_do_not_overlap(served: str, driver: Any) -> None:
    page = Page(driver, served)
    page.open_with_key()
    page.query(QUESTION, "Daniel Bernoulli")

    labels = page.js(EDGE_LABEL_BOXES)
    edges = page.js("return window.hopgraphCy.edges().length")
    assert edges >= 5, edges
    # Most labels show (hiding every label would be no answer), each with a real box...
    assert len(labels) * 2 >= edges, (len(labels), edges)
    assert all(label["box"]["w"] > 0 and label["box"]["h"] > 0 for label in labels), labels
    # ...on which no other label lies.
    assert not _overlapping(labels), _overlapping(labels)
    # A label reads the relation between the names at its ends, not the names again.
    shown = {label["label"] for label in labels}
    assert "was a student of" in shown, shown
    # The placement depends on the layout alone: running it again moves nothing.
    again = page.js("placeEdgeLabels(); " + EDGE_LABEL_BOXES.strip())
    assert again == labels
    page.no_script_errors()


def test_graph_switcher_sends_queries_to_the_chosen_graph(served: str, driver: Any) -> None:
    page = Page(driver, served)
    by_id = page.by_id
    page.open_with_key()
    page.query(QUESTION, "Daniel Bernoulli")

    # Another graph: the results go, and its documents and counts load.
    page.choose_graph("other")
    page.wait.until(lambda _: "Lovelace" in by_id("documents").text)
    page.wait.until(lambda _: "2 passages" in by_id("graph-info").text)
    assert "Run a query" in by_id("graph-results").text
    assert page.js("return window.hopgraphCy.elements().length") == 0
    assert "nano.json" not in by_id("documents").text

    page.query(OTHER_QUESTION, "Charles Babbage")
    assert "Bernoulli" not in by_id("graph-results").text + by_id("naive-results").text
    sent = page.js("return performance.getEntriesByType('resource').map((e) => e.name)")
    assert any(name.endswith("/graphs/other/query") for name in sent), sent
    assert any(name.split("?")[0].endswith("/graphs/other/documents") for name in sent), sent

    # The document label is the whole id, as text: no markup made of it.
    shown = page.js("return [...document.querySelectorAll('#graph-results .doc')]"
                    ".map((e) => e.textContent)")
    assert shown and all(text == ODD_DOC_ID for text in shown), shown
    assert ODD_DOC_ID in by_id("graph-results").text  # rendered whole, not cut
    assert page.js("return document.querySelectorAll('main img').length") == 0
    listed = page.js("return [...document.querySelectorAll('#documents .doc-id')]"
                     ".map((e) => e.textContent)")
    assert listed == [ODD_DOC_ID]

    # The choice is kept: after a reload the page shows the same graph (and keeps the key).
    driver.refresh()
    page.wait.until(lambda _: "Lovelace" in by_id("documents").text)
    assert by_id("graph").get_attribute("value") == "other"
    assert not by_id("auth").is_displayed()
    page.no_script_errors()


def test_each_passage_shows_where_it_came_from(served: str, driver: Any) -> None:
    page = Page(driver, served)
    page.open_with_key()
    page.choose_graph("sourced")
    page.wait.until(lambda _: "old-notes" in page.by_id("documents").text)
    page.query(SOURCED_QUESTION, "Kestrel")
    shown = page.js("return [...document.querySelectorAll('#graph-results .passage')]"
                    ".map((p) => [p.querySelector('.text').textContent,"
                    " p.querySelector('.source').textContent])")
    lines = {text.split("\n")[-1][:20]: line for text, line in shown}
    assert lines == {"The battery pack of ": "report.pdf · p. 3 · Field report › 3. Safety",
                     "Keller Polymers make": "old-notes"}, shown
    page.no_script_errors()


def test_an_error_clears_the_previous_results(served: str, driver: Any) -> None:
    from selenium.webdriver.support.ui import Select

    page = Page(driver, served)
    by_id = page.by_id
    page.open_with_key()

    def fails(button: str) -> None:
        """Click `button` with the "llm" method, which this server (no LLM) refuses."""
        Select(by_id("method")).select_by_value("llm")
        page.js("document.getElementById('error').hidden = true")
        by_id(button).click()
        page.wait.until(lambda _: by_id("error").is_displayed())
        assert "LLM" in by_id("error").text
        Select(by_id("method")).select_by_value("default")

    def cleared() -> None:
        for panel in ("graph-results", "naive-results"):
            assert "Bernoulli" not in by_id(panel).text
            assert page.js(f"return document.querySelectorAll('#{panel} .passage').length") == 0
        assert page.js("return window.hopgraphCy.elements().length") == 0
        assert by_id("subgraph-status").text == ""
        assert by_id("entities").text == "none yet"
        assert by_id("relations").text == "none yet"
        assert by_id("timings").text == "none yet"
        assert not by_id("answer-panel").is_displayed()

    page.query(QUESTION, "Daniel Bernoulli")
    assert page.js("return window.hopgraphCy.nodes().length") > 0
    fails("run")
    cleared()

    page.query(QUESTION, "Daniel Bernoulli")
    fails("ask")
    cleared()

    # A good query afterwards clears the error.
    page.query(QUESTION, "Daniel Bernoulli")
    assert not by_id("error").is_displayed()
    page.no_script_errors()


def test_a_page_opened_without_keys_asks_for_the_first_key_made(driver: Any,
                                                                 tmp_path: Path) -> None:
    """A page opened on a server with no key works without one. Once the first key is made
    (`hopgraph keys create --uri`, which goes through the server holding the Lite file),
    the page's next call gets a 401, asks for the key, and goes on with it, reloading its
    panels with it."""
    db = tmp_path / "open.db"
    with serving_process({"HOPGRAPH_URI": str(db), "HOPGRAPH_GRAPH": "demo"}, tmp_path,
                         api_key=None) as url:
        _call(url, "POST", "/documents", {"doc_id": "engines.txt", "rows": OTHER_ROWS})
        page = Page(driver, url)
        by_id = page.by_id
        driver.get(f"{url}/")
        page.wait.until(lambda _: "engines.txt" in by_id("documents").text)
        assert not by_id("auth").is_displayed()  # open: nothing asked

        made = run_cli("keys", "create", "--uri", str(db), "--role", "read", "--graph",
                       "demo", "--label", "page", "--json")
        assert made.code == 0 and "through the server" in made.stderr, made.stderr
        key = json.loads(made.stdout)["key"]

        box = by_id("question")
        box.send_keys(OTHER_QUESTION)
        by_id("run").click()
        page.wait.until(lambda _: by_id("auth").is_displayed())  # the query's 401
        by_id("api-key").send_keys(key + "\n")
        page.wait.until(lambda _: "Babbage" in by_id("graph-results").text
                        or by_id("error").is_displayed())
        assert not by_id("error").is_displayed(), by_id("error").text
        assert page.js("return localStorage.getItem('hopgraph.apiKey')") == key
        page.wait.until(lambda _: "engines.txt" in by_id("documents").text)
        assert not by_id("auth").is_displayed()
        page.no_script_errors()
