"""Pure ASGI middleware in front of the API: the request-body cap and the Host check (both
answer with the one error body, `serve.errors`), and HEAD answered as GET is."""

from __future__ import annotations

import contextlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hopgraph.serve.errors import clip, error_response


class _TooLarge(Exception):
    pass


class BodyLimit:
    """413 for a request body over `limit` bytes, declared or streamed (pure ASGI, so a
    chunked upload is cut off as it arrives, not read into memory first)."""

    def __init__(self, app: ASGIApp, limit: int,
                 fix: str = "send less per request, or raise --max-body-mb") -> None:
        self.app = app
        self.limit = limit
        self.fix = fix

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
        reply = error_response(413, f"request body over {self.limit} bytes", self.fix)
        await send({"type": "http.response.start", "status": 413,
                    "headers": reply.raw_headers})
        await send({"type": "http.response.body", "body": reply.body})


class HostCheck:
    """400 for a Host header that names none of the `allowed` hosts ("*" allows any,
    "*.example.com" its subdomains): a page on another site that rebinds its DNS name to
    this address cannot reach the API through the visitor's browser."""

    def __init__(self, app: ASGIApp, allowed: list[str]) -> None:
        self.app = app
        self.allowed = [host.lower() for host in allowed]

    def accepts(self, host: str) -> bool:
        """Whether a Host header value (with or without a port) is allowed."""
        name = host.lower()
        name = name[1:name.index("]")] if name.startswith("[") and "]" in name \
            else name.rsplit(":", 1)[0] if name.count(":") == 1 else name
        return any(pattern == "*" or name == pattern.strip("[]")
                   or (pattern.startswith("*.") and name.endswith(pattern[1:]))
                   for pattern in self.allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if not self.accepts(host):
                reply = error_response(400, f"host {clip(host, 80)!r} is not served here",
                                       "add it with --allowed-hosts (HOPGRAPH_ALLOWED_HOSTS)",
                                       code="host_not_allowed")
                await reply(scope, receive, send)
                return
        await self.app(scope, receive, send)


class HeadAsGet:
    """HEAD on any path answered as GET is there, headers only (RFC 9110: a GET route takes
    HEAD; load balancers health-check with it). The app sees a GET in a copy of the scope;
    the server keeps the HEAD, and so sends no body. A streamed reply (job events) is told
    its client has gone once its headers are sent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {})  # shared with the copy: what the app notes is seen
        as_get = {**scope, "method": "GET"}
        answered = False

        async def headers_only(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start" and not answered:
                answered = True
                await send(message)
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        async def gone_once_answered() -> Message:
            return {"type": "http.disconnect"} if answered else await receive()

        try:
            await self.app(as_get, gone_once_answered, headers_only)
        finally:
            if "route" in as_get:  # for the access log, which reads the scope it passed on
                scope["route"] = as_get["route"]
