"""hopgraph as a LangChain retriever (extra `langchain`: langchain-core only).

```python
from hopgraph.integrations.langchain import HopgraphRetriever

retriever = HopgraphRetriever(uri="kb.db", graph="kb", k=5)          # a graph in this process
retriever = HopgraphRetriever(url="http://127.0.0.1:8000", api_key="hg_...", graph="kb")
docs = retriever.invoke("What contribution did the son of Euler's teacher make?")
```

Each `Document` has the passage's text as `page_content`, the passage id as `id`, and as
metadata the passage's own metadata plus `doc_id`, `score`, `relations` (the relations that
led to it, as text) and `via` (their ids). `k`, `method` and `where` are fields, and can be
given to `invoke` too. Local and remote modes return the same passages.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr, SecretStr

from hopgraph.errors import UsageError, install_extra
from hopgraph.integrations.sources import Found, Source, source

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # pragma: no cover - depends on the install
    raise UsageError("hopgraph's LangChain retriever needs langchain-core",
                     fix=install_extra("langchain")) from exc

__all__ = ["HopgraphRetriever"]
_OPTIONS = ("k", "method", "where")


class HopgraphRetriever(BaseRetriever):
    """Multi-hop graph retrieval from a hopgraph graph: local (`uri`, `graph`, or an open
    `rag`) or remote (`url` of a `hopgraph serve`, `api_key`, `graph`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    uri: str | None = None
    graph: str | None = None
    token: SecretStr | None = None
    embedder: str | None = None
    rag: Any = Field(default=None, exclude=True, description="an open hopgraph.GraphRAG")
    url: str | None = None
    api_key: SecretStr | None = None
    k: int = Field(default=5, ge=1)
    method: str = "default"
    where: dict[str, Any] | None = None

    _source: Source | None = PrivateAttr(default=None)

    def _from(self) -> Source:
        if self._source is None:
            local = {"uri": self.uri, "token": _secret(self.token), "embedder": self.embedder}
            self._source = source(rag=self.rag, url=self.url, api_key=_secret(self.api_key),
                                  graph=self.graph, **local)
        return self._source

    def _options(self, given: dict[str, Any]) -> tuple[int, str, Any]:
        unknown = sorted(set(given) - set(_OPTIONS))
        if unknown:
            raise UsageError(f"unknown option {unknown[0]!r} for HopgraphRetriever",
                             fix=f"options are {', '.join(_OPTIONS)}")
        return (int(given.get("k", self.k)), str(given.get("method", self.method)),
                given.get("where", self.where))

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        k, method, where = self._options(kwargs)
        return [_document(found) for found in self._from().search(query, k, method, where)]

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        k, method, where = self._options(kwargs)
        found = await self._from().asearch(query, k, method, where)
        return [_document(one) for one in found]

    def close(self) -> None:
        """Release the graph this retriever opened (or its HTTP clients)."""
        if self._source is not None:
            self._source.close()
            self._source = None


def _document(found: Found) -> Document:
    return Document(page_content=found.hit.text, id=found.hit.id,
                    metadata=found.described())


def _secret(value: SecretStr | None) -> str | None:
    return None if value is None else value.get_secret_value()
