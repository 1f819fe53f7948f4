"""The upload and job routes: `POST /uploads` (and `/graphs/{graph}/uploads`) turn files
into a job (`serve.job_board`); `/jobs` lists, shows, cancels and streams jobs.

Uploads are multipart: they have a body cap of their own (`UploadLimit`: files per upload ×
bytes per file), and their form is parsed to at most `--max-files` files (`UploadRoute`:
more is a 422, as the schema's `maxItems` says); each file's size is checked here (a 413
naming it), the room left in the queue by the board (a 429).
"""

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Path, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BeforeValidator
from starlette.types import ASGIApp, Receive, Scope, Send

from hopgraph.errors import LLMError
from hopgraph.ingest import extract
from hopgraph.ingest.inputs import readable_kinds
from hopgraph.serve.auth import guard, missing
from hopgraph.serve.bodies import CheckedRoute
from hopgraph.serve.errors import HTTPError, clip, described
from hopgraph.serve.guards import BodyLimit
from hopgraph.serve.job_board import JobBoard
from hopgraph.serve.job_models import JobsResponse, JobView
from hopgraph.serve.jobs import ENDED
from hopgraph.serve.pool import GraphPool
from hopgraph.serve.routes import GraphParam
from hopgraph.serve.uploads import Incoming

MIN_GAP_S = 0.2  # between two progress events of a stream (at most 5 a second)
FOREIGN_POLL_S = 1.0  # how often a stream reads the record of another server's job
PING_S = 10.0  # a comment line this often keeps a quiet stream's connection checked
NAME_BYTES = 200  # of an uploaded file's name (its document id)
_MB = 1024 * 1024

Extractor = Annotated[Literal["auto", "offline", "llm"], Form(
    description="for documents: the offline extractor or the LLM (auto: the LLM when the "
                "server has one)")]


def _true_or_false(value: Any) -> Any:
    """A form's `true` or `false` (any case) as a bool; anything else ("0", "yes") is left
    for validation to refuse (a 422), as a JSON body's would be."""
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value if isinstance(value, bool) else None


Append = Annotated[bool, BeforeValidator(_true_or_false), Form(
    strict=True, description="keep the stored passages of documents uploaded again "
                             "(default: replace them)")]
JobId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[0-9a-f]+$",
                            description="a job's id (GET /jobs)")]


class UploadRoute(CheckedRoute):
    """An upload route: its form is read by `CheckedRoute`, to at most `--max-files` files."""

    files_fix = "upload them in several requests, or raise --max-files (HOPGRAPH_MAX_FILES)"


class EventStream(StreamingResponse):
    """Server-Sent Events."""

    media_type = "text/event-stream"


def upload_routes(root: APIRouter, named: APIRouter, board: JobBoard, pool: GraphPool
                  ) -> None:
    """`POST /uploads` on `root` (the default graph) and on `named` (`/graphs/{graph}`)."""
    most = board.settings.max_files  # the schema's maxItems; the parser stops past it (422)
    Files = Annotated[list[UploadFile], File(  # a local type, read when the route is made
        min_length=1, max_length=most,
        description=f"1 to {most} files (--max-files): {readable_kinds()}")]
    options: dict[str, Any] = {
        "status_code": 202, "response_model": JobView, "tags": ["uploads"],
        "dependencies": [Depends(guard("write", pool.default))],
        "responses": described(403, 404, 413, 422, 429), "form_limits": {"max_files": most}}

    @root.post("/uploads", **options)
    def upload(files: Files, request: Request, extractor: Extractor = "auto",
               append: Append = False) -> dict[str, Any]:
        """Ingest files in a background job (write role): 202 with the job; follow it at
        GET /jobs/{id} or /jobs/{id}/events. A bad file is named in the job's `problems`;
        the others are still stored."""
        return _accept(board, pool, pool.default, files, extractor, append, request)

    @named.post("/uploads", **options)
    def upload_to(graph: GraphParam, files: Files, request: Request,
                  extractor: Extractor = "auto", append: Append = False) -> dict[str, Any]:
        """As POST /uploads, into graph `{graph}`."""
        return _accept(board, pool, graph, files, extractor, append, request)


