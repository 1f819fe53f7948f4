"""Uploads, jobs and the documents panel of the web page, in a real browser.

Headless Chromium (Debian's packages, as in test_serve_browser.py) against a real `hopgraph
serve` process with an API key, so the page reads each job's event stream with fetch and
the key. The graph starts empty; 25 small documents under "paging/" are added through the
API for the pager. The test makes its own .txt and .pdf, uploads them through the page's file
input, waits for the job to end in the page, then finds a passage of each by a query.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_serve_browser import (
    API_KEY,
    Page,
    _call,
    _need_browser,
    serving_process,
)
from test_serve_browser import driver as driver  # the fixture: a fresh headless Chromium

GRAPH = "library"
PAGING = [f"paging/note-{n:02d}.txt" for n in range(25)]  # 20 a page: two pages
LOG_TEXT = ("Marta Olsen repaired the Fresnel lens of the Skagen Point lighthouse in 1911. "
            "The lens had come from the Barbier workshop in Paris.")
MIRROR_TEXT = ("Henrik Vail ground the telescope mirror of the Orrin Observatory in Lund. "
               "The mirror was polished with cerium oxide for three winters.")
ENDED = ("done", "failed", "cancelled", "interrupted")
MAX_FILES = 2  # files per upload, for this module's server

# Each job the page lists, as the page shows it: state, bars (value, max), file rows.
JOBS_SHOWN = """
const bar = (node) => [node.value, node.max];
return [...document.querySelectorAll('#jobs .job')].map((job) => ({
  id: job.dataset.job, state: job.dataset.state, bar: bar(job.querySelector('progress')),
  text: job.textContent,
  files: [...job.querySelectorAll('.job-file')].map((row) => ({
    name: row.querySelector('.file-name').textContent, state: row.dataset.state,
    bar: bar(row.querySelector('progress'))}))}));
"""
LISTED = ("return [...document.querySelectorAll('#documents [data-doc]')]"
          ".map((row) => row.dataset.doc)")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An empty graph served with an API key (and at most MAX_FILES files an upload), then 25
    one-passage documents for the pager."""
    _need_browser()
    tmp_path = tmp_path_factory.mktemp("uploads")
    env = {"HOPGRAPH_URI": str(tmp_path / "library.db"), "HOPGRAPH_GRAPH": GRAPH,
           "HOPGRAPH_MAX_FILES": str(MAX_FILES)}
    with serving_process(env, tmp_path) as url:
        for n, doc_id in enumerate(PAGING):
            _call(url, "POST", "/documents", {
                "doc_id": doc_id, "rows": [{"passage": f"Paging note {n} of the archive."}]})
        yield url


def open_page(page: Page) -> None:
    """Load the page, enter the key, wait for the counts and the first documents."""
    page.driver.get(f"{page.url}/")
    page.wait.until(lambda _: page.by_id("auth").is_displayed())
    page.by_id("api-key").send_keys(API_KEY + "\n")
    page.wait.until(lambda _: "passages" in page.by_id("graph-info").text)
    page.wait.until(lambda _: page.js(LISTED))
    page.wait.until(lambda _: "loading" not in page.by_id("jobs").text)


def search(page: Page, text: str) -> None:
    """Type `text` into the documents search box; wait for the rows searched with it."""
    box = page.by_id("documents-search")
    box.clear()
    box.send_keys(text)
    page.wait.until(lambda _: page.js("return document.getElementById('documents').dataset.q")
                    == text)


def find(page: Page, question: str, expect: str) -> None:
    """Query through the page; `expect` must be in a graph-retrieval passage."""
    box = page.by_id("question")
    box.clear()
    box.send_keys(question)
    page.by_id("run").click()
    page.wait.until(lambda _: expect in page.by_id("graph-results").text
                    or page.by_id("error").is_displayed())
    assert not page.by_id("error").is_displayed(), page.by_id("error").text


def ended_job(page: Page, names: set[str]) -> dict[str, Any]:
    """Wait for the page to show the job of these files as ended; that job as shown."""
    def ended(_: Any) -> dict[str, Any] | None:
        for job in page.js(JOBS_SHOWN):
            if {f["name"] for f in job["files"]} == names and job["state"] in ENDED:
                return job
        return None

    return page.wait.until(ended)


