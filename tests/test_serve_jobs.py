"""Uploads and their jobs (`serve.job_routes`, `serve.job_board`, `serve.uploads`), over real
Milvus Lite graphs: good files stored and bad ones named, progress as Server-Sent Events,
limits (413, 429), cancelling (a queued job at once, a running one at a batch boundary with
its file rolled back), keys, paged documents, and a server killed mid-job: its job reads
`interrupted` after a restart and uploading again completes the graph, `check` clean."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import free_port, own_environment, run_process

fastapi = pytest.importorskip("fastapi", reason="the 'serve' extra is missing: "
                                                 "pip install -e '.[dev]'")
import httpx  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from hopgraph import GraphRAG  # noqa: E402
from hopgraph.client.results import document_counts  # noqa: E402
from hopgraph.config import ServeSettings, cache_dir  # noqa: E402
from hopgraph.ingest.writer import CHUNK_PASSAGES  # noqa: E402
from hopgraph.serve.app import create_app  # noqa: E402
from hopgraph.serve.jobs import HOST, Job, interrupted, orphaned, owner_of  # noqa: E402
from hopgraph.serve.service import GraphService, database_keys  # noqa: E402
from hopgraph.serve.uploads import Incoming, Stopped, ingest_upload, keep_files  # noqa: E402
from hopgraph.store.check import check  # noqa: E402
from hopgraph.store.jobs import encoded  # noqa: E402

NOTES = b"Ada Lovelace worked with Charles Babbage in London.\n"
GUIDE = b"# Lyon\n\nLyon lies on the Rhone. Paul Bocuse cooked in Lyon.\n"


def rows(count: int, skip_one: bool = False) -> bytes:
    """JSONL passage rows (with a malformed one at the end if `skip_one`)."""
    lines = [json.dumps({"passage": f"Item {i} is kept in bin {i % 7}, crate {i % 5}.",
                         "triplets": [[f"Bin {i % 7}", "holds", f"Crate {i % 5}"]]})
             for i in range(count)]  # few entities: a row costs one passage to embed
    return ("\n".join(lines) + ("\n{broken" if skip_one else "") + "\n").encode()


def a_pdf() -> bytes:
    fpdf = pytest.importorskip("fpdf", reason="fpdf2 is missing: pip install -e '.[dev]'")
    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Marie Curie worked in Paris. She discovered polonium.")
    return bytes(pdf.output())


def upload(client: Any, files: dict[str, bytes], path: str = "/uploads",
           **form: str) -> Any:
    return client.post(path, files=[("files", (name, data)) for name, data in files.items()],
                       data=form)


def events(client: TestClient, job: str) -> list[tuple[str, dict[str, Any]]]:
    """The job's event stream, read to its end."""
    found, name = [], ""
    with client.stream("GET", f"/jobs/{job}/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                found.append((name, json.loads(line[6:])))
    return found


@pytest.fixture
def rag(open_graph) -> GraphRAG:
    return open_graph("jobs")


@pytest.fixture
def service(rag: GraphRAG) -> GraphService:
    return GraphService(rag)


@pytest.fixture
def client(service: GraphService) -> Iterator[TestClient]:
    with TestClient(create_app(service, ServeSettings(max_jobs=2))) as test_client:
        yield test_client


def waiting(client: TestClient, job: str) -> None:
    """Until the job waits at its first write (held by a `Gate`); fails if it ends first."""
    deadline = time.monotonic() + 120
    while (view := client.get(f"/jobs/{job}").json())["stage"] != "storing":
        assert view["state"] in ("queued", "running"), view
        assert time.monotonic() < deadline, "the job never reached its first write"
        time.sleep(0.02)  # polling a state the job reaches by itself


def waiting_done(client: TestClient, job: str, headers: dict[str, str]) -> None:
    """Until the job has ended (its event stream ends with it)."""
    stream = client.get(f"/jobs/{job}/events", headers=headers)
    assert "event: end" in stream.text


class Gate:
    """Holds the graph's write lock (a write of its own) until opened: a job then waits
    at its first write, where the test can look at it."""

    def __init__(self, service: GraphService) -> None:
        self.entered, self.open = threading.Event(), threading.Event()

        def hold(rag: GraphRAG) -> None:
            self.entered.set()
            self.open.wait(timeout=120)

        self.thread = threading.Thread(target=service.write, args=(hold,))
        self.thread.start()
        assert self.entered.wait(timeout=60)

    def release(self) -> None:
        self.open.set()
        self.thread.join(timeout=60)


@pytest.mark.slow
def test_good_files_are_stored_and_bad_ones_named(client: TestClient, rag: GraphRAG,
                                                   store_of) -> None:
    files = {"notes.txt": NOTES, "guide.md": GUIDE, "rows.jsonl": rows(3, skip_one=True),
             "curie.pdf": a_pdf(), "broken.pdf": b"%PDF-1.4 not really", "empty.txt": b"",
             "binary.txt": b"\x00\x01\x02 not text", "photo.png": b"\x89PNG\r\n\x1a\n\x00"}
    reply = upload(client, files)
    assert reply.status_code == 202, reply.text
    job = reply.json()
    assert job["job"] == job["id"] and job["state"] in ("queued", "running")
    assert job["files_total"] == 8 and job["graph"] == rag.name
    seen = events(client, job["id"])
    assert [name for name, _ in seen][-1] == "end" and all(
        name == "progress" for name, _ in seen[:-1])
    final = seen[-1][1]
    assert final["state"] == "done" and final["error"] is None
    assert set(final["documents"]) == {"notes.txt", "guide.md", "rows.jsonl", "curie.pdf"}
    states = {f["name"]: f["state"] for f in final["files"]}
    assert states == {"notes.txt": "done", "guide.md": "done", "rows.jsonl": "done",
                      "curie.pdf": "done", "broken.pdf": "failed", "empty.txt": "failed",
                      "binary.txt": "failed", "photo.png": "failed"}
    problems = {p["file"]: p["error"] for p in final["problems"]}
    assert set(problems) == {"rows.jsonl", "broken.pdf", "empty.txt", "binary.txt",
                             "photo.png"}
    assert "cannot read PDF" in problems["broken.pdf"] and "empty" in problems["empty.txt"]
    assert "binary" in problems["binary.txt"] and "'.png'" in problems["photo.png"]
    assert "rows.jsonl:line 4" in problems["rows.jsonl"]  # a row skipped; the rest stored
    assert final["files_done"] == 8 and final["passages_done"] == final["passages_total"] > 0
    assert str(cache_dir()) not in json.dumps(final)  # by upload name, not where it waited
    stored = client.get("/documents").json()
    assert {d["doc_id"] for d in stored["documents"]} == set(final["documents"])
    assert check(store_of(rag)).problems == []
    assert not list((cache_dir() / "uploads").glob(f"*-{final['id']}"))  # files removed
    before = client.get("/stats").json()
    again = upload(client, files).json()  # idempotent by content
    assert events(client, again["id"])[-1][1]["state"] == "done"
    after = client.get("/stats").json()
    assert (after["passages"], after["relations"]) == (before["passages"], before["relations"])
    assert [name for name, _ in events(client, job["id"])] == ["end"]  # ended: at once
    listed = client.get("/jobs").json()["jobs"]
    assert [j["id"] for j in listed[:2]] == [again["id"], job["id"]]
    assert client.delete(f"/jobs/{job['id']}").status_code == 409
    assert client.get("/jobs/abc123").status_code == 404


@pytest.mark.slow
def test_office_html_csv_and_eml_files_are_uploaded(client: TestClient, tmp_path: Path
                                                    ) -> None:
    pytest.importorskip("docx", reason="the 'office' extra is missing: pip install -e '.[dev]'")
    pytest.importorskip("pptx", reason="the 'office' extra is missing: pip install -e '.[dev]'")
    pytest.importorskip("bs4", reason="the 'office' extra is missing: pip install -e '.[dev]'")
    from hopgraph.shape import write_docx, write_html, write_pptx

    item = [{"title": "Lyon", "text": "Lyon lies on the Rhone. Paul Bocuse cooked in Lyon."}]
    files = {}
    for name, write in (("lyon.docx", write_docx), ("lyon.html", write_html),
                        ("lyon.pptx", write_pptx)):
        write(tmp_path / name, item)
        files[name] = (tmp_path / name).read_bytes()
    files["cooks.csv"] = b"name,city\nPaul Bocuse,Lyon\n"
    files["menu.eml"] = (b"From: a@example.com\nTo: b@example.com\nSubject: Menu\n\n"
                         b"Paul Bocuse cooked in Lyon.\n")
    files["locked.docx"] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    final = events(client, upload(client, files).json()["id"])[-1][1]
    states = {f["name"]: f["state"] for f in final["files"]}
    assert states == {**{name: "done" for name in files}, "locked.docx": "failed"}, final
    problems = {p["file"]: p["error"] for p in final["problems"]}
    assert "encrypted or old binary Office file" in problems["locked.docx"]


def test_limits_and_refusals(service: GraphService, store_of) -> None:
    settings = ServeSettings(max_file_mb=0.001, max_files=2, max_jobs=1)
    with TestClient(create_app(service, settings)) as client:
        big = upload(client, {"small.txt": NOTES, "big.txt": NOTES * 40})
        assert big.status_code == 413 and "'big.txt'" in big.json()["error"]["message"]
        assert "0.001 MB" in big.json()["error"]["message"]
        many = upload(client, {f"{i}.txt": NOTES for i in range(3)})  # the schema's maxItems
        assert many.status_code == 422 and "over the limit of 2" in many.text
        llm = upload(client, {"a.txt": NOTES}, extractor="llm")
        assert llm.status_code == 422 and "HOPGRAPH_LLM_MODEL" in llm.json()["error"]["fix"]
        assert upload(client, {"a.txt": NOTES}, extractor="other").status_code == 422
        assert client.post("/uploads", data={"append": "true"}).status_code == 422
        assert upload(client, {"a.txt": NOTES}, "/graphs/nope/uploads").status_code == 404
        gate = Gate(service)
        try:
            first = upload(client, {"a.txt": NOTES})
            assert first.status_code == 202
            waiting(client, first.json()["id"])
            head = client.head(f"/jobs/{first.json()['id']}/events")  # running: headers only
            assert head.status_code == 200 and head.content == b""
            assert head.headers["content-type"].startswith("text/event-stream")
            full = upload(client, {"b.txt": NOTES})
            assert full.status_code == 429 and full.headers["retry-after"].isdigit()
            assert full.json()["error"]["code"] == "too_many_requests"
            stopping = client.delete(f"/jobs/{first.json()['id']}").json()
            assert stopping["cancel_requested"] and stopping["state"] == "running"
        finally:
            gate.release()
        final = events(client, first.json()["id"])[-1][1]
        # Cancelled while its one file waited for the write lock: nothing was written.
        assert final["state"] == "cancelled" and final["documents"] == []
        assert final["files"][0]["state"] == "skipped"
        schema = client.get("/openapi.json").json()["components"]["schemas"]
        forms = [m for name, m in schema.items() if name.startswith("Body_")]
        assert forms and all(m["properties"]["extractor"]["enum"] == ["auto", "offline"]
                             for m in forms)
    assert check(store_of(service.rag)).problems == []


def test_a_queued_job_is_cancelled_at_once(client: TestClient, service: GraphService) -> None:
    gate = Gate(service)
    try:
        running = upload(client, {"a.txt": NOTES}).json()
        queued = upload(client, {"b.txt": GUIDE}).json()
        cancelled = client.delete(f"/jobs/{queued['id']}").json()
        assert cancelled["state"] == "cancelled" and cancelled["finished"] is not None
        assert [name for name, _ in events(client, queued["id"])] == ["end"]
    finally:
        gate.release()
    assert events(client, running["id"])[-1][1]["state"] == "done"
    assert document_counts(client.get("/documents").json()) == {"a.txt": 1}


class CancelledAfterOneBatch(Job):
    """A job whose cancel arrives once its big file's first batch is stored."""

    def progress(self, entry: Any, event: Any) -> None:
        if event.stage == "ingest" and event.done >= CHUNK_PASSAGES:
            self.ask_stop("cancelled")
        super().progress(entry, event)


@pytest.mark.slow
def test_a_cancel_mid_file_finishes_that_file_and_a_rerun_completes_the_rest(
        service: GraphService, tmp_path: Path, store_of) -> None:
    rag = service.rag
    files = [Incoming("first.txt", len(NOTES), io.BytesIO(NOTES)),
             Incoming("big.jsonl", 0, io.BytesIO(rows(CHUNK_PASSAGES + 10))),
             Incoming("last.md", len(GUIDE), io.BytesIO(GUIDE))]
    job = CancelledAfterOneBatch("0a", rag.name, keep_files(tmp_path / "1", files),
                                 "offline", False, tmp_path / "1", owner_of("n"), time.time())
    with pytest.raises(Stopped):
        ingest_upload(job, service)
    states = {f.name: (f.state, f.problem) for f in job.files}
    assert states["first.txt"] == ("done", None) and states["last.md"][0] == "queued"
    assert states["big.jsonl"] == ("done", None)  # the file being stored is finished
    assert rag.documents() == {"first.txt": 1, "big.jsonl": CHUNK_PASSAGES + 10}
    assert check(store_of(rag)).problems == []
    files = [Incoming(name, 0, (tmp_path / "1" / str(i) / name).open("rb"))
             for i, name in enumerate(("first.txt", "big.jsonl", "last.md"))]
    rerun = Job("0b", rag.name, keep_files(tmp_path / "2", files), "offline", False,
                tmp_path / "2", owner_of("n"), time.time())
    ingest_upload(rerun, service)
    assert rag.documents() == {"first.txt": 1, "big.jsonl": CHUNK_PASSAGES + 10,
                               "last.md": 1}
    assert check(store_of(rag)).problems == []


def one_line(size: int) -> bytes:
    """A Markdown file of one heading and one paragraph of about `size` characters."""
    sentences = (f"Person {i} met Ada {i % 7} in Town {i % 13}." for i in range(size // 30))
    return ("# Notes\n\n" + " ".join(sentences) + "\n").encode()


class StoppedAt(Job):
    """A job asked to stop at its first progress event of stage `at` (as a cancel arriving
    then would); `seen` is the stages of the events it was told."""

    def __init__(self, at: str, *args: Any) -> None:
        super().__init__(*args)
        self.at = at
        self.seen: list[str] = []

    def progress(self, entry: Any, event: Any) -> None:
        self.seen.append(event.stage)
        if event.stage == self.at:
            self.ask_stop("cancelled")
        super().progress(entry, event)


@pytest.mark.parametrize("at", ["chunk", "extract"])
def test_a_cancel_while_reading_or_extracting_takes_effect_at_the_next_piece(
        service: GraphService, tmp_path: Path, at: str, store_of) -> None:
    """Reading (chunking) and the offline extraction check for a stop between pieces, so
    a cancel does not wait for the end of a long file."""
    data = one_line(60_000)
    files = [Incoming("long.md", len(data), io.BytesIO(data)),
             Incoming("later.md", len(GUIDE), io.BytesIO(GUIDE))]
    job = StoppedAt(at, "0c", service.rag.name, keep_files(tmp_path / "1", files),
                    "offline", False, tmp_path / "1", owner_of("n"), time.time())
    with pytest.raises(Stopped):
        ingest_upload(job, service)
    assert job.seen.count(at) == 1 and job.seen[-1] == at  # stopped at the first one
    long, later = job.files
    if at == "chunk":  # the file was never read to its end, the next one never begun
        assert long.passages_total == 0 and later.state == "queued"
        assert job.stage == "reading"
    else:
        assert long.passages_total > 0 and job.stage == "extracting"
    assert service.rag.documents() == {}
    assert check(store_of(service.rag)).problems == []


def test_utf16_files_are_uploaded_as_text(client: TestClient, rag: GraphRAG) -> None:
    text = "Grace Hopper worked at Harvard.\r\n\r\nShe wrote COBOL."
    files = {"le.txt": text.encode("utf-16"),  # a mark, little end first
             "be.md": b"\xfe\xff" + text.encode("utf-16-be"),
             "bare.txt": text.encode("utf-16-le")}  # no mark: told by its zero bytes
    final = events(client, upload(client, files).json()["id"])[-1][1]
    assert final["state"] == "done" and final["problems"] == [], final
    assert sorted(final["documents"]) == ["bare.txt", "be.md", "le.txt"]
    passages = {p.text for p in rag.naive("Who worked at Harvard?", top_k=10).passages}
    assert passages == {"Grace Hopper worked at Harvard.\n\nShe wrote COBOL."}


def test_a_served_upload_of_one_long_line_leaves_the_server_answering_and_cancels(
        tmp_path: Path, killable: list[subprocess.Popen]) -> None:
    """A real server reading a one-line file of megabytes answers /health and queries
    meanwhile, and a cancel sent while it reads stops the job before the file is read."""
    web = httpx.Client(timeout=300)
    base = _serve(str(tmp_path / "long.db"), killable)
    question = {"question": "Who met Ada?", "method": "naive"}
    assert web.post(f"{base}/query", json=question).status_code == 200  # the model loaded
    job = upload(web, {"long.md": one_line(3_000_000)}, f"{base}/uploads").json()
    while (view := web.get(f"{base}/jobs/{job['id']}").json())["stage"] != "reading":
        assert view["state"] in ("queued", "running"), view
        time.sleep(0.02)  # polling a state the job reaches by itself
    for number in range(5):
        assert web.get(f"{base}/health").status_code == 200
        asked = {**question, "question": f"Who met Ada {number}?"}  # computed, not cached
        assert web.post(f"{base}/query", json=asked).status_code == 200
    cancel = web.delete(f"{base}/jobs/{job['id']}").json()
    # Still reading, or already stopped by the cancel between two pieces of the file (the
    # reply may come after the job has ended): never past reading.
    assert cancel["cancel_requested"], cancel
    assert cancel["stage"] == "reading" or (cancel["stage"] == "ended"
                                           and cancel["state"] == "cancelled"), cancel
    final = waiting_end(web, f"{base}/jobs/{job['id']}/events")
    assert final["state"] == "cancelled" and final["documents"] == []
    [entry] = final["files"]
    assert entry["state"] == "skipped" and entry["passages_total"] == 0  # never read whole
    assert web.get(f"{base}/documents").json()["documents"] == []
    killable[0].terminate()
    killable[0].wait(timeout=60)


def waiting_end(web: httpx.Client, url: str) -> dict[str, Any]:
    """The job as it ended, read from its event stream."""
    with web.stream("GET", url, timeout=300) as stream:
        lines = [line for line in stream.iter_lines() if line.startswith("data: ")]
    return dict(json.loads(lines[-1][6:]))


@pytest.mark.slow
def test_closing_the_server_interrupts_its_jobs(service: GraphService, store_of) -> None:
    app = create_app(service, ServeSettings())
    client = TestClient(app)  # no lifespan: the board is closed by hand below
    gate = Gate(service)
    running = upload(client, {"a.txt": NOTES}).json()
    queued = upload(client, {"b.txt": GUIDE}).json()
    waiting(client, running["id"])  # the first job waits at its write, the other queued
    closing = threading.Thread(target=app.state.jobs.close)
    closing.start()
    deadline = time.monotonic() + 60
    while app.state.jobs.own(running["id"]).stop_as is None:  # close has asked it to stop
        assert time.monotonic() < deadline
        time.sleep(0.02)
    gate.release()
    closing.join(timeout=120)
    for job in (running, queued):
        view = app.state.jobs.view(job["id"])
        assert view["state"] == "interrupted" and "upload the files again" in view["error"]
        assert app.state.jobs.store.get(job["id"])["state"] == "interrupted"
    # The running job stopped while waiting to write its file; the queued one never ran.
    assert service.rag.documents() == {}
    assert check(store_of(service.rag)).problems == []


def test_jobs_show_only_to_keys_of_their_graph(service: GraphService) -> None:
    keys = database_keys(service.rag)  # of the session's database: revoked at the end
    made = [keys.create("write", [service.rag.name]), keys.create(
        "write", ["elsewhere"]), keys.create("read", [service.rag.name])]
    (mine, _), (other, _), (reader, _) = made
    try:
        with TestClient(create_app(service)) as client:
            job = client.post("/uploads", files=[("files", ("a.txt", NOTES))],
                              headers={"Authorization": f"Bearer {mine}"}).json()
            for key, status in ((mine, 200), (other, 404), (reader, 403)):
                auth = {"Authorization": f"Bearer {key}"}
                assert client.get(f"/jobs/{job['id']}", headers=auth).status_code == status
                listed = client.get("/jobs", headers=auth)
                assert listed.status_code == (403 if key == reader else 200)
            auth = {"Authorization": f"Bearer {other}"}
            assert client.get("/jobs", headers=auth).json()["jobs"] == []
            assert client.delete(f"/jobs/{job['id']}", headers=auth).status_code == 404
            assert client.post("/uploads", files=[("files", ("b.txt", NOTES))], headers={
                "Authorization": f"Bearer {reader}"}).status_code == 403
            stream = client.get(f"/jobs/{job['id']}/events",
                                headers={"Authorization": f"Bearer {mine}"})
            assert stream.status_code == 200 and "event: end" in stream.text
    finally:
        for _, key in made:
            keys.revoke(key.id)


def test_only_a_key_that_may_write_gets_the_wide_upload_cap(service: GraphService) -> None:
    """The form is read before the routes' key checks: a body over the plain cap is
    refused unread unless its key may write."""
    keys = database_keys(service.rag)
    made = [keys.create("write", [service.rag.name]),
            keys.create("read", [service.rag.name])]
    (writer, _), (reader, _) = made
    big = NOTES * (4096 // len(NOTES) + 1)  # over the 2 KB plain cap below
    try:
        with TestClient(create_app(service, ServeSettings(max_body_bytes=2048))) as client:
            for key, status in ((None, 413), (reader, 413), ("wrong", 413), (writer, 202)):
                headers = {} if key is None else {"Authorization": f"Bearer {key}"}
                sent = client.post("/uploads", files=[("files", ("big.txt", big))],
                                   headers=headers)
                assert sent.status_code == status, (key, sent.text)
            waiting_done(client, sent.json()["id"], {"Authorization": f"Bearer {writer}"})
    finally:
        for _, key in made:
            keys.revoke(key.id)


def test_documents_come_in_pages(client: TestClient, service: GraphService) -> None:
    service.write(lambda rag: rag.add(  # as the server's writes do: then its version is new
        [{"passage": f"Town {i} lies on a river.", "doc_id": f"report-{i:02}.pdf"}
         for i in range(12)] + [{"passage": "Notes.", "doc_id": "notes.txt"}]))
    everything = client.get("/documents").json()
    assert everything["total"] == 13 and everything["limit"] is None
    assert len(document_counts(everything)) == 13  # what the Python client reads
    page = client.get("/documents", params={"q": "REPORT", "offset": 10, "limit": 5}).json()
    assert [d["doc_id"] for d in page["documents"]] == ["report-10.pdf", "report-11.pdf"]
    assert (page["total"], page["offset"], page["limit"]) == (12, 10, 5)
    assert client.get("/documents", params={"limit": 1001}).status_code == 422
    assert client.get("/documents", params={"offset": -1}).status_code == 422


def test_a_dead_owner_is_told_from_a_live_one() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    now = time.time()
    record = {"id": "1", "state": "running", "heartbeat": now, "files": [
        {"name": "a", "state": "done"}, {"name": "b", "state": "running"},
        {"name": "c", "state": "queued"}]}
    assert orphaned({**record, "owner": {"host": HOST, "pid": dead.pid, "nonce": "x"}}, now,
                    set())
    assert not orphaned({**record, "owner": {"host": HOST, "pid": os.getppid(),
                                             "nonce": "x"}}, now, set())
    assert not orphaned({**record, "owner": {"host": HOST, "pid": os.getpid(),
                                             "nonce": "x"}}, now, {"x"})
    far = {**record, "owner": {"host": "another-host", "pid": 1, "nonce": "y"}}
    assert not orphaned(far, now + 30, set()) and orphaned(far, now + 600, set())
    assert not orphaned({**far, "state": "done"}, now + 600, set())
    ended = interrupted({**far, "owner": far["owner"]}, now)
    assert [f["state"] for f in ended["files"]] == ["done", "failed", "skipped"]
    assert ended["state"] == "interrupted" and "another-host" in ended["error"]


def test_a_record_too_large_is_cut_to_fit() -> None:
    record = {"id": "1", "documents": [f"doc-{i:06}-" + "x" * 50 for i in range(5000)],
              "problems": [], "files": []}
    text = encoded(record)
    kept = json.loads(text)
    assert len(text.encode()) <= 65_535 and kept["documents_cut"] > 0
    assert len(kept["documents"]) + kept["documents_cut"] == 5000


@pytest.fixture
def killable(tmp_path: Path) -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    yield started
    for server in started:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=60)


def _serve(uri: str, started: list[subprocess.Popen]) -> str:
    """`hopgraph serve` on `uri` in a new process; its base URL once it answers."""
    port = free_port()
    log = Path(uri).with_suffix(f".{len(started)}.log")
    with log.open("w") as errors:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "hopgraph"), "serve", "--uri", uri, "--port",
             str(port)], env=own_environment(), stdout=subprocess.DEVNULL, stderr=errors,
            stdin=subprocess.DEVNULL)
    started.append(server)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:  # polling the server's start, as conftest's `serving` does
        assert server.poll() is None, log.read_text()
        try:
            httpx.get(f"{base}/health", timeout=10)
            return base
        except httpx.HTTPError:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)