def _accept(board: JobBoard, pool: GraphPool, graph: str, files: list[UploadFile],
            extractor: str, append: bool, request: Request) -> dict[str, Any]:
    request.state.graph = graph
    if not pool.exists(graph):
        raise missing(graph)
    limits = board.settings
    names = upload_names([upload.filename for upload in files])
    sizes = [_size(upload) for upload in files]
    for name, size in zip(names, sizes, strict=True):
        if size > limits.max_file_bytes:
            raise HTTPError(413, f"file {clip(name, 100)!r} is {size / _MB:.1f} MB, over "
                            f"the limit of {limits.max_file_mb:g} MB per file", "split it, "
                            "or raise --max-file-mb (HOPGRAPH_MAX_FILE_MB)")
    try:
        extract.choose(extractor, pool.llm is not None)
    except LLMError as exc:
        raise HTTPError(422, exc.what, (exc.fix or "").strip() or None) from None
    incoming = [Incoming(name, size, upload.file)
                for name, size, upload in zip(names, sizes, files, strict=True)]
    return board.submit(graph, incoming, extractor, append)


def _size(upload: UploadFile) -> int:
    if upload.size is not None:
        return upload.size
    upload.file.seek(0, 2)
    size = upload.file.tell()
    upload.file.seek(0)
    return size


def upload_names(given: list[str | None]) -> list[str]:
    """Each file's name, its document id: the last part of the name sent (a browser may
    send a path), printable, at most NAME_BYTES (a file name's limit on disk); a name seen
    before in the upload gets " (2)"... A name cut to fit keeps a digest of the whole name
    before its suffix, so two long names that share their first NAME_BYTES stay two
    documents, and the same long name uploaded again is the same one."""
    names: list[str] = []
    for index, raw in enumerate(given):
        base = re.split(r"[\\/]", raw or "")[-1]
        base = "".join(c for c in base if c.isprintable()).strip()
        base = base.encode("utf-8", "replace").decode("utf-8")  # lone surrogates: "?"
        if base in ("", ".", ".."):
            base = f"upload-{index + 1}"
        dot = base.rfind(".", 1)
        short = dot > 0 and len(base) - dot <= 12  # a suffix, not a dot inside a name
        stem, suffix = (base[:dot], base[dot:]) if short else (base, "")
        if len(f"{stem} (99){suffix}".encode()) > NAME_BYTES:
            digest = "~" + hashlib.blake2b(base.encode(), digest_size=4).hexdigest()
            while len(f"{stem}{digest} (99){suffix}".encode()) > NAME_BYTES:
                stem = stem[:-1]
            stem += digest
        name, count = stem + suffix, 1
        while name in names:
            count += 1
            name = f"{stem} ({count}){suffix}"
        names.append(name)
    return names


def job_routes(api: APIRouter, board: JobBoard) -> None:
    """`/jobs`: list, show, cancel and stream the jobs of the graphs the key may use."""
    options: dict[str, Any] = {"tags": ["uploads"], "dependencies": [Depends(guard("write"))]}

    @api.get("/jobs", response_model=JobsResponse, responses=described(403), **options)
    def jobs(request: Request) -> dict[str, Any]:
        """The most recent upload jobs (of every server of the database), newest first."""
        key = getattr(request.state, "key", None)
        return {"jobs": board.jobs(lambda graph: key is None or key.sees(graph))}

    @api.get("/jobs/{job_id}", response_model=JobView, responses=described(403, 404),
             **options)
    def job(job_id: JobId, request: Request) -> dict[str, Any]:
        """A job: state, progress, documents written, problems, files."""
        return _visible(board.view(job_id), job_id, request)

    @api.delete("/jobs/{job_id}", response_model=JobView,
                responses=described(403, 404, 409), **options)
    def cancel(job_id: JobId, request: Request) -> dict[str, Any]:
        """Cancel a job: a queued one ends `cancelled` at once, a running one once the file
        it is storing is stored (nothing stored is lost); 409 if it has ended."""
        _visible(board.view(job_id), job_id, request)
        return _visible(board.cancel(job_id), job_id, request)

    @api.get("/jobs/{job_id}/events", responses={
        200: {"content": {"text/event-stream": {}},
              "description": "`progress` events (the job), then `end` (the job)"},
        **described(403, 404)}, **options)
    def events(job_id: JobId, request: Request) -> EventStream:
        """The job's progress as Server-Sent Events: `progress` with the job at each
        change (5 a second at most), then `end` with the job as it ended."""
        _visible(board.view(job_id), job_id, request)
        return EventStream(_events(board, job_id), headers={"Cache-Control": "no-cache"})


