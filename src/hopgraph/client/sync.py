"""`Client`: `hopgraph serve`'s REST API from Python, blocking. Requests are built and read in
`calls` and `events`; this module only sends them (httpx) and turns transport failures into
`ConnectionFailed`."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

import httpx

from hopgraph.client import calls, jobs
from hopgraph.client.calls import Call, Filter, Question, Row
from hopgraph.client.errors import connection_failed
from hopgraph.client.events import AnswerBuilder, AskEvent, EventReader, answer_without_llm
from hopgraph.client.jobs import FileLike
from hopgraph.client.results import Comparison
from hopgraph.records import Answer, Retrieval

T = TypeVar("T")


class Client:
    """A `hopgraph serve` at `base_url`. `api_key` is sent as a bearer token; `graph` names
    the graph this client reads and writes (None: the server's default graph); `timeout` is
    in seconds, per request (for `ask`, between pieces of the stream); `transport` is
    httpx's (e.g. retries, or an app in process). Close it, or use it in a `with` block."""

    def __init__(self, base_url: str, api_key: str | None = None, graph: str | None = None,
                 timeout: float = 60.0, transport: httpx.BaseTransport | None = None) -> None:
        self.base_url = calls.base_url_of(base_url)
        self.graph = graph
        self.timeout = timeout
        self._prefix = calls.graph_prefix(graph)
        self._http = httpx.Client(base_url=self.base_url, headers=calls.headers_for(api_key),
                                  timeout=timeout, transport=transport)
        self._owns_http = True

    def with_graph(self, graph: str | None) -> Client:
        """A client of the same server and key for `graph` (None: the default graph). It
        shares this client's connections: close this one, not it."""
        twin = copy.copy(self)
        twin.graph = graph
        twin._prefix = calls.graph_prefix(graph)
        twin._owns_http = False
        return twin

    # --- retrieval -----------------------------------------------------------------------

    def query(self, question: Question, *, method: str | None = None,
              top_k: int | None = None, degree: int | None = None,
              entities: Sequence[str] | None = None, where: Filter = None,
              include_metadata: bool = False) -> Comparison:
        """Graph passages beside naive ones, with the evidence, timings and subgraph.
        `question` is the question or a `hopgraph.Query`; options left None are the
        server's defaults (top_k 5, degree 1, method `llm` with an LLM, else `default`);
        `include_metadata` gives each passage its stored metadata (`PassageHitWithMetadata`)."""
        return self._send(calls.query(
            self._prefix, question, method=method, top_k=top_k, degree=degree,
            entities=entities, where=where, include_metadata=include_metadata))

    def retrieve(self, question: Question, *, method: str | None = None,
                 top_k: int | None = None, degree: int | None = None,
                 entities: Sequence[str] | None = None, where: Filter = None,
                 include_metadata: bool = False) -> Retrieval:
        """The graph side of `query`, as `GraphRAG.retrieve` returns it."""
        return self._send(calls.retrieve(
            self._prefix, question, method=method, top_k=top_k, degree=degree,
            entities=entities, where=where, include_metadata=include_metadata))

    def ask(self, question: Question, *, method: str | None = None, top_k: int | None = None,
            where: Filter = None) -> Iterator[AskEvent]:
        """A cited answer as it is written: `Evidence`, then `Token`s, then `Done`; from a
        server without an LLM, `Evidence` then `NoAnswer`. An `error` event is raised as the
        server's error. The request is sent when iteration starts; top_k defaults to 3."""
        return self._events(calls.ask(self.base_url, self._prefix, question, method, top_k,
                                      where))

    def answer(self, question: Question, *, method: str | None = None,
               top_k: int | None = None, where: Filter = None) -> Answer:
        """`ask`, joined: a `hopgraph.Answer` (text, evidence, usage); a UsageError when the
        server has no LLM."""
        call = calls.ask(self.base_url, self._prefix, question, method, top_k, where)
        built = AnswerBuilder(call.question, call.method, call.where)
        for event in self._events(call):
            built.add(event)
        return built.answer()

    # --- documents, entities, stats ----------------------------------------------------

    def documents(self) -> dict[str, int]:
        """Stored documents and their passage counts, as `GraphRAG.documents()`."""
        return self._send(calls.documents(self._prefix))

    def add_documents(self, rows: Iterable[Row], doc_id: str | None = None,
                      append: bool = False) -> dict[str, Any]:
        """Ingest rows (dicts in the input file format, or `PassageRecord`s); a stored
        document is replaced unless `append`. The ingest summary (`IngestSummary.as_dict`)."""
        return self._send(calls.add_documents(self._prefix, rows, doc_id, append))

    def upload(self, files: Iterable[FileLike], *, extractor: str = "auto",
               append: bool = False, wait: bool = False, timeout: float = 600.0
               ) -> dict[str, Any]:
        """Send files (paths, or (name, bytes) pairs: documents as `hopgraph ingest` reads
        them, .txt .md .pdf .docx .pptx .xlsx .csv .html .eml, or JSON/JSONL rows) to be
        ingested in a background job on the server; the job (a dict: `id`, `state`,
        progress, `documents`, `problems`). With `wait`, when it has ended (`wait_for_job`).
        """
        job = self._send(jobs.upload(self._prefix, files, extractor, append))
        return self.wait_for_job(job["id"], timeout) if wait else job

    def job(self, job_id: str) -> dict[str, Any]:
        """One upload job, as the server sees it now; NotFound if unknown."""
        return self._send(jobs.job(job_id))

    def jobs(self) -> list[dict[str, Any]]:
        """The most recent upload jobs of the graphs the key may use, newest first."""
        return self._send(jobs.jobs())

    def cancel_job(self, job_id: str) -> dict[str, Any]:
        """Ask a job to stop (the file it is storing is finished first); the job. Conflict
        when it has already ended, NotFound when there is no such job."""
        return self._send(jobs.cancel(job_id))

    def wait_for_job(self, job_id: str, timeout: float = 600.0) -> dict[str, Any]:
        """The job once it has ended (done, failed, cancelled or interrupted), looking every
        half second; TimeoutError if it is still running after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not jobs.ended(view := self.job(job_id)):
            if time.monotonic() > deadline:
                raise jobs.timed_out(view, timeout)
            time.sleep(jobs.POLL_S)  # polling the server's job, not synchronization
        return view

    def delete_document(self, doc_id: str) -> dict[str, Any]:
        """Delete a document and what only it holds (`Removal.as_dict`); NotFound if absent."""
        return self._send(calls.delete_document(self._prefix, doc_id))

    def entity(self, name: str) -> dict[str, Any]:
        """An entity by name, its relations and neighbours; NotFound if unknown."""
        return self._send(calls.entity(self._prefix, name))

    def stats(self) -> dict[str, Any]:
        """Row counts, settings and state of the graph, and its document count."""
        return self._send(calls.stats(self._prefix))

    # --- the server --------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """`{"status": "ok"}` when the server is up (no key needed)."""
        return self._send(calls.health())

    def graphs(self) -> list[str]:
        """The graphs of the server's database that the key may use."""
        return self._send(calls.graphs())

    def default_graph(self) -> str | None:
        """The graph the server serves without a graph name (None when the key may not
        use it)."""
        return self._send(calls.default_graph())

    def create_graph(self, name: str) -> None:
        """Make an empty graph (admin key); Conflict if it exists."""
        self._send(calls.create_graph(name))

    def drop_graph(self, name: str) -> None:
        """Drop a graph and everything in it (admin key); Conflict for the default graph."""
        self._send(calls.drop_graph(name))

    # --- keys (admin) ------------------------------------------------------------------

    def list_keys(self) -> list[dict[str, Any]]:
        """The keys of the server's database, oldest first: `id`, `role`, `graphs`,
        `label`, `created` (never the keys themselves)."""
        return self._send(calls.list_keys())

    def create_key(self, role: str, graphs: Sequence[str] | None = None,
                   label: str | None = None) -> dict[str, Any]:
        """Make a key: `read` or `write` for `graphs`, or `admin` (no graphs: all). Its
        record with `key`, the key itself, shown this once. It counts in this server at once.
        """
        return self._send(calls.create_key(role, graphs, label))

    def revoke_key(self, ident: str) -> list[dict[str, Any]]:
        """Revoke the keys whose id or label is `ident`; their records. NotFound if none."""
        return self._send(calls.revoke_key(ident))

    def close(self) -> None:
        """Close the connections (a client made by `with_graph` leaves them to its origin)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:  # never the key
        return f"Client({self.base_url!r}, graph={self.graph!r})"

    # --- I/O -----------------------------------------------------------------------------

    def _send(self, call: Call[T]) -> T:
        where = calls.request_name(call.method, self.base_url, call.path)
        content = None if call.body is None else calls.encode_body(call.body, where)
        headers = None if content is None else {"Content-Type": "application/json"}
        try:
            response = self._http.request(call.method, call.path, content=content,
                                          headers=headers, files=call.multipart(),
                                          data=call.form)
        except httpx.TransportError as exc:
            raise connection_failed(exc, where, self.timeout) from exc
        return calls.read_reply(call, response.status_code, response.content, where,
                                response.headers.get("retry-after"))

    def _events(self, call: calls.AskCall) -> Iterator[AskEvent]:
        headers = {"Content-Type": "application/json", "Accept": calls.STREAM_ACCEPT}
        try:
            with self._http.stream("POST", call.path, content=call.content,
                                   headers=headers) as reply:
                if reply.status_code >= 400 or not calls.is_event_stream(
                        reply.headers.get("content-type")):
                    yield from answer_without_llm(reply.status_code, reply.read(), call.where)
                    return
                reader = EventReader(call.where)
                for line in reply.iter_lines():
                    event = reader.line(line)
                    if event is not None:
                        yield event
                reader.end()
        except httpx.TransportError as exc:
            raise connection_failed(exc, call.where, self.timeout) from exc