def test_a_server_killed_mid_job_leaves_it_interrupted_and_a_rerun_completes_it(
        tmp_path: Path, killable: list[subprocess.Popen]) -> None:
    uri = str(tmp_path / "killed.db")
    big = 3 * CHUNK_PASSAGES
    files = {"first.txt": NOTES, "big.jsonl": rows(big), "last.md": GUIDE}
    web = httpx.Client(timeout=120)
    base = _serve(uri, killable)
    job = upload(web, files, f"{base}/uploads").json()
    while True:  # until the big file is part stored: then the server dies under it
        view = web.get(f"{base}/jobs/{job['id']}").json()
        assert view["state"] in ("queued", "running"), view
        if view["files"][1]["passages_done"] >= CHUNK_PASSAGES:
            break
        time.sleep(0.05)
    killable[0].kill()
    killable[0].wait(timeout=60)
    base = _serve(uri, killable)
    view = web.get(f"{base}/jobs/{job['id']}").json()
    assert view["state"] == "interrupted" and "stopped before the job ended" in view["error"]
    # The three files are one write (group commit), which the kill cut short: none is done.
    # A file is "failed" (cut short) or, when the job's record (saved once a second at most)
    # had not yet seen it start, "skipped".
    states = [f["state"] for f in view["files"]]
    assert set(states[:2]) <= {"failed", "skipped"} and states[2] == "skipped", view["files"]
    assert not list((cache_dir() / "uploads").glob(f"{HOST}-{killable[0].pid}-*"))
    again = upload(web, files, f"{base}/uploads").json()
    with web.stream("GET", f"{base}/jobs/{again['id']}/events", timeout=300) as stream:
        lines = [line for line in stream.iter_lines() if line.startswith("data: ")]
    assert json.loads(lines[-1][6:])["state"] == "done"
    documents = document_counts(web.get(f"{base}/documents").json())
    assert documents == {"first.txt": 1, "big.jsonl": big, "last.md": 1}
    killable[1].terminate()
    killable[1].wait(timeout=60)
    checked = run_process("check", "--uri", uri)
    assert checked.code == 0 and "0 problems" in checked.stdout, checked.stdout


def test_folders_of_a_gone_board_with_this_pid_are_removed(tmp_path: Path) -> None:
    """A server restarted in a container gets its pid again: its old folders still go."""
    from hopgraph.serve.uploads import remove_dead_folders

    gone = tmp_path / f"{HOST}-{os.getpid()}-0123456789abcdef-aaaa"
    live = tmp_path / f"{HOST}-{os.getpid()}-fedcba9876543210-bbbb"
    other = tmp_path / "elsewhere-1-0123456789abcdef-cccc"  # another host's: not ours
    for folder in (gone, live, other):
        folder.mkdir()
    remove_dead_folders(tmp_path, {"fedcba9876543210"})
    assert not gone.exists() and live.exists() and other.exists()
