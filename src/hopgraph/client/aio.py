"""`AsyncClient`: what `Client` does, with `async def` (httpx.AsyncClient). Requests are built
and read in `calls` and `events`, as for `Client`; only the sending differs."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import AsyncIterator, Iterable, Sequence
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


class AsyncClient:
    """`Client` for asyncio: the same arguments (`transport` an httpx.AsyncBaseTransport),
    methods and results; `ask` is an async iterator. Use `async with`, or `await aclose()`."""

    def __init__(self, base_url: str, api_key: str | None = None, graph: str | None = None,
                 timeout: float = 60.0, transport: httpx.AsyncBaseTransport | None = None
                 ) -> None:
        self.base_url = calls.base_url_of(base_url)
        self.graph = graph
        self.timeout = timeout
        self._prefix = calls.graph_prefix(graph)
        self._http = httpx.AsyncClient(base_url=self.base_url,
                                       headers=calls.headers_for(api_key), timeout=timeout,
                                       transport=transport)
        self._owns_http = True

    def with_graph(self, graph: str | None) -> AsyncClient:
        """A client of the same server and key for `graph`, sharing this one's connections."""
        twin = copy.copy(self)
        twin.graph = graph
        twin._prefix = calls.graph_prefix(graph)
        twin._owns_http = False
        return twin

    # --- retrieval -----------------------------------------------------------------------

    async def query(self, question: Question, *, method: str | None = None,
                    top_k: int | None = None, degree: int | None = None,
                    entities: Sequence[str] | None = None, where: Filter = None,
                    include_metadata: bool = False) -> Comparison:
        """As `Client.query`."""
        return await self._send(calls.query(
            self._prefix, question, method=method, top_k=top_k, degree=degree,
            entities=entities, where=where, include_metadata=include_metadata))

    async def retrieve(self, question: Question, *, method: str | None = None,
                       top_k: int | None = None, degree: int | None = None,
                       entities: Sequence[str] | None = None, where: Filter = None,
                       include_metadata: bool = False) -> Retrieval:
        """As `Client.retrieve`."""
        return await self._send(calls.retrieve(
            self._prefix, question, method=method, top_k=top_k, degree=degree,
            entities=entities, where=where, include_metadata=include_metadata))

    def ask(self, question: Question, *, method: str | None = None, top_k: int | None = None,
            where: Filter = None) -> AsyncIterator[AskEvent]:
        """As `Client.ask`, for `async for` (checked now, sent when iteration starts). Leaving
        the loop early: wrap it in `contextlib.aclosing` to close the stream at once."""
        return self._events(calls.ask(self.base_url, self._prefix, question, method, top_k,
                                      where))

    async def answer(self, question: Question, *, method: str | None = None,
                     top_k: int | None = None, where: Filter = None) -> Answer:
        """As `Client.answer`."""
        call = calls.ask(self.base_url, self._prefix, question, method, top_k, where)
        built = AnswerBuilder(call.question, call.method, call.where)
        async for event in self._events(call):
            built.add(event)
        return built.answer()

    # --- documents, entities, stats ----------------------------------------------------

    async def documents(self) -> dict[str, int]:
        """As `Client.documents`."""
        return await self._send(calls.documents(self._prefix))

    async def add_documents(self, rows: Iterable[Row], doc_id: str | None = None,
                            append: bool = False) -> dict[str, Any]:
        """As `Client.add_documents`."""
        return await self._send(calls.add_documents(self._prefix, rows, doc_id, append))

    async def upload(self, files: Iterable[FileLike], *, extractor: str = "auto",
                     append: bool = False, wait: bool = False, timeout: float = 600.0
                     ) -> dict[str, Any]:
        """As `Client.upload`."""
        job = await self._send(jobs.upload(self._prefix, files, extractor, append))
        return await self.wait_for_job(job["id"], timeout) if wait else job

    async def job(self, job_id: str) -> dict[str, Any]:
        """As `Client.job`."""
        return await self._send(jobs.job(job_id))

    async def jobs(self) -> list[dict[str, Any]]:
        """As `Client.jobs`."""
        return await self._send(jobs.jobs())

    async def cancel_job(self, job_id: str) -> dict[str, Any]:
        """As `Client.cancel_job`."""
        return await self._send(jobs.cancel(job_id))

    async def wait_for_job(self, job_id: str, timeout: float = 600.0) -> dict[str, Any]:
        """As `Client.wait_for_job`."""
        deadline = time.monotonic() + timeout
        while not jobs.ended(view := await self.job(job_id)):
            if time.monotonic() > deadline:
                raise jobs.timed_out(view, timeout)
            await asyncio.sleep(jobs.POLL_S)  # polling the server's job
        return view

    async def delete_document(self, doc_id: str) -> dict[str, Any]:
        """As `Client.delete_document`."""
        return await self._send(calls.delete_document(self._prefix, doc_id))

    async def entity(self, name: str) -> dict[str, Any]:
        """As `Client.entity`."""
        return await self._send(calls.entity(self._prefix, name))

    async def stats(self) -> dict[str, Any]:
        """As `Client.stats`."""
        return await self._send(calls.stats(self._prefix))

    # --- the server --------------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        """As `Client.health`."""
        return await self._send(calls.health())

    async def graphs(self) -> list[str]:
        """As `Client.graphs`."""
        return await self._send(calls.graphs())

    async def default_graph(self) -> str | None:
        """As `Client.default_graph`."""
        return await self._send(calls.default_graph())

    async def create_graph(self, name: str) -> None:
        """As `Client.create_graph`."""
        await self._send(calls.create_graph(name))

    async def drop_graph(self, name: str) -> None:
        """As `Client.drop_graph`."""
        await self._send(calls.drop_graph(name))

    # --- keys (admin) ------------------------------------------------------------------

    async def list_keys(self) -> list[dict[str, Any]]:
        """As `Client.list_keys`."""
        return await self._send(calls.list_keys())

    async def create_key(self, role: str, graphs: Sequence[str] | None = None,
                         label: str | None = None) -> dict[str, Any]:
        """As `Client.create_key`."""
        return await self._send(calls.create_key(role, graphs, label))

    async def revoke_key(self, ident: str) -> list[dict[str, Any]]:
        """As `Client.revoke_key`."""
        return await self._send(calls.revoke_key(ident))

    async def aclose(self) -> None:
        """Close the connections (a client made by `with_graph` leaves them to its origin)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:  # never the key
        return f"AsyncClient({self.base_url!r}, graph={self.graph!r})"

    # --- I/O -----------------------------------------------------------------------------

    async def _send(self, call: Call[T]) -> T:
        where = calls.request_name(call.method, self.base_url, call.path)
        content = None if call.body is None else calls.encode_body(call.body, where)
        headers = None if content is None else {"Content-Type": "application/json"}
        try:
            response = await self._http.request(call.method, call.path, content=content,
                                                headers=headers, files=call.multipart(),
                                                data=call.form)
        except httpx.TransportError as exc:
            raise connection_failed(exc, where, self.timeout) from exc
        return calls.read_reply(call, response.status_code, response.content, where,
                                response.headers.get("retry-after"))

    async def _events(self, call: calls.AskCall) -> AsyncIterator[AskEvent]:
        headers = {"Content-Type": "application/json", "Accept": calls.STREAM_ACCEPT}
        try:
            async with self._http.stream("POST", call.path, content=call.content,
                                         headers=headers) as reply:
                if reply.status_code >= 400 or not calls.is_event_stream(
                        reply.headers.get("content-type")):
                    for event in answer_without_llm(reply.status_code, await reply.aread(),
                                                    call.where):
                        yield event
                    return
                reader = EventReader(call.where)
                async for line in reply.aiter_lines():
                    parsed = reader.line(line)
                    if parsed is not None:
                        yield parsed
                reader.end()
        except httpx.TransportError as exc:
            raise connection_failed(exc, call.where, self.timeout) from exc
