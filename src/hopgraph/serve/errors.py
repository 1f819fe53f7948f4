"""One error body for every error the API sends, and the handlers that make it.

`{"error": {"code": ..., "message": ..., "fix": ...}}`: `code` is a stable word a client can
branch on, `message` says what was wrong (naming the field, never repeating more than
ECHO_CHARS of what was sent), `fix` what to do, when there is something. Every route lists
the statuses it can answer with this body (`responses`), so the OpenAPI document tells the
truth about failures too.

Bodies are encoded here, not by the framework: a lone surrogate or a NaN that came in can
never make the error reply itself fail (it did: a 500 with a traceback).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Mount

from hopgraph.config import cache_dir
from hopgraph.errors import EmbedderError, HopgraphError, InputError, LLMError, UsageError

log = logging.getLogger(__name__)

ECHO_CHARS = 200  # of a request's own text that an error message may repeat
_MESSAGE_CHARS = 1000

_CODES = {400: "bad_input", 401: "unauthorized", 403: "forbidden", 404: "not_found",
          405: "method_not_allowed", 409: "conflict", 413: "too_large", 422: "invalid_request",
          429: "too_many_requests", 500: "internal", 502: "upstream_failed", 503: "unavailable"}


class ErrorDetail(BaseModel):
    """What went wrong."""

    code: str
    message: str
    fix: str | None = None


class ErrorBody(BaseModel):
    """The body of every error reply."""

    error: ErrorDetail


def described(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route that can answer with these error statuses."""
    return {status: {"model": ErrorBody, "description": _CODES[status].replace("_", " ")}
            for status in statuses}


def clip(value: object, limit: int = ECHO_CHARS) -> str:
    """`value` as text safe to send back: at most `limit` characters, lone surrogates and
    other unencodable characters written as escapes."""
    text = value if isinstance(value, str) else repr(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def error_response(status: int, message: str, fix: str | None = None,
                   code: str | None = None, headers: Mapping[str, str] | None = None
                   ) -> Response:
    """The error body as a reply."""
    body = {"error": {"code": code or _CODES.get(status, "error"),
                      "message": clip(message, _MESSAGE_CHARS),
                      "fix": None if fix is None else clip(fix, _MESSAGE_CHARS)}}
    return Response(json.dumps(body, ensure_ascii=False), status_code=status,
                    media_type="application/json", headers=dict(headers or {}))


def validation_message(errors: Iterable[dict[str, Any]]) -> str:
    """Each schema error as `where: what`, without the input it was about."""
    parts = []
    for error in errors:
        where = ".".join(clip(part, 40) for part in error.get("loc", ()))
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "the request does not match the schema"


def hiding(uri: str) -> Callable[[str], str]:
    """A function writing the server's own places in a text as words: the database (its
    path or server URI), the database's folder and the cache. A failure's message may go to
    any key; where the server keeps its files is for admins (and its log)."""
    places = {str(cache_dir()): "the server's cache"}
    if "://" in uri or Path(uri).expanduser().is_absolute():
        places[uri] = "the database"
    if "://" not in uri:
        db = Path(uri).expanduser().resolve()
        places[str(db)] = "the database"
        if len(db.parent.parts) > 1:  # never "/" itself
            places[str(db.parent)] = "the database's folder"
    ordered = sorted(places.items(), key=lambda item: -len(item[0]))  # the longest first

    def hide(text: str) -> str:
        for place, word in ordered:
            text = text.replace(place, word)
        return text

    return hide


class HTTPError(HTTPException):
    """An error a route raises, with its fix."""

    def __init__(self, status: int, message: str, fix: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status, message, headers=dict(headers) if headers else None)
        self.fix = fix


def install(app: FastAPI, hide: Callable[[str], str] = str) -> None:
    """The handlers that turn every failure into the error body; a hopgraph error's
    message goes through `hide` (`hiding`) unless the key is an admin's (or none is
    needed)."""
    statuses = ((UsageError, 422), (InputError, 400), (LLMError, 502), (EmbedderError, 502),
                (HopgraphError, 503))

    @app.exception_handler(HopgraphError)
    def hopgraph_error(request: Request, exc: HopgraphError) -> Response:
        status = next(code for kind, code in statuses if isinstance(exc, kind))
        key = getattr(request.state, "key", None)
        told = str(exc) if key is None or key.allows("admin") else hide(str(exc))
        return error_response(status, told)

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # every method of the path, not one route's
            headers["Allow"] = ", ".join(_methods(request))
        return error_response(exc.status_code, str(exc.detail), getattr(exc, "fix", None),
                              headers=headers)

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError) -> Response:
        return error_response(422, validation_message(exc.errors()),
                              "see the request's schema at /openapi.json")

    @app.exception_handler(Exception)
    def internal(request: Request, exc: Exception) -> Response:
        # Starlette may run this handler in a worker thread, outside the `except` block, so
        # the traceback is passed explicitly rather than read from sys.exc_info().
        log.error("unexpected error in %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "unexpected server error (logged by the server)")


_METHODS = ("DELETE", "GET", "PATCH", "POST", "PUT")


def _methods(request: Request) -> list[str]:
    """The methods the API's routes answer at the request's path (each route's own pattern:
    `{graph}` stops at a slash, `{name:path}` does not), HEAD wherever GET is
    (`guards.HeadAsGet`); static files are not the API's."""
    routes = [route for route in request.app.router.routes if not isinstance(route, Mount)]
    found = [method for method in _METHODS
             if any(route.matches({**request.scope, "method": method})[0] is Match.FULL
                    for route in routes)]
    if "GET" in found:
        found.insert(found.index("GET") + 1, "HEAD")
    return found or ["GET", "HEAD"]  # a static file
