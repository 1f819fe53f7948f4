"""The key routes: `GET /keys`, `POST /keys` and `DELETE /keys/{ident}` manage the API keys of
the server's database (`store.keys`) through the server itself, so keys can be made and
revoked while it holds a Milvus Lite file. They need an admin key once the server has any
key; an open server (no key at all) lets its first key be made through them. A key made or
revoked here counts in this server at once (the ring is read again).
"""

import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from hopgraph.serve.auth import KeyRing, guard
from hopgraph.serve.errors import HTTPError, clip, described
from hopgraph.serve.models import GraphName
from hopgraph.store.keys import LABEL_MAX, LABEL_PATTERN, ApiKey

log = logging.getLogger(__name__)

MAX_GRAPHS = 100  # graphs one key names
Label = Annotated[str, Field(max_length=LABEL_MAX, pattern=LABEL_PATTERN, description=(
    "a name for the key, in `GET /keys` and the access log (no control characters)"))]
Ident = Annotated[str, Path(min_length=1, max_length=LABEL_MAX,
                            description="a key's id (GET /keys) or label")]


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class AdminKeyRequest(_Body):
    """An admin key: everything, on every graph (so it names none)."""

    role: Literal["admin"]
    label: Label = ""


class ScopedKeyRequest(_Body):
    """A read or write key, for the graphs it names."""

    role: Literal["read", "write"]
    graphs: list[GraphName] = Field(min_length=1, max_length=MAX_GRAPHS,
                                    description="the graphs the key may use")
    label: Label = ""


KeyRequest = Annotated[AdminKeyRequest | ScopedKeyRequest, Field(discriminator="role")]


class KeyView(BaseModel):
    """A key as it is kept: never the key itself, which is shown once, when made."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="its public id: the first 12 hex digits of its SHA-256")
    role: Literal["read", "write", "admin"]
    graphs: list[str] = Field(description='the graphs it may use; ["*"]: all (admin)')
    label: str
    created: str = Field(description="when it was made (ISO 8601, UTC)")


class KeyMade(KeyView):
    """A new key and its record."""

    key: str = Field(description="the key: shown this once, stored only as a hash")


class KeysResponse(BaseModel):
    """The keys of the database."""

    keys: list[KeyView]


class KeysRevoked(BaseModel):
    """The keys a revocation deleted (several when they share the label)."""

    revoked: list[KeyView]


def key_routes(api: APIRouter, ring: KeyRing) -> None:
    """The key routes on `api` (admin, when the server has keys)."""
    store = ring.keys
    if store is None:
        raise ValueError("the key routes need the database's keys")
    options: dict[str, Any] = {"tags": ["keys"], "dependencies": [Depends(guard("admin"))]}

    @api.get("/keys", response_model=KeysResponse, responses=described(403), **options)
    def keys() -> dict[str, Any]:
        """The database's keys, oldest first: ids, roles, graphs, labels (admin)."""
        found = sorted(store.all().values(), key=lambda key: (key.created, key.id))
        return {"keys": [key.as_dict() for key in found]}

    @api.post("/keys", response_model=KeyMade, status_code=201, responses=described(403),
              **options)
    def create_key(body: KeyRequest, request: Request) -> dict[str, Any]:
        """Make a key (admin; on a server with no key yet, the first one). The key is in the
        reply, this once; it counts at once."""
        graphs = list(dict.fromkeys(getattr(body, "graphs", [])))
        secret, key = store.create(body.role, graphs, body.label)
        ring.refresh()
        log.info("key %s (%s) made by %s", key.id, key.role, _who(request))
        return {"key": secret, **key.as_dict()}

    @api.delete("/keys/{ident:path}", response_model=KeysRevoked, responses=described(403, 404),
                **options)
    def revoke_key(ident: Ident, request: Request) -> dict[str, Any]:
        """Revoke the keys whose id or label is `ident` (admin); they stop working here at
        once."""
        gone = store.revoke(ident)
        if not gone:
            raise HTTPError(404, f"no key has the id or label {clip(ident, LABEL_MAX)!r}",
                            "GET /keys lists them")
        ring.refresh()
        log.info("keys %s revoked by %s", ", ".join(k.id for k in gone), _who(request))
        return {"revoked": [key.as_dict() for key in gone]}


def _who(request: Request) -> str:
    key: ApiKey | None = getattr(request.state, "key", None)
    return "an open server's client" if key is None else key.label or key.id
