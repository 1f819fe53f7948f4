"""End to end against a real Milvus 2.3 standalone server (the `milvus` PyPI package).

Run just this with `pytest -m server`; skip it with `-m "not server"`.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from conftest import BERNOULLI, QUESTION, need
from milvus_server import SEND_LIMIT_BYTES
from pymilvus import MilvusClient

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder
from hopgraph.errors import StoreError
from hopgraph.retrieve import OFFLINE_METHODS
from hopgraph.retrieve.search import MemorySearcher, MilvusSearcher
from hopgraph.store import MilvusStore
from hopgraph.store.check import Finding, check
from hopgraph.store.collections import Collections

GRAPH = "server_e2e"


def problems(store: MilvusStore) -> list[Finding]:
    """What `store.check` finds, every read strong (this store wrote nothing itself)."""
    with store.strong_reads():
        return check(store).problems


@pytest.mark.server
def test_ingest_reopen_query_drop_on_server(milvus_server: str, local_embedder: LocalEmbedder,
                                            store_of, parts_of) -> None:
    data = need(BERNOULLI)
    opened: list[GraphRAG] = []

    def open_graph(create: bool = True, memory_limit: int = 0) -> GraphRAG:
        # memory_limit 0: every search goes to the server
        rag = GraphRAG(uri=milvus_server, graph=GRAPH, embedder=local_embedder,
                       create=create, memory_limit=memory_limit)
        opened.append(rag)
        return rag

    try:
        rag = open_graph()
        summary = rag.add_files([data])
        assert (summary.passages_added, summary.entities_added, summary.relations_added) == (
            4, 24, 22)
        stats = rag.stats()
        assert (stats["passages"], stats["entities"], stats["relations"]) == (4, 24, 22)
        assert stats["uri"] == milvus_server
        # Past the memory limit (0 here) the writer keeps no vectors of its own (the cap
        # of store.vectors, tested there): it searches in Milvus, as a reader does.
        written = [p.id for p in rag.retrieve(QUESTION, top_k=2).passages]

        again = rag.add_files([data])
        assert again.passages_added == again.entities_added == again.relations_added == 0
        assert again.relations_present == 22
        assert rag.stats()["relations"] == 22
        rag.close()

        rag = open_graph(create=False)
        assert len(rag.graph.relations) == 22  # reloaded from the server, not re-ingested
        assert len(rag.graph.entity_ids) == 24

        result = rag.retrieve(QUESTION, top_k=2)
        assert [p.id for p in result.passages] == written  # the writer answered the same
        base_ids = set(rag.graph.passage_ids)
        searcher = parts_of(rag).retriever.search  # as the graph's settings build it
        assert isinstance(searcher, MilvusSearcher)
        texts = [p.text for p in result.passages]
        assert len(texts) == 2, texts
        assert "Leonhard Euler (1707" in texts[0], texts
        assert "Daniel Bernoulli (1700" in texts[1], texts

        mirrored = open_graph(create=False, memory_limit=10**6)
        for method in OFFLINE_METHODS:  # the server's searches give the mirror's passages
            found = rag.retrieve(QUESTION, top_k=3, method=method).passages
            assert all(p.text for p in found), f"method {method} returned empty texts"
            expected = mirrored.retrieve(QUESTION, top_k=3, method=method).passages
            assert [p.id for p in found] == [p.id for p in expected], method
        assert isinstance(parts_of(mirrored).retriever.search, MemorySearcher)
        mirrored.close()
        # The server scores relations by id (a filtered search) as their vectors do.
        qvec = local_embedder.embed([QUESTION])[0]
        ids = list(rag.graph.relation_ids)
        store = store_of(rag)
        by_server = store.scores(store.relations, qvec, ids)
        assert sorted(by_server) == sorted(ids)
        by_vectors = searcher.score_relations(qvec, list(range(len(ids))))
        assert max(abs(by_server[ids[r]] - s) for r, s in by_vectors.items()) < 1e-5

        # Documents on a server: the same passages again as document "extra" (sharing every
        # relation and entity), replaced by half of them, then deleted: back to the file's
        # graph, with every invariant holding and no query returning a deleted passage.
        rows = [{"passage": p["passage"], "triplets": p["triplets"]}
                for p in json.loads(data.read_text(encoding="utf-8"))["passages"]]
        rag.add(rows, doc_id="extra")
        assert rag.documents()["extra"] == 4
        replaced = rag.add(rows[:2], doc_id="extra")
        assert replaced.passages_removed == 2 and rag.documents()["extra"] == 2
        assert problems(store) == []
        extra = {p.id for p in rag.retrieve(QUESTION, top_k=8).passages} - base_ids
        assert extra  # the copies are found...
        removal = rag.delete("extra")
        assert (removal.passages, removal.relations, removal.entities) == (2, 0, 0)
        assert not extra & {p.id for p in rag.retrieve(QUESTION, top_k=8).passages}
        stats = rag.stats()
        assert (stats["passages"], stats["entities"], stats["relations"]) == (4, 24, 22)
        assert problems(store) == []

        assert rag.drop() is True
        assert not store.exists()
        rag.close()
        with pytest.raises(StoreError, match="does not exist"):
            open_graph(create=False)
    finally:
        for each in opened:
            each.close()


@pytest.mark.server
def test_a_scan_over_the_servers_message_limit_reads_on_in_smaller_pages(
        milvus_server: str, caplog: pytest.LogCaptureFixture) -> None:
    """The tests' server caps a reply at `SEND_LIMIT_BYTES` (a 2.3 server's default is 64
    MB, which 16,384 rows of vectors from a 1M graph pass): a scan of more than that
    still gives every row once, and pymilvus's ERROR about the page it recovered from is
    not logged."""
    caplog.set_level(logging.INFO)
    pymilvus_log = logging.getLogger("pymilvus")  # it does not propagate: listen there too
    pymilvus_log.addHandler(caplog.handler)
    rows = 12_000  # twice the limit and more: a page over it even if a reply is partial
    dim = 384
    pad = "x" * 500
    assert rows * (4 * dim + len(pad)) > 2 * SEND_LIMIT_BYTES
    client = MilvusClient(uri=milvus_server, timeout=60)
    name = "scan_limit_vectors"
    try:
        if client.has_collection(name):
            client.drop_collection(name)
        client.create_collection(name, dimension=dim, primary_field_name="id",
                                 id_type="string", max_length=32, auto_id=False,
                                 num_shards=1)
        vectors = np.random.default_rng(3).standard_normal((rows, dim)).astype(np.float32)
        for start in range(0, rows, 1000):
            client.insert(name, [{"id": f"r{n:05d}", "vector": vectors[n].tolist(),
                                  "text": f"{n} {pad}"} for n in range(start, start + 1000)])
        fields = ["id", "text", "vector"]
        whole = client.query_iterator(name, batch_size=16384, output_fields=fields,
                                      consistency_level="Strong")  # every row inserted
        with pytest.raises(Exception, match="larger than max"):  # what a plain scan meets
            whole.next()
        whole.close()
        assert any("larger than max" in r.getMessage() for r in caplog.records
                   if r.levelno >= logging.ERROR)  # pymilvus logs a failed page...
        caplog.clear()
        got = list(Collections(milvus_server, "scan_limit", client).scan(name, fields))
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # ...handled
        assert any("too large" in r.getMessage() for r in caplog.records)  # read on
        assert sorted(row["id"] for row in got) == [f"r{n:05d}" for n in range(rows)]
        for row in got[::997]:
            n = int(row["id"][1:])
            assert row["text"] == f"{n} {pad}"
            assert np.allclose(row["vector"], vectors[n])
    finally:
        pymilvus_log.removeHandler(caplog.handler)
        client.drop_collection(name)
        client.close()
