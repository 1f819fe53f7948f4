"""API keys kept in the database, so every server of it (every replica) knows them.

One collection per database (`hopgraph_api_keys`), one row per key: its id is the SHA-256
of the key (the key itself is shown once, when made, and stored nowhere), its value the
role (`read`, `write` or `admin`), the graphs it may use (an admin key: all), a label and
when it was made. A key's public id is the first 12 hex digits of that hash: what `keys
list` shows and `keys revoke` takes.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from hopgraph.errors import UsageError
from hopgraph.store import schema
from hopgraph.store.collections import Collections

COLLECTION = "hopgraph_api_keys"
ROLES = ("read", "write", "admin")  # each allows what the ones before it allow
ALL = "*"
LABEL_MAX = 100  # characters of a label
# A label goes into the server's access log: no control characters nor line separators.
LABEL_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$"
_PUBLIC = 12


def digest(secret: str) -> str:
    """The SHA-256 of a key, as stored."""
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class ApiKey:
    """What a key may do (never the key itself)."""

    id: str  # public: the first digits of its hash
    role: str
    graphs: tuple[str, ...]  # ("*",) for every graph
    label: str = ""
    created: str = ""

    def allows(self, role: str) -> bool:
        """Whether this key may do what `role` may."""
        return ROLES.index(self.role) >= ROLES.index(role)

    def sees(self, graph: str) -> bool:
        """Whether this key may use `graph` at all."""
        return ALL in self.graphs or graph in self.graphs

    def as_dict(self) -> dict[str, object]:
        """The key's record, as `keys list --json` prints it."""
        return {"id": self.id, "role": self.role, "graphs": list(self.graphs),
                "label": self.label, "created": self.created}


class KeyStore:
    """The keys of the database `collections` is connected to."""

    def __init__(self, collections: Collections) -> None:
        self.rows = collections
        self._ready = False

    def _ensure(self) -> bool:
        """Whether the keys collection exists (made when `create` needs it)."""
        if not self._ready:
            self._ready = self.rows.has_collection(COLLECTION)
        return self._ready

    def create(self, role: str, graphs: list[str], label: str = "") -> tuple[str, ApiKey]:
        """A new key (returned once: it is not stored) and its record."""
        if role not in ROLES:
            raise UsageError(f"unknown role {role!r}", fix=f"choose one of {', '.join(ROLES)}")
        if role != "admin" and not graphs:
            raise UsageError(f"a {role} key needs the graphs it may use",
                             fix="--graph NAME (repeatable)")
        if len(label) > LABEL_MAX or not re.fullmatch(LABEL_PATTERN, label):
            raise UsageError(f"a key's label is text of at most {LABEL_MAX} characters "
                             "without control characters (it goes into the access log)")
        if not self._ensure():
            self.rows.create_collection(COLLECTION, schema.create_keys)
            self._ready = True
        secret = "hg_" + secrets.token_urlsafe(32)
        hashed = digest(secret)
        key = ApiKey(hashed[:_PUBLIC], role, (ALL,) if role == "admin" else tuple(graphs),
                     label, datetime.now(UTC).isoformat(timespec="seconds"))
        value = {k: v for k, v in key.as_dict().items() if k != "id"}
        self.rows.upsert(COLLECTION, [{"id": hashed, "value": json.dumps(value),
                                       "vector": [0.0, 1.0]}])
        return secret, key

    def all(self) -> dict[str, ApiKey]:
        """Every key, by its full hash (read strong: a key made elsewhere is seen)."""
        if not self._ensure():
            return {}
        rows = self.rows.where(COLLECTION, 'id != ""', ["id", "value"])
        return {row["id"]: _record(row["id"], row["value"]) for row in rows}

    def revoke(self, ident: str) -> list[ApiKey]:
        """Delete the keys whose public id or label is `ident`; the keys deleted."""
        found = {h: k for h, k in self.all().items()
                 if ident and (k.id == ident or k.label == ident)}
        if found:
            self.rows.delete(COLLECTION, list(found))
        return list(found.values())


def _record(hashed: str, value: str) -> ApiKey:
    data = json.loads(value)
    return ApiKey(hashed[:_PUBLIC], data["role"], tuple(data.get("graphs", ())),
                  data.get("label", ""), data.get("created", ""))
