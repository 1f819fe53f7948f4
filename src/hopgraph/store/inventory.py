"""The documents of a graph and their passage counts, without an embedder or a graph load:
from the graph's snapshot when it is current, else by reading every passage's `doc_id`."""

from __future__ import annotations

from collections import Counter

from hopgraph.store import snapshot
from hopgraph.store.milvus import MilvusStore


def documents(store: MilvusStore) -> dict[str, int]:
    """Passage count by document id, for every document with passages."""
    saved = snapshot.load(store.snapshot_path(), store.identity, store.writes)
    if saved is not None:
        return saved.graph.documents()
    return dict(Counter(row["doc_id"] for row in store.scan(store.passages, ["doc_id"])))
