"""The request and response bodies of the HTTP API (pydantic; they are the OpenAPI schema at
/docs). Size limits live here, so an oversized field is a 422 naming it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from hopgraph.answer import ANSWER_TOP_K
from hopgraph.retrieve import registry
from hopgraph.retrieve.query import DEFAULT_DEGREE, DEFAULT_TOP_K, MAX_QUESTION_CHARS, Query
from hopgraph.store import DOC_ID_MAX, NAME_MAX
from hopgraph.where import MAX_KEY, MAX_LIST, MAX_NUMBER, MAX_STRING

REQUEST_TOP_K = 100  # per request: a page shows a handful; the Python API allows more
MAX_DEGREE = 3  # per request: expansion beyond 3 hops reaches most of a real graph
MAX_ROWS = 10_000  # rows per POST /documents (send a large corpus in several requests)
MAX_ENTITIES = 20
# Text with something in it: a character that is not a space by Python's str.isspace (what
# the checks behind the API strip), spelled out so every regex dialect reads it alike.
SOME_TEXT = (r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f"
             r"\u3000]")
EntityName = Annotated[str, Field(min_length=1, max_length=NAME_MAX, pattern=SOME_TEXT)]


def _integral(value: Any) -> Any:
    """5.0 as 5: JSON Schema counts it an integer (strict pydantic would not)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


Whole = Annotated[int, BeforeValidator(_integral)]


def _method_enum(schema: dict[str, Any]) -> None:
    """The schema's enum of method names, read from the registry when the schema is made."""
    for option in schema.get("anyOf", [schema]):
        if option.get("type") == "string":
            option["enum"] = list(registry.names())


class _Request(BaseModel):
    """A request body: exactly its fields, each of exactly its type (no 0 for false, no
    "5" for 5: a request the schema does not allow is a 422)."""

    model_config = ConfigDict(strict=True, extra="forbid")


class _Question(_Request):
    """What every retrieval request has: the question and, optionally, the method."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, pattern=SOME_TEXT)
    method: str | None = Field(
        default=None, json_schema_extra=_method_enum,
        description="default: `llm` when the server has an LLM, else `default`")

    where: dict[str, Any] | None = Field(
        default=None, description="keep only the passages this filter matches (their "
        "metadata and `doc_id`; operators $eq $ne $in $nin $gt $gte $lt $lte $exists $and $or "
        "$not), e.g. {\"doc_id\": {\"$in\": [\"a.pdf\"]}, \"year\": {\"$gte\": 2020}}; "
        "the graph steps use only relations with a matching passage")

    @field_validator("method")
    @classmethod
    def _known_method(cls, method: str | None) -> str | None:
        if method is not None:
            registry.get(method)  # a UsageError (a ValueError: a 422) for an unknown name
        return method


class QueryRequest(_Question):
    """A retrieval: the question and how to run it."""

    include_metadata: bool = Field(default=False,
                                   description="give each passage its stored metadata too")

    top_k: Whole = Field(default=DEFAULT_TOP_K, ge=1, le=REQUEST_TOP_K)
    degree: Whole = Field(default=DEFAULT_DEGREE, ge=1, le=MAX_DEGREE)
    entities: list[EntityName] | None = Field(default=None, max_length=MAX_ENTITIES,
                                       description="query entities instead of linking them")

    def to_query(self, default_method: str) -> Query:
        """The `Query` this request asks for (`default_method` when it names none)."""
        # Query takes a filter's JSON form too (typed as what it keeps: Where.parse's result)
        return Query(self.question, self.method or default_method, self.top_k, self.degree,
                     tuple(self.entities) if self.entities else None,
                     self.where)  # type: ignore[arg-type]


class AskRequest(_Question):
    """An answer: the question, the retrieval method and how many passages to cite."""

    top_k: Whole = Field(default=ANSWER_TOP_K, ge=1, le=REQUEST_TOP_K,
                       description="passages the answer is written from")

    def to_query(self, default_method: str) -> Query:
        """The `Query` this request asks for (`default_method` when it names none)."""
        return Query(self.question, self.method or default_method, self.top_k,
                     where=self.where)  # type: ignore[arg-type]  # as in QueryRequest.to_query


class DocumentsRequest(_Request):
    """Rows to ingest, in the input file format (`passage`, `triplets`, `doc_id`, ...)."""

    rows: list[Any] = Field(max_length=MAX_ROWS)
    doc_id: str | None = Field(default=None, min_length=1, max_length=DOC_ID_MAX,
                               pattern=SOME_TEXT,
                               description="the document of rows that name none")
    append: bool = Field(default=False,
                         description="keep stored passages of the documents (else replace)")


GRAPH_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"  # a Milvus collection name starts so
GraphName = Annotated[str, Field(min_length=1, max_length=64, pattern=GRAPH_NAME,
                                 description="letters, digits and '_', not starting with a "
                                             "digit, at most 64")]


class GraphRequest(_Request):
    """A graph to make."""

    name: GraphName


def where_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of a filter (`hopgraph.where`), as OpenAPI components: every filter it
    allows is one the server takes (the checks in `Where.parse` are the same or wider)."""
    ref = {"$ref": "#/components/schemas/Where"}
    scalar = {"anyOf": [{"type": "string", "maxLength": MAX_STRING},
                        {"type": "number", "minimum": -MAX_NUMBER, "maximum": MAX_NUMBER},
                        {"type": "boolean"}]}
    ordered = {"anyOf": scalar["anyOf"][:2]}
    values = {"type": "array", "minItems": 1, "maxItems": MAX_LIST, "items": scalar}
    operators = {"type": "object", "minProperties": 1, "additionalProperties": False,
                 "properties": {"$eq": scalar, "$ne": scalar, "$in": values, "$nin": values,
                                "$gt": ordered, "$gte": ordered, "$lt": ordered,
                                "$lte": ordered, "$exists": {"type": "boolean"}}}
    # Narrower than Where.parse allows (it takes more parts and deeper nesting): a schema is
    # a promise of what is accepted, and a small one keeps generated tests quick.
    filters = {"type": "array", "minItems": 1, "maxItems": 8, "items": ref}
    return {"Where": {
        "type": "object", "minProperties": 1, "maxProperties": 8,
        "description": "a filter over passage metadata and `doc_id` (docs/filters.md): "
                       "a field's value, or an object of operators; $and, $or, $not",
        "propertyNames": {"pattern": r"^(?:\$(?:and|or|not)|[^$\[\]\x00-\x1f]"
                                     rf"[^\[\]\x00-\x1f]{{0,{MAX_KEY - 1}}})$"},
        "properties": {"$and": filters, "$or": filters, "$not": ref},
        "additionalProperties": {"anyOf": [scalar, operators]}}}


