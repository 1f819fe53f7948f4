"""The HTTP API and the web page (FastAPI): `create_app` builds the app over a GraphService;
`run` serves it with uvicorn.

Safety by default: it binds 127.0.0.1; with HOPGRAPH_API_KEY set every API request needs
`Authorization: Bearer <key>`; request bodies are capped (413) and fields validated (422,
NaN, infinities and lone surrogates included); a Host header outside the allowed names is
refused (400: DNS rebinding); CORS is off unless origins are configured; no endpoint fetches
a URL, and the LLM's base URL comes only from the server's own settings. Every error has
one body (`serve.errors`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles

from hopgraph.answer import stream_answer
from hopgraph.config import NO_LLM_HELP, ServeSettings
from hopgraph.errors import LLMError
from hopgraph.retrieve import registry
from hopgraph.serve import errors
from hopgraph.serve.auth import KeyRing, authorizer
from hopgraph.serve.errors import HTTPError, clip, described
from hopgraph.serve.guards import BodyLimit, HostCheck
from hopgraph.serve.metrics import CONTENT_TYPE, AccessLog, Metrics
from hopgraph.serve.models import (
    AskRequest,
    DocumentsRequest,
    EntityResponse,
    QueryRequest,
    QueryResponse,
)
from hopgraph.serve.service import GraphService
from hopgraph.store.keys import KeyStore

__all__ = ["ServeSettings", "create_app", "run"]

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
SWAGGER_UI = "/static/vendor/swagger-ui-5.35.0"  # npm swagger-ui-dist (static/vendor says how)


def create_app(service: GraphService, settings: ServeSettings | None = None) -> FastAPI:
    """The app: API routes, the page at `/`, its files at `/static`, error handlers."""
    settings = settings or ServeSettings()
    app = FastAPI(title="hopgraph", summary="Graph RAG on Milvus: multi-hop retrieval, with "
                  "the subgraph behind each answer", version="0.1.0", docs_url=None,
                  redoc_url=None)
    ring = KeyRing(KeyStore(service.rag.store), settings.api_key)
    api = APIRouter(dependencies=[Depends(authorizer(ring, service.rag.store.graph)),
                                  Depends(_strict_body)],
                    responses=described(400, 401, 413, 422, 500, 502, 503))
    _routes(api, service)
    metrics = Metrics(service)

    @api.get("/metrics", tags=["server"],
             responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                              "description": "Prometheus text format"}})
    def prometheus() -> Response:
        """Requests by route, graph and status with latencies; the answer cache; the
        graph's rows and write counter; LLM requests and tokens."""
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)

    app.include_router(api)

    @app.get("/health", tags=["server"], responses=described(400, 500))
    def health() -> dict[str, str]:
        """Liveness: no key needed, nothing read from Milvus, nothing told."""
        return {"status": "ok"}

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:  # the API docs page, its code served from here (no CDN)
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json",
                                   title="hopgraph API", swagger_favicon_url="data:,",
                                   swagger_ui_parameters={"validatorUrl": None},
                                   swagger_js_url=f"{SWAGGER_UI}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{SWAGGER_UI}/swagger-ui.css")

    _truthful_methods(app, service)

    if STATIC.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")
    errors.install(app)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins,
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    if settings.allowed_hosts:
        app.add_middleware(HostCheck, allowed=settings.allowed_hosts)
    app.add_middleware(AccessLog, metrics=metrics, json_lines=settings.log_json)  # outermost
    return app


def _truthful_methods(app: FastAPI, service: GraphService) -> None:
    """The OpenAPI document lists only the methods this server can run (those that need an
    LLM only when it has one), so a request the schema allows is one the server takes."""
    made = app.openapi

    def openapi() -> dict[str, Any]:
        schema = made()
        usable = list(registry.names() if service.llm is not None
                      else registry.offline_names())
        for model in schema.get("components", {}).get("schemas", {}).values():
            method = model.get("properties", {}).get("method", {})
            for option in method.get("anyOf", [method]):
                if "enum" in option:
                    option["enum"] = usable
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


