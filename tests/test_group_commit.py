"""Group commit: several adds in one write (`GraphRAG.add_parts`), the server's queued adds
written together (`GraphService.add`), and an upload's files stored in groups; each add keeps
its own outcome, and a bad one fails alone."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from hopgraph import GraphRAG
from hopgraph.api import items_part
from hopgraph.ingest import sync
from hopgraph.serve.jobs import Job, owner_of
from hopgraph.serve.service import GraphService, WriteBusy
from hopgraph.serve.uploads import Incoming, ingest_upload, keep_files


def doc(k: int, word: str = "Basel") -> list[dict[str, Any]]:
    """Document d{k}: two passages sharing an entity with every other document."""
    return [
        {"doc_id": f"d{k}", "passage": f"Scholar {k} studied under Johann Bernoulli in {word}.",
         "triplets": [[f"Scholar {k}", "studied under", "Johann Bernoulli"],
                      ["Johann Bernoulli", "taught in", word]]},
        {"doc_id": f"d{k}", "passage": f"Scholar {k} wrote a treatise on {word}.",
         "triplets": [[f"Scholar {k}", "wrote a treatise on", word]]},
    ]


def counts(summary: Any) -> dict[str, Any]:
    """A summary without its timing."""
    out = summary.as_dict()
    out.pop("seconds")
    return out


def contents(rag: GraphRAG) -> tuple[dict[str, int], list[str], list[str]]:
    graph = rag.graph
    return rag.documents(), sorted(graph.entity_names), sorted(graph.relation_texts)


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of parts of each write made through `sync.store_parts`."""
    made: list[int] = []
    original = sync.store_parts

    def counted(state: Any, embedder: Any, parts: Any, *args: Any) -> Any:
        if not callable(parts):
            made.append(len(parts))
            return original(state, embedder, parts, *args)

        def taken() -> Any:  # a server's queue, taken under the lease
            given = parts()
            made.append(len(given))
            return given

        return original(state, embedder, taken, *args)

    monkeypatch.setattr(sync, "store_parts", counted)
    return made


def test_parts_in_one_write_equal_the_same_adds_one_by_one(
        open_graph: Callable[..., GraphRAG], writes: list[int]) -> None:
    """Each part's summary is what its own `add` would have said, in order (a later part
    replacing an earlier part's document included), and the graph is the same."""
    alone = open_graph("alone")
    adds = [(doc(1), False), (doc(2), False), (doc(1, "Zurich"), False),
            (doc(3)[:1], True)]
    expected = [counts(alone.add(rows, append=append)) for rows, append in adds]
    grouped = open_graph("grouped")
    writes.clear()
    got = grouped.add_parts([items_part(rows, append=append) for rows, append in adds])
    assert writes == [4]
    assert [counts(s) for s in got] == expected
    assert got[2].documents_replaced == 1 and got[2].passages_removed == 2
    assert contents(grouped) == contents(alone)
    assert grouped.retrieve("Who studied in Zurich?").passages


def test_queued_adds_are_written_together_each_with_its_outcome(
        open_graph: Callable[..., GraphRAG], writes: list[int]) -> None:
    """Adds that arrive while a write runs wait in a queue; the next write takes them all,
    and each request gets its own summary."""
    service = GraphService(open_graph("served"))
    outcomes: dict[int, Any] = {}
    release = held(service)

    def post(k: int) -> None:
        outcomes[k] = service.add(items_part(doc(k)))

    threads = [threading.Thread(target=post, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    while service.queued < 6:  # every add queued behind the held write
        threading.Event().wait(0.01)
    writes.clear()
    release()
    for t in threads:
        t.join(60)
    assert writes == [6]
    assert sorted(outcomes) == list(range(6))
    assert all(s.documents_added == 1 and s.passages_added == 2 for s in outcomes.values())
    assert set(service.documents()) == {f"d{k}" for k in range(6)}
    assert service.retriever.graph.documents() == service.rag.documents()
    service.close()


def held(service: GraphService) -> Callable[[], None]:
    """Start a write that holds the service's write lock until the returned function is
    called (and returns when that write ended)."""
    hold, started = threading.Event(), threading.Event()

    def slow(rag: GraphRAG) -> None:
        started.set()
        hold.wait(60)

    writer = threading.Thread(target=service.write, args=(slow,))
    writer.start()
    assert started.wait(60)

    def release() -> None:
        hold.set()
        writer.join(60)

    return release


class Poisoned:
    """An embedder that fails on any text holding "poison" (a bad add, found while
    writing), and embeds everything else as the test's embedder does."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        if any("poison" in t for t in texts):
            raise RuntimeError("this embedder refuses poison")
        return np.asarray(self.inner.embed(texts))


def test_a_bad_add_in_a_group_fails_alone(open_graph: Callable[..., GraphRAG],
                                          embedder: Any, writes: list[int]) -> None:
    service = GraphService(open_graph("poisoned", embedder=Poisoned(embedder)))
    outcomes: dict[int, Any] = {}
    release = held(service)  # a write everyone else queues behind
    threads = [threading.Thread(target=lambda k=k, w=w: outcomes.__setitem__(
        k, _outcome(service, doc(k, w)))) for k, w in ((1, "Basel"), (2, "poison"),
                                                      (3, "Basel"))]
    for t in threads:
        t.start()
    while service.queued < 3:
        threading.Event().wait(0.01)
    writes.clear()
    release()
    for t in threads:
        t.join(60)
    assert writes[0] == 3 and sorted(writes[1:]) == [1, 1, 1]  # the group, then each alone
    assert isinstance(outcomes[2], RuntimeError)
    assert outcomes[1].documents_added == 1 and outcomes[3].documents_added == 1
    assert set(service.documents()) == {"d1", "d3"}
    assert service.rag.unfinished() == {}
    service.close()


def _outcome(service: GraphService, rows: list[dict[str, Any]]) -> Any:
    try:
        return service.add(items_part(rows))
    except Exception as exc:  # the test looks at which one failed
        return exc


def test_an_add_that_waits_too_long_is_never_written(open_graph: Callable[..., GraphRAG]
                                                    ) -> None:
    service = GraphService(open_graph("busy"))
    release = held(service)
    with pytest.raises(WriteBusy, match="busy with another write"):
        service.add(items_part(doc(1)), wait=0.05)
    assert service.queued == 0
    release()
    service.add(items_part(doc(2)))
    assert set(service.documents()) == {"d2"}
    service.close()


def test_an_upload_stores_its_files_in_one_write(open_graph: Callable[..., GraphRAG],
                                                 writes: list[int], tmp_path: Any) -> None:
    service = GraphService(open_graph("upload"))
    texts = {f"note{k}.txt": f"Scholar {k} studied under Johann Bernoulli in Basel.\n".encode()
             for k in range(3)}
    files = [Incoming(name, len(data), io.BytesIO(data)) for name, data in texts.items()]
    job = Job("0a", service.rag.name, keep_files(tmp_path / "1", files), "offline", False,
              tmp_path / "1", owner_of("n"), time.time())
    writes.clear()
    ingest_upload(job, service)
    assert writes == [3]
    assert [f.state for f in job.files] == ["done"] * 3
    assert set(service.documents()) == set(texts)
    service.close()
