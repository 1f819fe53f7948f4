"""Where the framework adapters get passages from: a graph opened in this process (`Local`)
or a `hopgraph serve` reached through `hopgraph.client` (`Remote`). Both give the same
`Found` passages for the same question, so an adapter's local and remote modes return the
same ids. Nothing here imports a framework: `langchain.py` and `llamaindex.py` turn `Found`
into their own types.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from hopgraph.api import GraphRAG
from hopgraph.errors import UsageError
from hopgraph.records import PassageHit, passage_source
from hopgraph.retrieve.query import Query
from hopgraph.where import Where


@dataclass(frozen=True)
class Found:
    """A retrieved passage with its stored metadata."""

    hit: PassageHit
    metadata: dict[str, Any] = field(default_factory=dict)

    def described(self) -> dict[str, Any]:
        """The metadata an adapter gives a passage: its own, then hopgraph's, which win on a
        name clash: where it came from, flat (`file`, `page`, `headings`, `start`, `end`;
        `source` the file, as LangChain's loaders name it, unless the passage's own metadata
        has a `source`), then `doc_id`, `score`, `relations`, `via`."""
        source = self.hit.source or passage_source(self.metadata, self.hit.doc_id)
        return {**self.metadata, **source, "source": self.metadata.get("source", source["file"]),
                "doc_id": self.hit.doc_id, "score": self.hit.score,
                "relations": list(self.hit.relations), "via": list(self.hit.via)}


class Source(Protocol):
    """Passages for a question."""

    def search(self, question: str, top_k: int, method: str, where: Any) -> list[Found]: ...

    async def asearch(self, question: str, top_k: int, method: str, where: Any
                      ) -> list[Found]: ...

    def close(self) -> None: ...


class Local:
    """A graph in this process: an open `GraphRAG` (kept open; its owner closes it), or one
    opened on first use from `uri`/`graph`/... (closed by `close`)."""

    def __init__(self, rag: GraphRAG | None = None, **open_options: Any) -> None:
        self._rag = rag
        self._owned = rag is None
        self._options = open_options
        self._lock = threading.Lock()

    @property
    def rag(self) -> GraphRAG:
        """The graph (opened now if need be; reading never creates one)."""
        with self._lock:
            if self._rag is None:
                self._rag = GraphRAG(create=False, **self._options)
            return self._rag

    def search(self, question: str, top_k: int, method: str, where: Any) -> list[Found]:
        rag = self.rag
        result = rag.retrieve(Query(question, method, top_k, where=Where.parse(where)))
        metadata = rag.passage_metadata(p.id for p in result.passages)
        return [Found(p, metadata.get(p.id, {})) for p in result.passages]

    async def asearch(self, question: str, top_k: int, method: str, where: Any
                      ) -> list[Found]:
        return await asyncio.to_thread(self.search, question, top_k, method, where)

    def close(self) -> None:
        with self._lock:
            if self._owned and self._rag is not None:
                self._rag.close()
                self._rag = None


class _ClientOptions(TypedDict):
    """What `Remote` gives `hopgraph.client`'s clients besides the URL."""

    api_key: str | None
    graph: str | None
    timeout: float


class Remote:
    """A `hopgraph serve`, through `hopgraph.client`: one sync client kept (its connections
    reused), an async client per async call (an event loop's connections are its own)."""

    def __init__(self, url: str, api_key: str | None = None, graph: str | None = None,
                 timeout: float = 60.0) -> None:
        self._settings = _ClientOptions(api_key=api_key, graph=graph, timeout=timeout)
        self._url = url
        self._sync: Any = None

    def search(self, question: str, top_k: int, method: str, where: Any) -> list[Found]:
        from hopgraph.client import Client

        if self._sync is None:
            self._sync = Client(self._url, **self._settings)
        result = self._sync.retrieve(question, method=method, top_k=top_k,
                                     where=_plain(where), include_metadata=True)
        return [Found(p, dict(getattr(p, "metadata", None) or {})) for p in result.passages]

    async def asearch(self, question: str, top_k: int, method: str, where: Any
                      ) -> list[Found]:
        from hopgraph.client import AsyncClient

        async with AsyncClient(self._url, **self._settings) as client:
            result = await client.retrieve(question, method=method, top_k=top_k,
                                           where=_plain(where), include_metadata=True)
        return [Found(p, dict(getattr(p, "metadata", None) or {})) for p in result.passages]

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()
            self._sync = None


def source(*, rag: GraphRAG | None = None, url: str | None = None,
           api_key: str | None = None, graph: str | None = None, **local: Any) -> Source:
    """A `Remote` source when `url` is given, else a `Local` one (`rag`, or opened from the
    local options: uri, token, embedder, memory_limit...)."""
    if url is not None:
        if rag is not None or any(v is not None for v in local.values()):
            raise UsageError("give either url (a hopgraph server) or local options, not both")
        return Remote(url, api_key, graph)
    if api_key is not None:
        raise UsageError("api_key is for a server: give url too")
    options = {k: v for k, v in {"graph": graph, **local}.items() if v is not None}
    return Local(rag, **options)


def _plain(where: Any) -> Any:
    """A filter as JSON for the server (checked here first: the error names its place)."""
    checked = Where.parse(where)
    return None if checked is None else checked.as_dict()
