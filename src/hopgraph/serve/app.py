"""The HTTP API and the web page (FastAPI): `create_app` builds the app over a GraphService;
`run` serves it with uvicorn.

Safety by default: it binds 127.0.0.1; with HOPGRAPH_API_KEY set every API request needs
`Authorization: Bearer <key>`; request bodies are capped (413) and fields validated (422);
CORS is off unless origins are configured; no endpoint fetches a URL, and the LLM's base URL
comes only from the server's own settings.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hopgraph.answer import stream_answer
from hopgraph.config import NO_LLM_HELP, ServeSettings
from hopgraph.errors import EmbedderError, HopgraphError, InputError, LLMError, UsageError
from hopgraph.serve.models import (
    AskRequest,
    DocumentsRequest,
    EntityResponse,
    QueryRequest,
    QueryResponse,
)
from hopgraph.serve.service import GraphService

__all__ = ["ServeSettings", "create_app", "run"]

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"


def create_app(service: GraphService, settings: ServeSettings | None = None) -> FastAPI:
    """The app: API routes, the page at `/`, its files at `/static`, error handlers."""
    settings = settings or ServeSettings()
    app = FastAPI(title="hopgraph", summary="Graph RAG on Milvus: multi-hop retrieval, with "
                  "the subgraph behind each answer", version="0.1.0")
    api = APIRouter(dependencies=[Depends(_authorizer(settings.api_key))])
    _routes(api, service)
    app.include_router(api)

    @app.get("/health", tags=["server"])
    def health() -> dict[str, str]:
        """Liveness: no key needed, nothing read from Milvus."""
        return {"status": "ok", "graph": service.rag.store.graph, "uri": service.rag.store.uri}

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    if STATIC.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _error_handlers(app)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins,
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    return app


def _authorizer(key: str | None) -> Any:
    def authorize(request: Request) -> None:
        if key is None:
            return
        sent = request.headers.get("authorization", "")
        if not hmac.compare_digest(sent.encode(), f"Bearer {key}".encode()):
            raise HTTPException(401, "missing or wrong API key: send the header "
                                "'Authorization: Bearer <HOPGRAPH_API_KEY>'",
                                headers={"WWW-Authenticate": "Bearer"})
    return authorize


def _routes(api: APIRouter, service: GraphService) -> None:
    @api.get("/stats", tags=["graph"])
    def stats() -> dict[str, Any]:
        """Row counts, settings and state of the served graph, and its document count."""
        return {**service.rag.stats(), "documents": len(service.documents())}

    @api.get("/graphs", tags=["graph"])
    def graphs() -> dict[str, Any]:
        """The graphs in the served database (this server serves `current`)."""
        return {"graphs": service.rag.store.list_graphs(), "current": service.rag.store.graph}

    @api.post("/query", response_model=QueryResponse, tags=["retrieval"])
    def query(body: QueryRequest) -> Response:
        """Graph passages beside naive ones, entities, relations, timings, and the subgraph
        that led to each passage (nodes and edges, the path marked `on_path`)."""
        # Sent as built (its shape is QueryResponse, tested): validating each answer again
        # cost more than a cached answer does.
        query = body.to_query(service.default_method())
        return Response(service.query_json(query), media_type="application/json")

    @api.post("/ask", tags=["retrieval"], responses={200: {"content": {
        "text/event-stream": {}, "application/json": {}}}})
    def ask(body: AskRequest) -> Any:
        """A cited answer streamed as Server-Sent Events (`evidence`, `token`..., `done` or
        `error`) when the server has an LLM; otherwise the evidence and how to add one."""
        result = service.retrieve(body.to_query(service.default_method()))
        evidence = result.as_dict()["passages"]
        if service.llm is None:
            return {"answer": None, "message": NO_LLM_HELP.replace(
                " The retrieved evidence is shown above.", ""), "passages": evidence}
        return StreamingResponse(_answer_events(service, body.question, evidence),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    @api.get("/entities/{name:path}", response_model=EntityResponse, tags=["graph"])
    def entity(name: str) -> dict[str, Any]:
        """An entity by name (case and spacing ignored), its relations and neighbours."""
        found = service.entity(name)
        if found is None:
            raise HTTPException(404, f"no entity named {name!r}")
        return found

    @api.get("/documents", tags=["documents"])
    def documents() -> dict[str, Any]:
        """Stored documents with their passage counts."""
        return {"documents": [{"doc_id": doc, "passages": n}
                              for doc, n in sorted(service.documents().items())]}

    @api.post("/documents", tags=["documents"])
    def add_documents(body: DocumentsRequest) -> dict[str, Any]:
        """Ingest rows (the file format; bad rows are skipped and listed in `problems`); a
        stored document is replaced unless `append`."""
        summary = service.write(lambda rag: rag.add(body.rows, doc_id=body.doc_id,
                                                    append=body.append))
        return summary.as_dict()

    @api.delete("/documents/{doc_id:path}", tags=["documents"])
    def delete_document(doc_id: str) -> dict[str, Any]:
        """Delete a document with what only it holds (relations, entities)."""
        removal = service.write(lambda rag: rag.delete([doc_id]))  # looked up under the lease
        if doc_id in removal.missing:
            raise HTTPException(404, f"no document {doc_id!r}")
        return removal.as_dict()


def _answer_events(service: GraphService, question: str, evidence: list[dict[str, Any]]
                   ) -> Iterator[str]:
    assert service.llm is not None
    yield _event("evidence", {"passages": evidence})
    try:
        for chunk in stream_answer(service.llm, question, [p["text"] for p in evidence]):
            yield _event("token", {"text": chunk})
        yield _event("done", {"usage": service.llm.usage.as_dict()})
    except LLMError as exc:
        yield _event("error", {"detail": str(exc)})


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _error_handlers(app: FastAPI) -> None:
    statuses = ((UsageError, 422), (InputError, 400), (LLMError, 502), (EmbedderError, 502),
                (HopgraphError, 503))

    @app.exception_handler(HopgraphError)
    def hopgraph_error(request: Request, exc: HopgraphError) -> JSONResponse:
        status = next(code for kind, code in statuses if isinstance(exc, kind))
        return JSONResponse({"detail": str(exc)}, status_code=status)


class _TooLarge(Exception):
    pass


class BodyLimit:
    """413 for a request body over `limit` bytes, declared or streamed (pure ASGI, so a
    chunked upload is cut off as it arrives, not read into memory first)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        received, refused = 0, False

        async def counted() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit and not refused:
                    refused = True
                    await self._refuse(send)  # the app's own reply to the error is dropped
                    raise _TooLarge
            return message

        async def unless_refused(message: Message) -> None:
            if not refused:
                await send(message)

        with contextlib.suppress(_TooLarge):  # already answered with a 413
            await self.app(scope, counted, unless_refused)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"detail": f"request body over {self.limit} bytes"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def run(service: GraphService, host: str, port: int, settings: ServeSettings) -> None:
    """Serve until interrupted (uvicorn, one process: it owns the graph's Milvus Lite file)."""
    import uvicorn

    uvicorn.run(create_app(service, settings), host=host, port=port, log_level="warning")
