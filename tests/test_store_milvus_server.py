"""End to end against a real Milvus 2.3 standalone server (the `milvus` PyPI package).

Run just this with `pytest -m server`; skip it with `-m "not server"`.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, need
from pymilvus import MilvusClient

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder
from hopgraph.errors import StoreError
from hopgraph.retrieve import OFFLINE_METHODS
from hopgraph.retrieve.search import MemorySearcher, MilvusSearcher
from hopgraph.store.check import check

PORT = 19530
STARTUP_TIMEOUT_S = 180.0  # cold start is ~10 s; leave room for a slow CI machine
GRAPH = "server_e2e"


def _port_is_busy(port: int) -> bool:
    """Whether something listens on 127.0.0.1:`port` (TIME_WAIT leftovers do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        if sock.connect_ex(("127.0.0.1", port)) == 0:
            return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _log_tail(base: Path, lines: int = 30) -> str:
    log = base / "logs" / "milvus-stderr.log"
    if not log.exists():
        return f"(no log at {log})"
    tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    return f"last lines of {log}:\n" + "\n".join(tail)


def _wait_until_healthy(server: object, base: Path) -> None:
    """Poll /healthz until it says OK; fail at once if the process exits, or at the deadline.

    (The package's own wait keeps polling for its full timeout when the process has died.)
    """
    health = f"http://127.0.0.1:{server.webservice_port}/healthz"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        code = server.server_proc.poll()
        if code is not None:
            pytest.fail(f"Milvus server exited with code {code} during startup; "
                        f"{_log_tail(base)}")
        try:
            with urllib.request.urlopen(health, timeout=5) as resp:
                if "OK" in resp.read().decode("utf-8", errors="replace"):
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"Milvus server not healthy at {health} after {STARTUP_TIMEOUT_S:.0f} s; "
                        f"{_log_tail(base)}")
        time.sleep(0.2)  # polling interval, not synchronization


@pytest.fixture(scope="module")
def milvus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Milvus standalone server in a temp base dir; yields its URI, always stopped after."""
    try:
        from milvus import default_server
    except ImportError as exc:
        pytest.skip(f"the `milvus` package (Milvus standalone server) is not importable: {exc}; "
                    "install the dev extra: pip install -e '.[dev]'")
    if _port_is_busy(PORT):
        pytest.fail(f"port {PORT} on 127.0.0.1 is busy (another Milvus server?); stop whatever "
                    f"listens there (e.g. `ss -ltnp | grep {PORT}`) and rerun")
    base = tmp_path_factory.mktemp("milvus_server")
    default_server.set_base_dir(str(base))
    default_server.listen_port = PORT
    waits = default_server.wait_for_started
    default_server.wait_for_started = False  # we wait ourselves, watching the process
    try:
        default_server.start()
        _wait_until_healthy(default_server, base)
        # Usually PORT; the package moves to the next free port only when PORT is still in
        # TIME_WAIT from a server stopped moments ago (its probe bind lacks SO_REUSEADDR).
        uri = f"http://127.0.0.1:{default_server.listen_port}"
        client = MilvusClient(uri=uri, timeout=60)
        try:
            version = client.get_server_version()
        finally:
            client.close()
        assert version.startswith("v2.3"), f"expected a Milvus 2.3 server, got {version}"
        yield uri
    finally:
        default_server.stop()
        default_server.wait_for_started = waits


@pytest.mark.server
def test_ingest_reopen_query_drop_on_server(milvus_server: str,
                                            local_embedder: LocalEmbedder) -> None:
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

        again = rag.add_files([data])
        assert again.passages_added == again.entities_added == again.relations_added == 0
        assert again.relations_present == 22
        assert rag.stats()["relations"] == 22
        rag.close()

        rag = open_graph(create=False)
        assert len(rag.graph.relations) == 22  # reloaded from the server, not re-ingested
        assert len(rag.graph.entity_ids) == 24

        result = rag.retrieve(QUESTION, top_k=2)
        base_ids = set(rag.graph.passage_ids)
        assert isinstance(rag.retriever.search, MilvusSearcher)
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
        assert isinstance(mirrored.retriever.search, MemorySearcher)
        mirrored.close()

        # Documents on a server: the same passages again as document "extra" (sharing every
        # relation and entity), replaced by half of them, then deleted: back to the file's
        # graph, with every invariant holding and no query returning a deleted passage.
        rows = [{"passage": p["passage"], "triplets": p["triplets"]}
                for p in json.loads(data.read_text(encoding="utf-8"))["passages"]]
        rag.add(rows, doc_id="extra")
        assert rag.documents()["extra"] == 4
        replaced = rag.add(rows[:2], doc_id="extra")
        assert replaced.passages_removed == 2 and rag.documents()["extra"] == 2
        assert check(rag.store).problems == []
        extra = {p.id for p in rag.retrieve(QUESTION, top_k=8).passages} - base_ids
        assert extra  # the copies are found...
        removal = rag.delete("extra")
        assert (removal.passages, removal.relations, removal.entities) == (2, 0, 0)
        assert not extra & {p.id for p in rag.retrieve(QUESTION, top_k=8).passages}
        stats = rag.stats()
        assert (stats["passages"], stats["entities"], stats["relations"]) == (4, 24, 22)
        assert check(rag.store).problems == []

        assert rag.drop() is True
        assert not rag.store.exists()
        rag.close()
        with pytest.raises(StoreError, match="does not exist"):
            open_graph(create=False)
    finally:
        for each in opened:
            each.close()