class _View(BaseModel):
    """A part of a response: exactly these fields (a test holds the server and the CLI's
    `--json` to them)."""

    model_config = ConfigDict(extra="forbid")


class PassageSource(_View):
    """Where a passage came from (docs/server.md, "Sources"): a passage stored without
    these (an older graph, a JSON row) has its document id as `file` and nulls."""

    file: str | None = Field(description="the document: its path, or its upload's name")
    page: int | str | None = Field(
        description="the page (from 1) or slide it starts on, a sheet's name; null for none")
    headings: list[str] = Field(description="the headings above it, outermost first")
    start: int | None = Field(description="where its span starts in the document's text")
    end: int | None = Field(description="where its span ends (excluded)")


class Passage(_View):
    """A retrieved passage, the relations that led to it (their texts and ids), its
    document and where in it the passage came from."""

    id: str
    text: str
    score: float
    relations: list[str]
    via: list[str]
    doc_id: str | None
    source: PassageSource | None = Field(
        default=None, description="file, page, headings and span of the passage")
    metadata: dict[str, Any] | None = Field(
        default=None, description="the passage's stored metadata (with include_metadata)")


class Node(_View):
    """An entity or passage in a drawing."""

    id: str
    label: str
    kind: Literal["query", "bridge", "entity", "passage"]
    on_path: bool
    rank: int | None = None
    text: str | None = None


class Edge(_View):
    """A relation (entity to entity), a name link (bridge to an entity named inside its
    name) or evidence (entity to passage) in a drawing."""

    id: str
    source: str
    target: str
    label: str
    kind: Literal["relation", "name", "evidence"]
    on_path: bool
    score: float | None = None


class Subgraph(_View):
    """What to draw."""

    nodes: list[Node]
    edges: list[Edge]


class RelationOut(_View):
    """A relation a retrieval used."""

    id: str
    text: str
    score: float


class QueryEntity(_View):
    """A query entity: which graph entity, the text it was matched by, and how."""

    id: str
    name: str
    matched: str
    how: str
    score: float


class Bridge(_View):
    """A bridge entity of the default method, and the relation it was reached through."""

    id: str
    name: str
    relation: str
    confidence: float


class RetrievalView(_View):
    """Graph passages beside naive ones, the evidence and timings: the one JSON view of a
    retrieval (`records.comparison_json`), as `hopgraph query --json` prints it."""

    question: str
    method: str
    graph: list[Passage]
    naive: list[Passage]
    entities: list[QueryEntity]
    relations: list[RelationOut]
    timings_ms: dict[str, float]
    naive_timings_ms: dict[str, float]
    notes: list[str]
    llm: dict[str, Any] | None
    bridges: list[Bridge]


class QueryResponse(RetrievalView):
    """The view of a retrieval, with the subgraph to draw and whether it was cached."""

    subgraph: Subgraph
    cached: bool = Field(description="served from the answers computed since the last write "
                         "(its timings are those of the first computation)")


class EntityRef(_View):
    """An entity named by id and name."""

    id: str
    name: str


class EntityRelation(_View):
    """A relation of an entity."""

    id: str
    text: str
    subject: EntityRef
    object: EntityRef
    passages: int


class EntityResponse(_View):
    """An entity, its relations (capped; `total_relations` counts all) and neighbours."""

    id: str
    name: str
    relations: list[EntityRelation]
    total_relations: int
    neighbours: list[EntityRef]
    subgraph: Subgraph


class GraphsResponse(_View):
    """The graphs of the database that the key may use."""

    graphs: list[str]
    default: str | None = Field(description="the graph of the routes without "
                                "/graphs/{graph}; null when the key may not use it")


class GraphChange(_View):
    """A graph made or dropped."""

    graph: str
    created: bool = False
    dropped: bool = False