def test_uploaded_txt_and_pdf_become_searchable(served: str, driver: Any,
                                                tmp_path: Path) -> None:
    pytest.importorskip("fpdf", reason="fpdf2 is missing: pip install -e '.[dev]'")
    import pypdf

    from hopgraph.shape import write_pdf

    log = tmp_path / "lighthouse-log.txt"
    log.write_text(LOG_TEXT + "\n", encoding="utf-8")
    mirror = tmp_path / "observatory.pdf"
    write_pdf(mirror, [{"title": "Orrin Observatory", "text": MIRROR_TEXT}])
    assert "Henrik Vail" in pypdf.PdfReader(mirror).pages[0].extract_text()

    page = Page(driver, served)
    by_id = page.by_id
    open_page(page)
    counts = by_id("graph-info").text
    assert "No uploads yet" in by_id("jobs").text

    # Both files through the page's file input (the drop area is its label): one job.
    by_id("upload-files").send_keys(f"{log}\n{mirror}")
    page.wait.until(lambda _: "job" in by_id("upload-status").text)
    assert "Uploaded 2 files" in by_id("upload-status").text, by_id("upload-status").text
    job = ended_job(page, {log.name, mirror.name})
    assert job["state"] == "done", job["text"]
    assert job["bar"][0] == job["bar"][1] > 0, job  # the overall bar is full
    assert all(f["state"] == "done" and f["bar"][0] == f["bar"][1] > 0
               for f in job["files"]), job["files"]
    assert "Wrote 2 documents" in job["text"], job["text"]
    assert not page.js("return [...document.querySelectorAll('#jobs .job button')]"
                       ".some((button) => !button.hidden)")  # no Cancel once ended
    sent = page.js("return performance.getEntriesByType('resource').map((e) => e.name)")
    assert any(name.endswith(f"/graphs/{GRAPH}/uploads") for name in sent), sent
    assert any(name.endswith(f"/jobs/{job['id']}/events") for name in sent), sent  # the stream

    # The job's end refreshed the counts and documents of the graph shown.
    page.wait.until(lambda _: by_id("graph-info").text != counts)
    search(page, "observatory")
    page.wait.until(lambda _: any("observatory" in doc for doc in page.js(LISTED)))
    assert "Job" in by_id("jobs-status").text and "done" in by_id("jobs-status").text

    # A question about each file finds its passage.
    find(page, "Who repaired the Fresnel lens of the Skagen Point lighthouse?", "Marta Olsen")
    find(page, "Who ground the telescope mirror of the Orrin Observatory?", "Henrik Vail")

    # After a reload the finished job is still listed, from GET /jobs.
    driver.refresh()
    page.wait.until(lambda _: page.js(JOBS_SHOWN))
    assert any(j["id"] == job["id"] and j["state"] == "done" for j in page.js(JOBS_SHOWN))
    page.no_script_errors()


def test_documents_are_searched_and_paged(served: str, driver: Any) -> None:
    page = Page(driver, served)
    by_id = page.by_id
    open_page(page)

    def shows(text: str) -> None:
        page.wait.until(lambda _: by_id("documents-range").text == text)

    search(page, "paging/")
    shows("1–20 of 25")
    first = page.js(LISTED)
    assert first == PAGING[:20]
    assert not by_id("documents-prev").is_enabled() and by_id("documents-next").is_enabled()

    by_id("documents-next").click()
    shows("21–25 of 25")
    assert page.js(LISTED) == PAGING[20:]
    assert by_id("documents-prev").is_enabled() and not by_id("documents-next").is_enabled()
    by_id("documents-prev").click()
    shows("1–20 of 25")

    # The server filters (q=), case-insensitively, and the list starts on its first page.
    search(page, "NOTE-1")
    shows("1–10 of 10")
    assert page.js(LISTED) == PAGING[10:20]
    assert not by_id("documents-next").is_enabled()
    sent = page.js("return performance.getEntriesByType('resource').map((e) => e.name)")
    assert any("q=NOTE-1" in name for name in sent), sent

    search(page, "no-such-document")
    page.wait.until(lambda _: "No document id contains" in by_id("documents").text)
    assert not by_id("documents-pager").is_displayed()
    page.no_script_errors()


