"""Every request of the API as a `Call`: its method, path and body, and how to read its reply.
Built and read here, without I/O, so `Client` and `AsyncClient` differ only in how they send.

Paths are relative to the client's base URL; a graph's routes are under `graph_prefix(name)`
("" for the server's default graph). Path parts are percent-encoded whole: a document id with
slashes, spaces, `?`, `#` or dots reaches the server as it was given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from hopgraph.client import results
from hopgraph.client.errors import error_from_reply, unexpected_reply
from hopgraph.errors import UsageError
from hopgraph.records import PassageRecord, Retrieval
from hopgraph.retrieve.query import DEFAULT_DEGREE, Query
from hopgraph.where import Where

T = TypeVar("T")
Question = str | Query
Filter = Where | Mapping[str, Any] | None
Row = PassageRecord | Mapping[str, Any]
STREAM_ACCEPT = "text/event-stream, application/json"  # /ask: events, or JSON without an LLM


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request: `method` and `path` (relative to the base URL), its JSON `body` (or
    `files`, (name, content) pairs, with `form` fields, as multipart form data), and
    `parse`, which turns the reply's JSON into the result."""

    method: str
    path: str
    parse: Callable[[Any], T]
    body: dict[str, Any] | None = None
    files: tuple[tuple[str, bytes], ...] | None = None
    form: dict[str, str] | None = None

    def multipart(self) -> list[tuple[str, tuple[str, bytes]]] | None:
        """The files as httpx takes them (field `files`), or None for a JSON request."""
        return None if self.files is None else [("files", part) for part in self.files]


def read_reply(call: Call[T], status: int, content: bytes, where: str,
               retry_after: str | None = None) -> T:
    """The result of `call` from its reply: the mapped error for an error status (with the
    reply's Retry-After), else the parsed JSON (an `ApiError` `unexpected_reply` when it is
    not what the API sends)."""
    if status >= 400:
        raise error_from_reply(status, content, where, retry_after)
    try:
        return call.parse(json.loads(content))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise unexpected_reply(where, repr(exc)) from exc


def base_url_of(base_url: str) -> str:
    """The server's URL without a trailing slash; a UsageError unless http(s)."""
    text = str(base_url).strip().rstrip("/")
    if not text.startswith(("http://", "https://")):
        raise UsageError(f"base_url must start with http:// or https://, got {base_url!r}",
                         fix="e.g. Client('http://127.0.0.1:8000'), where `hopgraph serve` "
                             "listens")
    return text


def headers_for(api_key: str | None) -> dict[str, str]:
    """The headers of every request: the key as a bearer token, when there is one."""
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def request_name(method: str, base_url: str, path: str) -> str:
    """How an error names its request: "POST http://host:8000/graphs/wiki/query"."""
    return f"{method} {base_url}{path}"


def encode_body(body: dict[str, Any], where: str) -> bytes:
    """The body as JSON text; a UsageError for what JSON cannot carry (NaN, infinities, lone
    surrogates, objects that are not JSON values), before anything is sent."""
    try:
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError) as exc:
        raise UsageError(f"the request cannot be sent as JSON: {exc}", where=where,
                         fix="send strings, finite numbers, booleans, null, lists and "
                             "objects only") from exc


def is_event_stream(content_type: str | None) -> bool:
    """Whether a reply is Server-Sent Events (an /ask answer from a server with an LLM)."""
    return (content_type or "").split(";")[0].strip().lower() == "text/event-stream"


def segment(value: str) -> str:
    """`value` as one path segment: everything but letters, digits, `-`, `_` and `~` encoded
    (a dot too, so "." and ".." are not read as the current or parent folder)."""
    return quote(value, safe="").replace(".", "%2E")


def graph_prefix(graph: str | None) -> str:
    """The path of a graph's routes: "" for the server's default graph."""
    return "" if graph is None else f"/graphs/{segment(graph)}"


def _where(where: Filter) -> dict[str, Any] | None:
    return where.as_dict() if isinstance(where, Where) else (None if where is None
                                                             else dict(where))


def _given(**options: Any) -> dict[str, Any]:
    return {name: value for name, value in options.items() if value is not None}


def query_body(question: Question, **options: Any) -> dict[str, Any]:
    """The body of `POST /query`: a `Query` (options given here replace its own), or the
    question with the options given (those left None are the server's defaults).
    `include_metadata` is sent only when true (a server before it would refuse the field)."""
    given = _given(**options)
    extra = {"include_metadata": True} if given.pop("include_metadata", False) else {}
    entities = given.get("entities")
    if isinstance(entities, str):
        raise UsageError(f"entities must be a list of names, got the string {entities!r}",
                         fix=f"entities=[{entities!r}]")
    if isinstance(question, Query):
        query = question.with_options(**given) if given else question
        body = {"question": query.question, "method": query.method, "top_k": query.top_k,
                "degree": query.degree, "entities": query.given_entities,
                "where": _where(query.where)}
        return {**_given(**body), **extra}
    if entities is not None:
        given["entities"] = list(entities)
    if "where" in given:
        given["where"] = _where(given["where"])
    return {"question": question, **given, **extra}


