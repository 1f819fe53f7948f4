"""`hopgraph mcp --http`: the API keys of `hopgraph serve` in front of the MCP endpoint.

The same keys count: `HOPGRAPH_API_KEY` (an admin key of this process) and the keys kept
in the database (`hopgraph keys create`), read through the REST server's `KeyRing` (so keys
made or revoked elsewhere count within seconds). When there is a key at all, every request
needs `Authorization: Bearer <key>`: none or an unknown one is a 401; a key that may not use
the graph served here (`ApiKey.sees`) or may not read is a 403. With no key anywhere the
endpoint is open, and `hopgraph mcp` binds beyond loopback so only when told `--no-auth`.

A refusal is a JSON-RPC error body (what an MCP client reads and shows: the SDK's client
raises it as the error of the call it was making) with the HTTP status and, on a 401,
`WWW-Authenticate: Bearer`. Pure ASGI, so no web framework is imported here; key lookups
(a database read now and then) run on a worker thread, off the event loop.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from functools import partial
from typing import Any

import anyio.to_thread

from hopgraph.serve.auth import KeyRing
from hopgraph.store.keys import KeyStore

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_INVALID_REQUEST = -32600  # JSON-RPC's code for a request that will not be served
ROLE = "read"  # every tool only reads


class Refusal(Exception):
    """Why a request is not served: its HTTP status, what failed, and what to do."""

    def __init__(self, status: int, what: str, fix: str) -> None:
        super().__init__(f"{what}; {fix}")
        self.status = status


def check_key(ring: KeyRing, graph: str, authorization: str | None) -> None:
    """Raise a `Refusal` unless the Authorization header may read `graph` (anything goes
    when no key is configured)."""
    if not ring.required():
        return
    scheme, _, secret = (authorization or "").partition(" ")
    key = ring.find(secret.strip()) if scheme.lower() == "bearer" and secret.strip() else None
    if key is None:
        raise Refusal(401, "missing or wrong API key",
                      "send the header 'Authorization: Bearer <key>' (`hopgraph keys create` "
                      "makes one; HOPGRAPH_API_KEY is the server's own)")
    if not key.sees(graph) or not key.allows(ROLE):
        raise Refusal(403, f"key {key.id} may not read the graph this server serves",
                      "use a key made for it (`hopgraph keys create --role read --graph "
                      "NAME`) or an admin key")


class KeyCheck:
    """ASGI middleware: every HTTP request passes `check_key` first."""

    def __init__(self, app: ASGIApp, ring: KeyRing, graph: str) -> None:
        self.app = app
        self.ring = ring
        self.graph = graph

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starts there
            await self.app(scope, receive, send)
            return
        authorization = _header(scope, b"authorization")
        try:
            await anyio.to_thread.run_sync(check_key, self.ring, self.graph, authorization)
        except Refusal as refusal:
            await _refuse(send, refusal)
            return
        await self.app(scope, receive, send)


def key_check(keys: KeyStore, env_key: str | None, graph: str) -> Callable[..., KeyCheck]:
    """The guard of `integrations.mcp.GraphServer`: `KeyCheck` over the database's keys
    (`serve.service.database_keys`) and `env_key`."""
    return partial(KeyCheck, ring=KeyRing(keys, env_key), graph=graph)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _refuse(send: Send, refusal: Refusal) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None,
                       "error": {"code": _INVALID_REQUEST, "message": str(refusal)}},
                      ensure_ascii=False).encode("utf-8")
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if refusal.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