async def _strict_body(request: Request) -> None:
    """422 for a body Python's JSON parser takes but JSON does not (NaN, Infinity) or that
    holds a lone surrogate (it could not be stored or sent back)."""
    if request.method in ("POST", "PUT", "PATCH"):
        body = await request.body()  # kept by the request: the route reads it again
        problem = errors.strict_json(body) if body else None
        if problem:
            raise HTTPError(422, problem, "send standard JSON text (RFC 8259)")


def _routes(api: APIRouter, service: GraphService) -> None:
    @api.get("/stats", tags=["graph"])
    def stats() -> dict[str, Any]:
        """Row counts, settings and state of the served graph, and its document count."""
        return {**service.rag.stats(), "documents": len(service.documents())}

    @api.get("/graphs", tags=["graph"])
    def graphs(request: Request) -> dict[str, Any]:
        """The graphs in the served database that the key may use (this server serves
        `current`)."""
        key = getattr(request.state, "key", None)
        names = [g for g in service.rag.store.list_graphs() if key is None or key.sees(g)]
        return {"graphs": names, "current": service.rag.store.graph}

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

    @api.get("/entities/{name:path}", response_model=EntityResponse, tags=["graph"],
             responses=described(404))
    def entity(name: str) -> dict[str, Any]:
        """An entity by name (case and spacing ignored), its relations and neighbours."""
        found = service.entity(name)
        if found is None:
            raise HTTPError(404, f"no entity named {clip(name)!r}",
                            "GET /documents lists what the graph holds")
        return found

    @api.get("/documents", tags=["documents"])
    def documents() -> dict[str, Any]:
        """Stored documents with their passage counts."""
        return {"documents": [{"doc_id": doc, "passages": n}
                              for doc, n in sorted(service.documents().items())]}

    @api.post("/documents", tags=["documents"], responses=described(400))
    def add_documents(body: DocumentsRequest) -> dict[str, Any]:
        """Ingest rows (the file format; bad rows are skipped and listed in `problems`); a
        stored document is replaced unless `append`."""
        summary = service.write(lambda rag: rag.add(body.rows, doc_id=body.doc_id,
                                                    append=body.append))
        return summary.as_dict()

    @api.delete("/documents/{doc_id:path}", tags=["documents"], responses=described(404))
    def delete_document(doc_id: str) -> dict[str, Any]:
        """Delete a document with what only it holds (relations, entities)."""
        removal = service.write(lambda rag: rag.delete([doc_id]))  # looked up under the lease
        if doc_id in removal.missing:
            raise HTTPError(404, f"no document {clip(doc_id)!r}",
                            "GET /documents lists the stored documents")
        return removal.as_dict()


def _answer_events(service: GraphService, question: str, evidence: list[dict[str, Any]]
                   ) -> Iterator[str]:
    assert service.llm is not None
    yield _event("evidence", {"passages": evidence})
    try:
        for chunk in stream_answer(service.llm, question, [p["text"] for p in evidence]):
            yield _event("token", {"text": chunk})
        yield _event("done", {"usage": service.llm.usage.as_dict()})
    except LLMError as exc:  # the error body, as an event: the stream has begun
        yield _event("error", {"error": {"code": "upstream_failed", "message": clip(str(exc)),
                                         "fix": None}})


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def run(service: GraphService, host: str, port: int, settings: ServeSettings) -> None:
    """Serve until interrupted (uvicorn, one process: it owns the graph's Milvus Lite file)."""
    import uvicorn

    handler = logging.StreamHandler()  # the access log, one line per request, on stderr
    handler.setFormatter(logging.Formatter("%(message)s"))
    access = logging.getLogger("hopgraph.access")
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    access.propagate = False
    uvicorn.run(create_app(service, settings), host=host, port=port, log_level="warning")