def _visible(view: dict[str, Any] | None, job_id: str, request: Request) -> dict[str, Any]:
    """The job, if the key may see its graph; else the 404 of a job that does not exist."""
    key = getattr(request.state, "key", None)
    if view is None or (key is not None and not key.sees(view["graph"])):
        raise HTTPError(404, f"no job {clip(job_id, 64)!r}", "GET /jobs lists the jobs")
    request.state.graph = view["graph"]
    return view


async def _events(board: JobBoard, job_id: str) -> AsyncIterator[str]:
    """The job's events until it ends, the server stops, or the client goes."""
    loop = asyncio.get_running_loop()
    sent: float | None = None
    last = 0.0
    while True:
        job = board.own(job_id)
        view = job.view(board.clock()) if job else await run_in_threadpool(board.view, job_id)
        if view is None:
            return
        if view["state"] in ENDED:
            yield _event("end", view)
            return
        version = float(job.version if job else view.get("updated") or 0)
        now = loop.time()
        if version != sent and now - last >= MIN_GAP_S:
            yield _event("progress", view)
            sent, last = version, now
        elif now - last >= PING_S:
            yield ": still running\n\n"  # a comment: a gone client shows on the write
            last = now
        if board.stopping():
            return
        await asyncio.sleep(MIN_GAP_S if job else FOREIGN_POLL_S)


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {JobView.model_validate(data).model_dump_json()}\n\n"


class UploadLimit:
    """The request-body cap (`BodyLimit`), wider for uploads: `uploads` bytes for a POST to
    a path ending in /uploads from a key that may write (`may_upload`, told the request's
    Authorization header), `limit` for everything else. The form is read before the routes'
    key checks run, so without the key check anyone could make the server spool the wide
    cap to disk before its 401."""

    def __init__(self, app: ASGIApp, limit: int, uploads: int,
                 may_upload: Callable[[str | None], bool]) -> None:
        self.plain = BodyLimit(app, limit)
        self.uploads = BodyLimit(app, uploads, "upload fewer or smaller files per request "
                                 "(--max-files, --max-file-mb)")
        self.may_upload = may_upload

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        wide = (scope["type"] == "http" and scope.get("method") == "POST"
                and str(scope.get("path", "")).rstrip("/").endswith("/uploads"))
        if wide:
            headers = dict(scope.get("headers") or [])
            auth = headers.get(b"authorization")
            wide = await run_in_threadpool(  # a key look-up may read the database
                self.may_upload, None if auth is None else auth.decode("latin-1"))
        await (self.uploads if wide else self.plain)(scope, receive, send)


def truthful_forms(components: dict[str, Any], has_llm: bool) -> None:
    """Upload forms as the server takes them: `llm` offered only when the server has an LLM
    (a request the schema allows is one the server takes), and each file said to be any
    bytes in both dialects (`format: binary` beside OpenAPI 3.1's `contentMediaType`), so
    a client or tester does not take a file whose bytes spell a number for a number."""
    for name, model in components.items():
        if not name.startswith("Body_"):
            continue
        properties = model.get("properties", {})
        option = properties.get("extractor", {})
        if not has_llm and "llm" in option.get("enum", []):
            option["enum"] = [e for e in option["enum"] if e != "llm"]
        for field in properties.values():
            part = field.get("items", field)
            if part.get("contentMediaType") == "application/octet-stream":
                part.setdefault("format", "binary")