def ask_body(question: Question, method: str | None, top_k: int | None, where: Filter
             ) -> dict[str, Any]:
    """The body of `POST /ask`, which takes no degree nor entities: a `Query` holding them
    is a UsageError, not a request that would quietly ignore them."""
    if isinstance(question, Query) and (question.entities or question.degree != DEFAULT_DEGREE):
        raise UsageError("an answer from the server takes no entities nor degree",
                         fix="leave them out of the Query, or use query()/retrieve()")
    body = query_body(question, method=method, top_k=top_k, where=where)
    body.pop("degree", None)
    return body


def query(prefix: str, question: Question, **options: Any) -> Call[results.Comparison]:
    """`POST /query`: graph passages beside naive ones (`options` as `query_body`'s)."""
    return Call("POST", f"{prefix}/query", results.comparison, query_body(question, **options))


def retrieve(prefix: str, question: Question, **options: Any) -> Call[Retrieval]:
    """`POST /query`, read as its graph side only."""
    return Call("POST", f"{prefix}/query", lambda body: results.comparison(body).retrieval,
                query_body(question, **options))


@dataclass(frozen=True)
class AskCall:
    """`POST /ask`, ready to send: streamed, so the clients read the reply themselves
    (`events`). `where` names the request in errors."""

    path: str
    content: bytes
    where: str
    question: str
    method: str | None


def ask(base_url: str, prefix: str, question: Question, method: str | None,
        top_k: int | None, where: Filter) -> AskCall:
    """`POST /ask` for a question, checked and encoded before anything is sent."""
    body = ask_body(question, method, top_k, where)
    path = f"{prefix}/ask"
    name = request_name("POST", base_url, path)
    return AskCall(path, encode_body(body, name), name, body["question"], body.get("method"))


def row(item: Row) -> dict[str, Any]:
    """An input row for `POST /documents`: a mapping as it is, a `PassageRecord` as the row
    that reads back into it."""
    if not isinstance(item, PassageRecord):
        return dict(item)
    out: dict[str, Any] = {"passage": item.text,
                           "triplets": [[t.subject, t.predicate, t.object]
                                        for t in item.triplets]}
    if item.doc_id is not None:
        out["doc_id"] = item.doc_id
    if item.metadata:
        out["metadata"] = dict(item.metadata)
    return out


def add_documents(prefix: str, rows: Iterable[Row], doc_id: str | None, append: bool
                  ) -> Call[dict[str, Any]]:
    """`POST /documents`: the ingest summary."""
    body = _given(rows=[row(item) for item in rows], doc_id=doc_id)
    body["append"] = append
    return Call("POST", f"{prefix}/documents", results.json_object, body)


def documents(prefix: str) -> Call[dict[str, int]]:
    """`GET /documents`: passages by document id."""
    return Call("GET", f"{prefix}/documents", results.document_counts)


def delete_document(prefix: str, doc_id: str) -> Call[dict[str, Any]]:
    """`DELETE /documents/{doc_id}`: what was removed."""
    return Call("DELETE", f"{prefix}/documents/{segment(doc_id)}", results.json_object)


def entity(prefix: str, name: str) -> Call[dict[str, Any]]:
    """`GET /entities/{name}`: the entity, its relations and neighbours."""
    return Call("GET", f"{prefix}/entities/{segment(name)}", results.json_object)


def stats(prefix: str) -> Call[dict[str, Any]]:
    """`GET /stats`: counts, settings, state and the document count."""
    return Call("GET", f"{prefix}/stats", results.json_object)


def health() -> Call[dict[str, Any]]:
    """`GET /health` (needs no key)."""
    return Call("GET", "/health", results.json_object)


def graphs() -> Call[list[str]]:
    """`GET /graphs`: the names the key may use."""
    return Call("GET", "/graphs", results.graph_names)


def default_graph() -> Call[str | None]:
    """`GET /graphs`: the server's default graph (None when the key may not use it)."""
    return Call("GET", "/graphs", results.default_graph)


def create_graph(name: str) -> Call[None]:
    """`POST /graphs`: make an empty graph (admin)."""
    return Call("POST", "/graphs", results.nothing, {"name": name})


def drop_graph(name: str) -> Call[None]:
    """`DELETE /graphs/{name}`: drop a graph and everything in it (admin)."""
    return Call("DELETE", graph_prefix(name), results.nothing)


def list_keys() -> Call[list[dict[str, Any]]]:
    """`GET /keys`: the database's keys, never the keys themselves (admin)."""
    return Call("GET", "/keys", lambda body: results.key_records(body, "keys"))


def create_key(role: str, graphs: Iterable[str] | None, label: str | None
               ) -> Call[dict[str, Any]]:
    """`POST /keys`: a new key (`key`, shown this once) and its record (admin). A string
    for `graphs` is a UsageError, not a key for each of its letters."""
    if isinstance(graphs, str):
        raise UsageError(f"graphs must be a list of names, got the string {graphs!r}",
                         fix=f"graphs=[{graphs!r}]")
    body: dict[str, Any] = {"role": role, **_given(label=label)}
    if graphs:
        body["graphs"] = list(graphs)
    return Call("POST", "/keys", results.json_object, body)


def revoke_key(ident: str) -> Call[list[dict[str, Any]]]:
    """`DELETE /keys/{ident}`: the keys whose id or label is `ident`, revoked (admin)."""
    return Call("DELETE", f"/keys/{segment(ident)}",
                lambda body: results.key_records(body, "revoked"))
