"""The request and response bodies of the HTTP API (pydantic; they are the OpenAPI schema at
/docs). Size limits live here, so an oversized field is a 422 naming it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from hopgraph.retrieve import MAX_QUESTION_CHARS, METHODS

Method = Literal[METHODS]  # type: ignore[valid-type]
MAX_TOP_K = 100  # per request: a page shows a handful; the Python API allows more
MAX_ROWS = 10_000  # rows per POST /documents (send a large corpus in several requests)
MAX_ENTITIES = 20


class QueryRequest(BaseModel):
    """A retrieval: the question and how to run it."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    method: Method | None = Field(
        default=None, description="default: `llm` when the server has an LLM, else `default`")
    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K)
    degree: int = Field(default=1, ge=1, le=3)
    entities: list[str] | None = Field(default=None, max_length=MAX_ENTITIES,
                                       description="query entities instead of linking them")


class AskRequest(BaseModel):
    """An answer: the question, the retrieval method and how many passages to cite."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    method: Method | None = None
    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K)


class DocumentsRequest(BaseModel):
    """Rows to ingest, in the input file format (`passage`, `triplets`, `doc_id`, ...)."""

    rows: list[Any] = Field(max_length=MAX_ROWS)
    doc_id: str | None = Field(default=None, min_length=1, max_length=512,
                               description="the document of rows that name none")
    append: bool = Field(default=False,
                         description="keep stored passages of the documents (else replace)")


class Passage(BaseModel):
    """A retrieved passage."""

    id: str
    text: str
    score: float
    relations: list[str] = []
    via: list[str] = []
    doc_id: str | None = None


class Node(BaseModel):
    """An entity or passage in a drawing."""

    id: str
    label: str
    kind: Literal["query", "bridge", "entity", "passage"]
    on_path: bool
    rank: int | None = None
    text: str | None = None


class Edge(BaseModel):
    """A relation (entity to entity), a name link (bridge to an entity named inside its
    name) or evidence (entity to passage) in a drawing."""

    id: str
    source: str
    target: str
    label: str
    kind: Literal["relation", "name", "evidence"]
    on_path: bool
    score: float | None = None


class Subgraph(BaseModel):
    """What to draw."""

    nodes: list[Node]
    edges: list[Edge]


class RelationOut(BaseModel):
    """A relation a retrieval used."""

    id: str
    text: str
    score: float


class QueryResponse(BaseModel):
    """Graph passages beside naive ones, the evidence, timings and the subgraph."""

    question: str
    method: str
    graph: list[Passage]
    naive: list[Passage]
    entities: list[dict[str, Any]]
    relations: list[RelationOut]
    bridges: list[dict[str, Any]]
    timings_ms: dict[str, float]
    naive_timings_ms: dict[str, float]
    notes: list[str]
    llm: dict[str, Any] | None
    subgraph: Subgraph
    cached: bool = Field(description="served from the answers computed since the last write "
                         "(its timings are those of the first computation)")


class EntityRef(BaseModel):
    """An entity named by id and name."""

    id: str
    name: str


class EntityRelation(BaseModel):
    """A relation of an entity."""

    id: str
    text: str
    subject: EntityRef
    object: EntityRef
    passages: int


class EntityResponse(BaseModel):
    """An entity, its relations (capped; `total_relations` counts all) and neighbours."""

    id: str
    name: str
    relations: list[EntityRelation]
    total_relations: int
    neighbours: list[EntityRef]
    subgraph: Subgraph
