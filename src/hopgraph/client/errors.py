"""What the client raises: the server's error body as a typed error, and failures to get a reply.

Each error the server can send (`{"error": {"code", "message", "fix"}}`, docs/server.md) has
a class here. Each derives from `ApiError` (status, code, fix) and from the hopgraph error the
same failure raises in process, so code written against `GraphRAG` keeps working against a
server: a bad filter is a `UsageError` either way, a failing LLM an `LLMError`, Milvus down a
`StoreError`. The mapping goes by `code` (the server's stable word), then by status.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from hopgraph.errors import (
    EmbedderError,
    HopgraphError,
    InputError,
    LLMError,
    StoreError,
    UsageError,
)

_SNIPPET_CHARS = 200  # of a reply that is not an error body, quoted in the message


class ApiError(HopgraphError):
    """The server answered with an error: `status` (HTTP), `code` (the body's stable word),
    `message` (what was wrong) and `fix` (what to do, or None); `where` is the request."""

    def __init__(self, message: str, *, status: int, code: str, where: str | None = None,
                 fix: str | None = None, retry_after: float | None = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        # Seconds the server asked to wait before trying again (its Retry-After header: a
        # busy write lock's 503, a full job queue's 429), or None.
        self.retry_after = retry_after
        super().__init__(message, where=where, fix=fix)


class BadRequest(ApiError, InputError):
    """400: input the server cannot read (`bad_input`), or a Host header it does not serve
    (`host_not_allowed`)."""


class Unauthorized(ApiError, UsageError):
    """401: no API key, or one the server does not know."""


class Forbidden(ApiError, UsageError):
    """403: the key's role is too low (a read key writing)."""


class NotFound(ApiError, UsageError):
    """404: no such graph (or one the key may not use), entity, document or path."""


class MethodNotAllowed(ApiError, UsageError):
    """405: the path does not take this method (a client and server of different versions)."""


class Conflict(ApiError, UsageError):
    """409: the graph exists already, or is the server's default graph (not droppable)."""


class TooLarge(ApiError, UsageError):
    """413: the body is over the server's `--max-body-mb`."""


class InvalidRequest(ApiError, UsageError):
    """422: a request hopgraph cannot use (a bad filter, method, top_k...); the message names
    the field, e.g. `where.year.$regex`."""


class ServerError(ApiError, RuntimeError):
    """500: a bug in the server (its log has the traceback)."""


class UpstreamFailed(ApiError, LLMError, EmbedderError):
    """502: the LLM or the embedding service failed (the server cannot say which apart)."""


class TooManyRequests(ApiError, StoreError):
    """429: the server's upload queue is full (`too_many_requests`); `retry_after` says when
    to try again."""


class Unavailable(ApiError, StoreError):
    """503: Milvus could not do what was asked."""


class ConnectionFailed(HopgraphError, ConnectionError):
    """No whole reply: the server could not be reached, did not answer in time, or cut the
    connection (an answer stream ended before its last event)."""


_BY_CODE: dict[str, tuple[type[ApiError], int]] = {
    "bad_input": (BadRequest, 400), "host_not_allowed": (BadRequest, 400),
    "unauthorized": (Unauthorized, 401), "forbidden": (Forbidden, 403),
    "not_found": (NotFound, 404), "method_not_allowed": (MethodNotAllowed, 405),
    "conflict": (Conflict, 409), "too_large": (TooLarge, 413),
    "invalid_request": (InvalidRequest, 422), "too_many_requests": (TooManyRequests, 429),
    "internal": (ServerError, 500),
    "upstream_failed": (UpstreamFailed, 502), "unavailable": (Unavailable, 503),
}
_BY_STATUS = {status: (kind, code) for code, (kind, status) in _BY_CODE.items()
              if code != "host_not_allowed"}


def api_error(detail: Any, status: int | None, where: str) -> ApiError:
    """The error for an error body's `error` object (`detail`); `status` None for an error
    event of an answer stream (the code says which)."""
    found = detail if isinstance(detail, dict) else {}
    code = str(found.get("code") or "")
    kind, usual = _BY_CODE.get(code, (None, None))
    if kind is None:
        kind, named = _BY_STATUS.get(status or 0, (ApiError, "error"))
        code = code or named
        if kind is ApiError and status is not None and status >= 500:
            kind = ServerError
    fix = found.get("fix")
    return kind(str(found.get("message") or "the server gave no message"),
                status=status or usual or 0, code=code, where=where,
                fix=None if fix is None else str(fix))


def error_from_reply(status: int, content: bytes, where: str,
                     retry_after: str | None = None) -> ApiError:
    """The error for an HTTP error reply: its error body, or (a proxy's page, another
    server) the status and the start of the text; `retry_after`: its Retry-After header."""
    error = _error_of(status, content, where)
    if retry_after is not None and retry_after.strip().replace(".", "", 1).isdigit():
        error.retry_after = float(retry_after)  # (an HTTP date, rare from a proxy: left out)
    return error


def _error_of(status: int, content: bytes, where: str) -> ApiError:
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return api_error(body["error"], status, where)
    text = content.decode("utf-8", "replace").strip()
    snippet = text[:_SNIPPET_CHARS] + ("..." if len(text) > _SNIPPET_CHARS else "")
    return api_error({"message": f"HTTP {status}" + (f": {snippet}" if snippet else ""),
                      "fix": "check that the base URL points at `hopgraph serve`"},
                     status, where)


def unexpected_reply(where: str, problem: str) -> ApiError:
    """A success reply this client cannot read (not JSON, or not the shape it expects)."""
    return ApiError(f"unexpected reply: {problem}", status=200, code="unexpected_reply",
                    where=where, fix="check that the base URL points at `hopgraph serve` "
                    "and that client and server are the same hopgraph version")


def connection_failed(exc: httpx.TransportError, where: str, timeout: float | None
                      ) -> ConnectionFailed:
    """The error for a transport failure of the request `where`."""
    name = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
        return ConnectionFailed(f"no reply within {timeout} s ({name})", where=where,
                                fix="pass a larger timeout=, or see the server's log")
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return ConnectionFailed(f"cannot connect to the server ({name}: {exc})", where=where,
                                fix="start it (`hopgraph serve`) or check the base URL")
    return ConnectionFailed(f"the connection failed ({name}: {exc})", where=where,
                            fix="retry; if it keeps failing, see the server's log")
