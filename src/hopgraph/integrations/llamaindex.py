"""hopgraph as a LlamaIndex retriever (extra `llamaindex`: llama-index-core only).

```python
from hopgraph.integrations.llamaindex import HopgraphRetriever

retriever = HopgraphRetriever(uri="kb.db", graph="kb", top_k=5)      # a graph in this process
retriever = HopgraphRetriever(url="http://127.0.0.1:8000", api_key="hg_...", graph="kb")
nodes = retriever.retrieve("What contribution did the son of Euler's teacher make?")
```

Each `NodeWithScore` holds a `TextNode` (the passage's text, its id as `id_`) and the
passage's score; the node's metadata is the passage's own metadata plus `doc_id`, `score`,
`relations` and `via`, as in the LangChain retriever. `top_k`, `method` and `where` are
constructor options.
"""

from __future__ import annotations

from typing import Any

from hopgraph.api import GraphRAG
from hopgraph.errors import UsageError, install_extra
from hopgraph.integrations.sources import Found, source
from hopgraph.where import Where

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - depends on the install
    raise UsageError("hopgraph's LlamaIndex retriever needs llama-index-core",
                     fix=install_extra("llamaindex")) from exc

__all__ = ["HopgraphRetriever"]


class HopgraphRetriever(BaseRetriever):
    """Multi-hop graph retrieval from a hopgraph graph: local (`uri`, `graph`, or an open
    `rag`) or remote (`url` of a `hopgraph serve`, `api_key`, `graph`)."""

    def __init__(self, *, uri: str | None = None, graph: str | None = None,
                 rag: GraphRAG | None = None, url: str | None = None,
                 api_key: str | None = None, token: str | None = None,
                 embedder: str | None = None, top_k: int = 5, method: str = "default",
                 where: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if top_k < 1:
            raise UsageError(f"top_k must be at least 1, got {top_k}")
        self.top_k = top_k
        self.method = method
        self.where = Where.parse(where)  # checked now: the error names its place
        self._source = source(rag=rag, url=url, api_key=api_key, graph=graph, uri=uri,
                              token=token, embedder=embedder)
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = self._source.search(query_bundle.query_str, self.top_k, self.method,
                                    self.where)
        return [_node(one) for one in found]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = await self._source.asearch(query_bundle.query_str, self.top_k, self.method,
                                           self.where)
        return [_node(one) for one in found]

    def close(self) -> None:
        """Release the graph this retriever opened (or its HTTP clients)."""
        self._source.close()


def _node(found: Found) -> NodeWithScore:
    node = TextNode(text=found.hit.text, id_=found.hit.id, metadata=found.described())
    return NodeWithScore(node=node, score=found.hit.score)
