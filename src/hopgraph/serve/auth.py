"""Who may do what: API keys with a role and graphs (`store.keys`, kept in the database) and
`HOPGRAPH_API_KEY`, an admin key of this server's own.

A route needs a role: `read` (query, ask, entities, documents listed, stats, graphs),
`write` (documents added or deleted, uploads and their jobs) or `admin` (graphs created or
dropped, metrics, keys). A request without a known key is a 401; with a key that may not use the
route's graph, a 404 (what a graph that does not exist gets: a key learns nothing of graphs
it may not use); with a key whose role is too low, a 403. With no key configured at all the
server is open (`hopgraph serve` refuses to bind beyond loopback so, unless told
`--no-auth`).

Keys are looked up by their SHA-256 (a timing difference tells an attacker nothing of a
key's text); the env key is compared in constant time. Keys made or revoked through this
server count at once; by another process, within `REREAD_S` seconds (a key not found
forces a re-read, once a second at most). A server on a Lite file also takes the token of
its runtime file (`serve.runtime`) as an admin key, from a client on this machine only.
"""

from __future__ import annotations

import hmac
import threading
import time
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from hopgraph.serve.errors import HTTPError, clip
from hopgraph.serve.runtime import from_this_machine
from hopgraph.store.keys import ApiKey, KeyStore, digest

REREAD_S = 5.0
_MISS_REREAD_S = 1.0
ENV_ADMIN = ApiKey("env", "admin", ("*",), "HOPGRAPH_API_KEY")
LOCAL_ADMIN = ApiKey("local", "admin", ("*",), "local-token")
Bearer = Annotated[HTTPAuthorizationCredentials | None,
                   Depends(HTTPBearer(auto_error=False, description="an API key"))]


class KeyRing:
    """The keys a server accepts, re-read from the database now and then."""

    def __init__(self, keys: KeyStore | None, env_key: str | None,
                 local_token: str | None = None, bound: str = "127.0.0.1") -> None:
        self.keys = keys
        self.env_key = env_key
        self.local_token = local_token  # the runtime file's (it makes no key required)
        self.bound = bound
        self._known: dict[str, ApiKey] = {}
        self._read_at = -1e9
        self._lock = threading.Lock()

    def _reread(self, older_than: float) -> None:
        with self._lock:
            if self.keys is not None and time.monotonic() - self._read_at >= older_than:
                self._known = self.keys.all()
                self._read_at = time.monotonic()

    def refresh(self) -> None:
        """Read the keys again now (one was made or revoked through this server)."""
        self._reread(0.0)

    def required(self) -> bool:
        """Whether requests need a key (one is configured, here or in the database)."""
        self._reread(REREAD_S)
        return self.env_key is not None or bool(self._known)

    def find(self, secret: str, peer: str | None = None) -> ApiKey | None:
        """The key `secret` is, if any; `peer` is the client's address (the local token
        counts only from this machine)."""
        given = secret.encode("utf-8", "surrogateescape")
        if self.env_key is not None and hmac.compare_digest(given, self.env_key.encode()):
            return ENV_ADMIN
        if (self.local_token is not None and hmac.compare_digest(
                given, self.local_token.encode()) and from_this_machine(peer, self.bound)):
            return LOCAL_ADMIN
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
        peer = request.client.host if request.client is not None else None
        key = ring.find(credentials.credentials, peer) if credentials is not None else None
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
            named = request.path_params.get("graph")
            if not key.sees(default_graph if named is None else str(named)):
                raise missing(named) if named is not None else not_yours()
        if not key.allows(role):
            raise HTTPError(403, f"a {key.role} key may not do this (it needs {role})",
                            "use a key with that role")

    return check


def not_yours() -> HTTPError:
    """The 404 of a route without a graph name for a key that may not use the server's
    default graph: it does not name that graph (the key may not learn it)."""
    return HTTPError(404, "no graph of this key is served at the paths without a graph name",
                     "use /graphs/NAME/...; GET /graphs lists the graphs your key may use")


def missing(name: str) -> HTTPError:
    """The 404 of a graph that does not exist, or that the key may not use (the same
    answer: a key learns nothing of graphs it may not use)."""
    return HTTPError(404, f"no graph {clip(name, 64)!r}",
                     "GET /graphs lists the graphs your key may use")
