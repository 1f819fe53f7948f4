"""The typed results of the client: the server's JSON read back into hopgraph's own records
(`PassageHit`, `RelationHit`, `Retrieval`), so a result from a server and one from `GraphRAG`
are the same types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from hopgraph.records import PassageHit, RelationHit, Retrieval


@dataclass
class Comparison:
    """`POST /query`'s reply: graph passages beside naive ones (best first), the evidence
    behind the graph side, per-stage timings, the subgraph to draw and whether the answer
    came from the server's cache. Its fields are the reply's keys (docs/server.md);
    `retrieval` and `naive_retrieval` give each side as a `hopgraph.Retrieval`, as
    `GraphRAG.compare` returns them."""

    question: str
    method: str
    graph: list[PassageHit]
    naive: list[PassageHit]
    entities: list[dict[str, Any]]
    relations: list[RelationHit]
    bridges: list[dict[str, Any]]
    timings_ms: dict[str, float]
    naive_timings_ms: dict[str, float]
    notes: list[str]
    llm: dict[str, Any] | None
    subgraph: dict[str, Any]
    cached: bool

    @property
    def retrieval(self) -> Retrieval:
        """The graph side, as `GraphRAG.retrieve` gives it (a new object on each access)."""
        return Retrieval(self.question, self.method, list(self.graph),
                         entities=list(self.entities), relations=list(self.relations),
                         timings_ms=dict(self.timings_ms), notes=list(self.notes),
                         llm=self.llm, bridges=list(self.bridges))

    @property
    def naive_retrieval(self) -> Retrieval:
        """The naive side (dense passage search), as the second result of
        `GraphRAG.compare` (its notes are not sent)."""
        return Retrieval(self.question, "naive", list(self.naive),
                         timings_ms=dict(self.naive_timings_ms))


@dataclass
class PassageHitWithMetadata(PassageHit):
    """A `PassageHit` with the passage's stored metadata (`include_metadata=True`)."""

    metadata: dict[str, Any] = field(default_factory=dict)


class _HitFields(TypedDict):
    """A `PassageHit`'s fields, as `passage_hit` reads them from a reply."""

    id: str
    text: str
    score: float
    relations: list[str]
    via: list[str]
    doc_id: str | None
    source: dict[str, Any] | None


def passage_hit(item: dict[str, Any]) -> PassageHit:
    """A passage of a reply (`id`, `text`, `score`, `relations`, `via`, `doc_id`,
    `source`): a `PassageHit`, equal to `GraphRAG`'s for the same passage, unless the reply
    carries `metadata`. A server from before sources gives none (`source` None)."""
    source = item.get("source")
    fields: _HitFields = {
        "id": str(item["id"]), "text": str(item["text"]), "score": float(item["score"]),
        "relations": [str(r) for r in item.get("relations", [])],
        "via": [str(v) for v in item.get("via", [])], "doc_id": item.get("doc_id"),
        "source": dict(source) if isinstance(source, dict) else None}
    if item.get("metadata") is not None:
        return PassageHitWithMetadata(**fields, metadata=dict(item["metadata"]))
    return PassageHit(**fields)


def passage_hits(items: list[dict[str, Any]]) -> list[PassageHit]:
    """The passages of a reply, in its order."""
    return [passage_hit(item) for item in items]


def comparison(body: dict[str, Any]) -> Comparison:
    """A `POST /query` reply as a `Comparison` (a missing key is a KeyError: not a reply of
    this API)."""
    return Comparison(
        question=str(body["question"]), method=str(body["method"]),
        graph=passage_hits(body["graph"]), naive=passage_hits(body["naive"]),
        entities=list(body["entities"]),
        relations=[RelationHit(str(r["id"]), str(r["text"]), float(r["score"]))
                   for r in body["relations"]],
        bridges=list(body.get("bridges", [])), timings_ms=dict(body["timings_ms"]),
        naive_timings_ms=dict(body["naive_timings_ms"]), notes=list(body["notes"]),
        llm=body.get("llm"), subgraph=dict(body.get("subgraph") or {}),
        cached=bool(body.get("cached", False)))


def document_counts(body: dict[str, Any]) -> dict[str, int]:
    """`GET /documents` as `GraphRAG.documents()` gives it: passages by document id."""
    return {str(doc["doc_id"]): int(doc["passages"]) for doc in body["documents"]}


def graph_names(body: dict[str, Any]) -> list[str]:
    """The graph names of `GET /graphs`."""
    return [str(name) for name in body["graphs"]]


def default_graph(body: dict[str, Any]) -> str | None:
    """The server's default graph, from `GET /graphs` (None: the key may not use it)."""
    return None if body["default"] is None else str(body["default"])


def key_records(body: dict[str, Any], field: str) -> list[dict[str, Any]]:
    """The key records under `field` of a reply (`keys` of `GET /keys`, `revoked` of
    `DELETE /keys/...`)."""
    return [json_object(record) for record in body[field]]


def json_object(body: Any) -> dict[str, Any]:
    """A reply that must be a JSON object, given back as it is."""
    if not isinstance(body, dict):
        raise TypeError(f"expected a JSON object, got {type(body).__name__}")
    return body


def nothing(body: Any) -> None:
    """A reply whose content says only that it worked (the status already did)."""
    json_object(body)
