"""Who may do what: API keys with a role and graphs (`store.keys`, kept in the database) and
`HOPGRAPH_API_KEY`, an admin key of this server's own.

A route needs a role: `read` (query, ask, entities, documents listed, stats, graphs),
`write` (documents added or deleted, uploads and their jobs) or `admin` (graphs created or
dropped, metrics). A request without a known key is a 401; with a key that may not use the
route's graph, a 404 (what a graph that does not exist gets: a key learns nothing of graphs
it may not use); with a key whose role is too low, a 403. With no key configured at all the
server is open (`hopgraph serve` refuses to bind beyond loopback so, unless told
`--no-auth`).

Keys are looked up by their SHA-256 (a timing difference tells an attacker nothing of a
key's text); the env key is compared in constant time. Keys made or revoked by another
process count within `REREAD_S` seconds (a key not found forces a re-read, once a second
at most).
"""

from __future__ import annotations

import hmac
import threading
import time
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from hopgraph.serve.errors import HTTPError, clip
from hopgraph.store.keys import ApiKey, KeyStore, digest

REREAD_S = 5.0
_MISS_REREAD_S = 1.0
ENV_ADMIN = ApiKey("env", "admin", ("*",), "HOPGRAPH_API_KEY")
Bearer = Annotated[HTTPAuthorizationCredentials | None,
                   Depends(HTTPBearer(auto_error=False, description="an API key"))]


class KeyRing:
    """The keys a server accepts, re-read from the database now and then."""

    def __init__(self, keys: KeyStore | None, env_key: str | None) -> None:
        self.keys = keys
        self.env_key = env_key
        self._known: dict[str, ApiKey] = {}
        self._read_at = -1e9
        self._lock = threading.Lock()

    def _reread(self, older_than: float) -> None:
        with self._lock:
            if self.keys is not None and time.monotonic() - self._read_at >= older_than:
                self._known = self.keys.all()
                self._read_at = time.monotonic()

    def required(self) -> bool:
        """Whether requests need a key (one is configured, here or in the database)."""
        self._reread(REREAD_S)
        return self.env_key is not None or bool(self._known)

    def find(self, secret: str) -> ApiKey | None:
        """The key `secret` is, if any."""
        if self.env_key is not None and hmac.compare_digest(
                secret.encode("utf-8", "surrogateescape"), self.env_key.encode()):
            return ENV_ADMIN
        hashed = digest(secret)
        self._reread(REREAD_S)
        if hashed not in self._known:
            self._reread(_MISS_REREAD_S)
        return self._known.get(hashed)


def may_write(ring: KeyRing, authorization: str | None) -> bool:
    """Whether an `Authorization` header carries a key that may write (any request may,
    with no keys configured): read before a request's body is."""
    if not ring.required():
        return True
    scheme, _, secret = (authorization or "").partition(" ")
    key = ring.find(secret.strip()) if scheme.lower() == "bearer" and secret else None
    return key is not None and key.allows("write")


def authenticator(ring: KeyRing) -> Any:
    """The dependency every API route has: a 401 without a known key (when keys are
    needed); the key used is left in `request.state.key` (the access log names its
    label)."""

    def authenticate(request: Request, credentials: Bearer) -> None:
        if not ring.required():
            return
        key = ring.find(credentials.credentials) if credentials is not None else None
        if key is None:
            raise HTTPError(401, "missing or wrong API key",
                            "send the header 'Authorization: Bearer <key>' (`hopgraph keys "
                            "create` makes one)", headers={"WWW-Authenticate": "Bearer"})
        request.state.key = key

    return authenticate


def guard(role: str, default_graph: str | None = None) -> Any:
    """The dependency of a route that needs `role`: with `default_graph`, the route is of
    one graph (its `{graph}` path parameter, else `default_graph`), and a key that may not
    use it gets the 404 of a graph that does not exist; then a role too low is a 403."""

    async def check(request: Request) -> None:  # no I/O: on the event loop
        key: ApiKey | None = getattr(request.state, "key", None)
        if key is None:  # no keys needed
            return
        if default_graph is not None:
            graph = str(request.path_params.get("graph", default_graph))
            if not key.sees(graph):
                raise missing(graph)
        if not key.allows(role):
            raise HTTPError(403, f"a {key.role} key may not do this (it needs {role})",
                            "use a key with that role")

    return check


def missing(name: str) -> HTTPError:
    """The 404 of a graph that does not exist, or that the key may not use (the same
    answer: a key learns nothing of graphs it may not use)."""
    return HTTPError(404, f"no graph {clip(name, 64)!r}",
                     "GET /graphs lists the graphs your key may use")