def test_delete_asks_first(served: str, driver: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    doc = "delete-me.txt"
    _call(served, "POST", "/documents", {"doc_id": doc,
                                         "rows": [{"passage": "A note about to go."}]})
    page = Page(driver, served)
    by_id = page.by_id
    open_page(page)
    search(page, "delete-me")
    page.wait.until(lambda _: page.js(LISTED) == [doc])

    def ask() -> None:
        driver.find_element(By.CSS_SELECTOR, "#documents [data-doc] button").click()
        page.wait.until(lambda _: page.js("return document.querySelector('#documents .confirm')"))
        assert f"Delete “{doc}”" in by_id("documents").text
        # The keyboard lands on "Keep": Enter pressed twice deletes nothing.
        assert page.js("return document.activeElement.classList.contains('keep-document')")

    def stored() -> int:
        return int(_call(served, "GET", "/documents?q=delete-me")["total"])

    # Declined with "Keep", then with Escape: the document stays.
    ask()
    driver.find_element(By.CSS_SELECTOR, "#documents .keep-document").click()
    assert not page.js("return document.querySelector('#documents .confirm')")
    assert page.js(LISTED) == [doc] and stored() == 1
    ask()
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    assert not page.js("return document.querySelector('#documents .confirm')")
    assert page.js("return document.activeElement.textContent") == "Delete"
    assert stored() == 1

    # Confirmed: it goes.
    ask()
    driver.find_element(By.CSS_SELECTOR, "#documents .confirm-delete").click()
    page.wait.until(lambda _: f"Deleted {doc}" in by_id("documents-status").text)
    page.wait.until(lambda _: "No document id contains" in by_id("documents").text)
    assert stored() == 0
    page.no_script_errors()



def test_refused_uploads_and_bad_files_are_said_plainly(served: str, driver: Any,
                                                        tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import Select

    page = Page(driver, served)
    by_id = page.by_id
    open_page(page)
    names = ["one.txt", "two.txt", "three.txt"]
    for name in names:
        (tmp_path / name).write_text(f"A short note called {name}.\n", encoding="utf-8")

    def refused(paths: list[Path]) -> str:
        """Upload through the page; the words it shows for the refusal."""
        page.js("document.getElementById('upload-status').textContent = ''")
        by_id("upload-files").send_keys("\n".join(str(path) for path in paths))
        page.wait.until(lambda _: by_id("upload-status").text)
        assert "error-text" in by_id("upload-status").get_attribute("class")
        return str(by_id("upload-status").text)

    # One file over the limit of files per upload (422), named with the limit and the fix.
    said = refused([tmp_path / name for name in names])
    assert said.startswith(f"Not uploaded: body.files: more than {MAX_FILES} files"), said
    assert f"limit of {MAX_FILES}" in said and "--max-files" in said, said
    # The LLM extractor on a server with no LLM (422): the server's reason and fix.
    Select(by_id("upload-extractor")).select_by_value("llm")
    said = refused([tmp_path / names[0]])
    assert said.startswith("Not uploaded: ") and "LLM" in said, said
    assert not any(names[0] in {f["name"] for f in job["files"]}
                   for job in page.js(JOBS_SHOWN))  # neither refusal made a job

    # A broken PDF beside a good file: the job goes on, and the page names the bad file.
    Select(by_id("upload-extractor")).select_by_value("offline")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not really a PDF")
    by_id("upload-files").send_keys(f"{broken}\n{tmp_path / names[1]}")
    job = ended_job(page, {broken.name, names[1]})
    rows = {row["name"]: row for row in job["files"]}
    assert rows[names[1]]["state"] == "done", job["text"]
    assert rows[broken.name]["state"] == "failed", job["text"]
    problems = page.js(
        "return [...document.querySelectorAll('#jobs .job-file.state-failed .problem')]"
        ".map((p) => p.textContent)")
    assert problems and all(text.strip() for text in problems), problems
    assert "1 problem" in by_id("jobs-status").text, by_id("jobs-status").text
    page.no_script_errors()
