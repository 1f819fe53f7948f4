"""The API's routes. One graph's routes (`graph_routes`) are mounted twice: at the root for
the server's default graph and under `/graphs/{graph}/` for any graph; the server's own
routes (`server_routes`) list, make and drop graphs and give the metrics."""

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Path, Request
from fastapi import Query as Param
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse

from hopgraph.answer import stream_answer
from hopgraph.api import GraphRAG, items_part
from hopgraph.config import NO_LLM_HELP
from hopgraph.errors import LLMError
from hopgraph.records import Retrieval, cited_sources
from hopgraph.serve.auth import guard, missing
from hopgraph.serve.errors import HTTPError, clip, described
from hopgraph.serve.job_models import DocumentsPage
from hopgraph.serve.metrics import CONTENT_TYPE, Metrics
from hopgraph.serve.models import (
    GRAPH_NAME,
    AskRequest,
    DocumentsRequest,
    EntityResponse,
    GraphChange,
    GraphRequest,
    GraphsResponse,
    QueryRequest,
    QueryResponse,
)
from hopgraph.serve.pool import GraphPool
from hopgraph.serve.service import GraphService, WriteBusy
from hopgraph.store import DOC_ID_MAX

MAX_PAGE = 1000  # documents per page of GET /documents, when a page is asked for
BUSY_RETRY_S = 5  # the Retry-After of a write that waited its --write-wait in vain
_T = TypeVar("_T")
GraphParam = Annotated[str, Path(min_length=1, max_length=64, pattern=GRAPH_NAME,
                                 description="a graph of the database (GET /graphs)")]


def default_graph(pool: GraphPool) -> Any:
    """The dependency giving the routes without a graph name the server's default graph."""

    async def service(request: Request) -> AsyncIterator[GraphService]:
        async with _using(pool, pool.default, request) as found:
            yield found

    return service


def named_graph(pool: GraphPool) -> Any:
    """The dependency giving the routes under `/graphs/{graph}` their graph (404 if the
    database has none of that name)."""

    async def service(request: Request, graph: GraphParam) -> AsyncIterator[GraphService]:
        async with _using(pool, graph, request) as found:
            yield found

    return service


@asynccontextmanager
async def _using(pool: GraphPool, name: str, request: Request) -> AsyncIterator[GraphService]:
    """A graph of the pool for one request. An open graph is taken on the event loop (a
    dictionary look-up); opening or closing one, which reads Milvus, runs off it."""
    entry = pool.borrow_if_open(name)
    if entry is None:
        entry = await run_in_threadpool(pool.acquire, name)
    try:
        request.state.graph = name
        yield entry.service
    finally:
        if pool.release(entry, close=False):
            await run_in_threadpool(pool.close_entry, entry)


