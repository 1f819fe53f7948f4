"""The HTTP API and the web page (FastAPI): `create_app` builds the app over a pool of graphs
(`serve.pool`; its routes are in `serve.routes`, the keys' in `serve.key_routes`, the
uploads and their jobs in `serve.job_routes`, run by a `serve.job_board`); `run` serves it
with uvicorn.

Safety by default: it binds 127.0.0.1; with a key configured (HOPGRAPH_API_KEY, or keys in
the database) every API request needs `Authorization: Bearer <key>`; request bodies are
capped (413), read before the framework reads them (`serve.bodies`: NaN, infinities, lone
surrogates, deep nesting, too many files) and validated (422); a Host header outside the
allowed names is refused (400: DNS rebinding); CORS is off unless origins are configured;
no endpoint fetches a URL, and the LLM's base URL comes only from the server's own
settings. Every error has one body (`serve.errors`). HEAD is answered wherever GET is.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, FastAPI, params
from fastapi.concurrency import run_in_threadpool
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles

from hopgraph.config import ServeSettings
from hopgraph.retrieve import registry
from hopgraph.serve import errors, runtime
from hopgraph.serve.auth import KeyRing, authenticator, may_write
from hopgraph.serve.bodies import CheckedRoute
from hopgraph.serve.errors import described
from hopgraph.serve.guards import HeadAsGet, HostCheck
from hopgraph.serve.job_board import JobBoard
from hopgraph.serve.job_routes import (
    UploadLimit,
    UploadRoute,
    job_routes,
    truthful_forms,
    upload_routes,
)
from hopgraph.serve.key_routes import key_routes
from hopgraph.serve.metrics import AccessLog, Metrics
from hopgraph.serve.models import where_schemas
from hopgraph.serve.pool import GraphPool
from hopgraph.serve.routes import default_graph, graph_routes, named_graph, server_routes
from hopgraph.serve.service import GraphService
from hopgraph.store.jobs import JobStore
from hopgraph.store.keys import KeyStore

__all__ = ["ServeSettings", "create_app", "run"]

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
SWAGGER_UI = "/static/vendor/swagger-ui-5.35.0"  # npm swagger-ui-dist (static/vendor says how)


class _RouterOptions(TypedDict):
    """What each router of the app is made with (`APIRouter`'s arguments)."""

    dependencies: Sequence[params.Depends]
    responses: dict[int | str, dict[str, Any]]
    route_class: type[APIRoute]


def create_app(graphs: GraphService | GraphPool, settings: ServeSettings | None = None,
               local_token: str | None = None, bound: str = "127.0.0.1") -> FastAPI:
    """The app over a pool of graphs (or one service, the default graph of a pool made
    here): API routes, the page at `/`, its files at `/static`, error handlers.
    `local_token` is an admin key taken only from this machine (a client at a loopback
    address or at `bound`, the address served): the runtime file's (`serve.runtime`)."""
    settings = settings or ServeSettings()
    pool = graphs if isinstance(graphs, GraphPool) else GraphPool(graphs, settings.max_graphs)

    board = JobBoard(pool, JobStore(pool.catalog), settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            await run_in_threadpool(board.sweep)
        except Exception as exc:  # readers record a dead server's jobs as they meet them
            log.warning("could not look for upload jobs of stopped servers: %s", exc)
        yield
        await run_in_threadpool(board.close)
        if pool is not graphs:
            pool.close()

    app = FastAPI(title="hopgraph", summary="Graph RAG on Milvus: multi-hop retrieval, with "
                  "the subgraph behind each answer", version="0.1.0", docs_url=None,
                  redoc_url=None, lifespan=lifespan)
    ring = KeyRing(KeyStore(pool.catalog), settings.api_key, local_token, bound)
    guards = [Depends(authenticator(ring))]
    failures = described(400, 401, 403, 413, 422, 500, 502, 503)
    metrics = Metrics(pool)
    api: _RouterOptions = {"dependencies": guards, "responses": failures,
                           "route_class": CheckedRoute}
    present = APIRouter(**api)
    graph_routes(present, pool, default_graph(pool), settings.write_wait)
    named = APIRouter(prefix="/graphs/{graph}", **api)
    graph_routes(named, pool, named_graph(pool), settings.write_wait)
    server = APIRouter(**api)
    server_routes(server, pool, metrics)
    key_routes(server, ring)
    job_routes(server, board)
    forms: _RouterOptions = {**api, "route_class": UploadRoute}
    uploads = APIRouter(**forms)
    named_uploads = APIRouter(prefix="/graphs/{graph}", **forms)
    upload_routes(uploads, named_uploads, board, pool)
    for router in (server, present, named, uploads, named_uploads):
        app.include_router(router)
    app.state.jobs = board

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

    _truthful_methods(app, pool.llm is not None)

    if STATIC.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")
    errors.install(app, pool.hide)
    app.add_middleware(HeadAsGet)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins,
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(UploadLimit, limit=settings.max_body_bytes,
                       uploads=settings.max_files * settings.max_file_bytes + 1024 * 1024,
                       may_upload=lambda authorization: may_write(ring, authorization))
    if settings.allowed_hosts:
        app.add_middleware(HostCheck, allowed=settings.allowed_hosts)
    app.add_middleware(AccessLog, metrics=metrics, json_lines=settings.log_json)  # outermost
    return app


def _truthful_methods(app: FastAPI, has_llm: bool) -> None:
    """The OpenAPI document lists only the methods this server can run (those that need an
    LLM only when it has one), and says what a filter (`where`) may be, so a request the
    schema allows is one the server takes."""
    made = app.openapi

    def openapi() -> dict[str, Any]:
        schema = made()
        usable = list(registry.names() if has_llm else registry.offline_names())
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in list(components.values()):
            properties = model.get("properties", {})
            method = properties.get("method", {})
            for option in method.get("anyOf", [method]):
                if "enum" in option:
                    option["enum"] = usable
            if "where" in properties:
                properties["where"] = {
                    "anyOf": [{"$ref": "#/components/schemas/Where"}, {"type": "null"},
                              {"type": "object", "maxProperties": 0}],  # {}: none
                    "description": properties["where"].get("description", "")}
        components.update(where_schemas())
        truthful_forms(components, has_llm)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def run(pool: GraphPool, host: str, port: int, settings: ServeSettings) -> None:
    """Serve until interrupted (uvicorn, one process: it owns the graph's Milvus Lite file).
    On a Lite file, the runtime file beside it (`serve.runtime`) tells the owner's commands
    where the server is while it runs."""
    import uvicorn

    handler = logging.StreamHandler()  # the access log, one line per request, on stderr
    handler.setFormatter(logging.Formatter("%(message)s"))
    access = logging.getLogger("hopgraph.access")
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    access.propagate = False
    uri, url = pool.catalog.uri, runtime.local_url(host, port)
    token = runtime.new_token() if pool.catalog.is_local else None
    if token is not None and settings.allowed_hosts:
        # The owner's commands call the runtime file's URL. A page elsewhere that rebinds
        # its DNS name to this machine sends its own name, so this opens nothing to it.
        settings = replace(settings, allowed_hosts=[*settings.allowed_hosts,
                                                    urlsplit(url).hostname or host])
    app = create_app(pool, settings, token, host)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    # Upload event streams end when the server is told to stop: uvicorn waits for open
    # responses before it shuts the app down, and a stream would otherwise run until its
    # job ended.
    app.state.jobs.server_exiting = lambda: server.should_exit
    published = None
    if token is not None:
        try:
            published = runtime.publish(uri, url, token)
        except OSError as exc:  # the server works without it; `hopgraph keys` then cannot
            log.warning("could not write %s (%s): `hopgraph keys --uri` will not find this "
                        "server; use --server URL", runtime.place(uri), exc)
    # uvicorn stops gracefully on SIGTERM, then raises it again under the handler it
    # found: this one makes it an exit, so the runtime file and the graphs are closed as
    # after Ctrl-C rather than left to a killed process.
    previous = signal.signal(signal.SIGTERM, _exit_on_term)
    try:
        server.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
        if published is not None:
            runtime.withdraw(uri, published)


def _exit_on_term(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