def graph_routes(api: APIRouter, pool: GraphPool, graph_of: Any, write_wait: float) -> None:
    """One graph's routes on `api`; `graph_of` is the dependency that finds the graph; a
    write waits at most `write_wait` seconds behind another one (`_written`)."""
    Service = Annotated[GraphService, Depends(graph_of)]  # a local type: no postponed
    # annotations in this module (FastAPI reads each route's at definition)

    def role(name: str) -> list[Any]:
        return [Depends(guard(name, pool.default))]

    @api.get("/stats", tags=["graph"], dependencies=role("read"), responses=described(404))
    def stats(service: Service, request: Request) -> dict[str, Any]:
        """Row counts, settings and state of the graph, and its document count; the
        database's URI only for an admin key (or with no keys)."""
        found = {**service.rag.stats(), "documents": len(service.documents())}
        key = getattr(request.state, "key", None)
        if key is not None and not key.allows("admin"):
            found.pop("uri", None)  # where the server keeps its files is not a reader's
        return found

    @api.post("/query", response_model=QueryResponse, tags=["retrieval"],
              dependencies=role("read"), responses=described(404))
    def query(body: QueryRequest, service: Service) -> Response:
        """Graph passages beside naive ones, entities, relations, timings, and the subgraph
        that led to each passage (nodes and edges, the path marked `on_path`)."""
        # Sent as built (its shape is QueryResponse, tested): validating each answer again
        # cost more than a cached answer does.
        query = body.to_query(service.default_method())
        answer = service.query_json(query)
        if body.include_metadata:
            answer = _with_metadata(service, answer)
        return Response(answer, media_type="application/json")

    @api.post("/ask", tags=["retrieval"], dependencies=role("read"),
              responses={200: {"content": {"text/event-stream": {}, "application/json": {}}},
                         **described(404)})
    def ask(body: AskRequest, service: Service) -> Any:
        """A cited answer streamed as Server-Sent Events (`evidence`, `token`..., `done` or
        `error`) when the server has an LLM; otherwise the evidence and how to add one."""
        result = service.retrieve(body.to_query(service.default_method()))
        evidence = result.as_dict()["passages"]
        if service.llm is None:
            return {"answer": None, "message": NO_LLM_HELP.replace(
                " The retrieved evidence is shown above.", ""), "passages": evidence}
        return StreamingResponse(_answer_events(service, body.question, result, evidence),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    @api.get("/entities/{name:path}", response_model=EntityResponse, tags=["graph"],
             dependencies=role("read"), responses=described(404))
    def entity(name: str, service: Service) -> dict[str, Any]:
        """An entity by name (case and spacing ignored), its relations and neighbours."""
        found = service.entity(name)
        if found is None:
            raise HTTPError(404, f"no entity named {clip(name)!r}",
                            "GET /documents lists what the graph holds")
        return found

    @api.get("/documents", response_model=DocumentsPage, tags=["documents"],
             dependencies=role("read"), responses=described(404))
    def documents(service: Service, offset: Annotated[int, Param(ge=0)] = 0,
                  limit: Annotated[int | None, Param(ge=1, le=MAX_PAGE)] = None,
                  q: Annotated[str | None, Param(max_length=DOC_ID_MAX, description=(
                      "only documents whose id holds this (case ignored)"))] = None
                  ) -> dict[str, Any]:
        """Stored documents with their passage counts, in id order: those from `offset`,
        at most `limit` (default: all), and `total`, how many match in all."""
        found = sorted(service.documents().items())
        if q:
            needle = q.casefold()
            found = [(doc, n) for doc, n in found if needle in doc.casefold()]
        page = found[offset:] if limit is None else found[offset:offset + limit]
        return {"documents": [{"doc_id": doc, "passages": n} for doc, n in page],
                "total": len(found), "offset": offset, "limit": limit}

    @api.post("/documents", tags=["documents"], dependencies=role("write"),
              responses=described(400, 404))
    def add_documents(body: DocumentsRequest, service: Service) -> dict[str, Any]:
        """Ingest rows (the file format; bad rows are skipped and listed in `problems`); a
        stored document is replaced unless `append`."""
        part = items_part(body.rows, doc_id=body.doc_id, append=body.append)
        summary = _busy(lambda: service.add(part, write_wait))  # with adds queued meanwhile
        return summary.as_dict()

    @api.delete("/documents/{doc_id:path}", tags=["documents"], dependencies=role("write"),
                responses=described(404))
    def delete_document(doc_id: str, service: Service) -> dict[str, Any]:
        """Delete a document with what only it holds (relations, entities)."""
        removal = _written(service, write_wait,  # the document is looked up under the lease
                           lambda rag: rag.delete([doc_id]))
        if doc_id in removal.missing:
            raise HTTPError(404, f"no document {clip(doc_id)!r}",
                            "GET /documents lists the stored documents")
        return removal.as_dict()


def _written(service: GraphService, wait: float, change: Callable[[GraphRAG], _T]) -> _T:
    """`change` written, if the graph's other write (an upload's file, say) ends within
    `wait` seconds; else a 503 with Retry-After, and it is never written (the request's
    own thread gave up: nothing is left to write it after the reply)."""
    return _busy(lambda: service.write(change, wait))


def _busy(write: Callable[[], _T]) -> _T:
    """`write()`, its `WriteBusy` a 503 with Retry-After."""
    try:
        return write()
    except WriteBusy as exc:
        raise HTTPError(503, f"{exc}; nothing was written", "send it again after "
                        "Retry-After seconds, or raise --write-wait (HOPGRAPH_WRITE_WAIT)",
                        headers={"Retry-After": str(BUSY_RETRY_S)}) from None


def server_routes(api: APIRouter, pool: GraphPool, metrics: Metrics) -> None:
    """The routes of the server rather than of one graph."""

    @api.get("/graphs", response_model=GraphsResponse, tags=["graphs"],
             dependencies=[Depends(guard("read"))])
    def graphs(request: Request) -> dict[str, Any]:
        """The graphs of the database that the key may use, and the server's default graph
        (the one the routes without `/graphs/{graph}` serve), null when the key may not
        use it."""
        key = getattr(request.state, "key", None)
        return {"graphs": [g for g in pool.names() if key is None or key.sees(g)],
                "default": pool.default if key is None or key.sees(pool.default) else None}

    @api.post("/graphs", response_model=GraphChange, status_code=201, tags=["graphs"],
              dependencies=[Depends(guard("admin"))], responses=described(403, 409))
    def create_graph(body: GraphRequest, request: Request) -> dict[str, Any]:
        """Make an empty graph (admin)."""
        if not pool.create(body.name):
            raise HTTPError(409, f"graph {body.name!r} exists already",
                            f"use it at /graphs/{body.name}/, or drop it first")
        request.state.graph = body.name
        return {"graph": body.name, "created": True}

    @api.delete("/graphs/{graph}", response_model=GraphChange, tags=["graphs"],
                dependencies=[Depends(guard("admin", pool.default))],
                responses=described(403, 404, 409))
    def drop_graph(graph: GraphParam, request: Request) -> dict[str, Any]:
        """Delete a graph and everything in it (admin; not the server's default graph)."""
        if not pool.exists(graph):
            raise missing(graph)
        pool.drop(graph)
        request.state.graph = graph
        return {"graph": graph, "dropped": True}

    @api.get("/metrics", tags=["server"], dependencies=[Depends(guard("admin"))],
             responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                              "description": "Prometheus text format"}, **described(403)})
    def prometheus() -> Response:
        """Requests by route, graph and status with latencies; the answer cache, rows and
        write counter of each open graph; open graphs; LLM requests and tokens (admin)."""
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)


def _with_metadata(service: GraphService, answer: bytes) -> bytes:
    """An answer whose passages carry their stored metadata (read after the answer, which
    may have come from the cache)."""
    data = json.loads(answer)
    passages = data["graph"] + data["naive"]
    found = service.rag.passage_metadata(p["id"] for p in passages)
    for passage in passages:
        passage["metadata"] = found.get(passage["id"], {})
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _answer_events(service: GraphService, question: str, result: Retrieval,
                   evidence: list[dict[str, Any]]) -> Iterator[str]:
    assert service.llm is not None
    yield _event("evidence", {"passages": evidence})
    try:
        written: list[str] = []
        for chunk in stream_answer(service.llm, question, result.passages):
            written.append(chunk)
            yield _event("token", {"text": chunk})
        yield _event("done", {"usage": service.llm.usage.as_dict(),
                              "citations": cited_sources("".join(written), result.passages)})
    except LLMError as exc:  # the error body, as an event: the stream has begun
        yield _event("error", {"error": {"code": "upstream_failed", "message": clip(str(exc)),
                                         "fix": None}})


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
