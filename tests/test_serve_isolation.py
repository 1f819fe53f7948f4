"""Isolation between graphs served by one server: 1,000 random requests, with random keys,
across three MuSiQue graphs (and the routes of the default one), writes among them, and a
pool smaller than the graphs (so graphs close and reopen during the run). Every status is
what the key's role and graphs allow, and no response holds another graph's passages (by
id or text) or documents."""

from __future__ import annotations

import json
import random
import threading
import traceback
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest
from conftest import MUSIQUE, need
from fastapi.testclient import TestClient

from hopgraph import GraphRAG
from hopgraph.config import ServeSettings
from hopgraph.serve.app import create_app
from hopgraph.serve.pool import GraphPool
from hopgraph.serve.service import GraphService, database_keys
from hopgraph.store import MilvusStore

GRAPHS = ("alpha", "beta", "gamma")
QUESTIONS_PER_GRAPH = 3
REQUESTS, THREADS = 600, 4
ENV_KEY = "isolation-env-admin"


class Owned:
    """What each graph holds: passage ids and texts, and document ids."""

    def __init__(self) -> None:
        self.by_graph: dict[str, set[str]] = {g: set() for g in GRAPHS}
        self._lock = threading.Lock()

    def add(self, graph: str, *strings: str) -> None:
        with self._lock:
            self.by_graph[graph].update(strings)

    def foreign(self, graph: str | None) -> set[str]:
        """Everything the other graphs hold (all of it for a route of no graph)."""
        with self._lock:
            return set().union(*(s for g, s in self.by_graph.items() if g != graph))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, local_embedder
          ) -> Iterator[tuple[GraphRAG, Owned, list[str], list[str]]]:
    """Three graphs of MuSiQue passages (each text in one graph only), the questions whose
    passages they hold, and some entity names."""
    need(MUSIQUE)
    tmp = tmp_path_factory.mktemp("isolation")
    uri = str(tmp / "iso.db")
    docs = json.loads((MUSIQUE / "openie_gpt-3.5-turbo-1106.json").read_text())["docs"]
    by_text = {doc["passage"]: doc for doc in docs}
    questions = json.loads((MUSIQUE / "questions_dev.json").read_text())
    owned, asked, names, taken = Owned(), [], [], set()
    for i, graph in enumerate(GRAPHS):
        chosen = []
        for question in questions[i::len(GRAPHS)][:QUESTIONS_PER_GRAPH]:
            asked.append(question["question"])
            for paragraph in question["paragraphs"]:
                text = f"{paragraph['title']}\n{paragraph['paragraph_text']}"
                if text in by_text and text not in taken:
                    taken.add(text)
                    chosen.append(by_text[text])
        source = tmp / f"{graph}.json"
        source.write_text(json.dumps({"docs": chosen}))
        with GraphRAG(uri=uri, graph=graph, embedder=local_embedder) as rag, \
                closing(MilvusStore.from_settings(rag.settings)) as store:
            rag.add_files([source])
            rows = store.where(store.passages, 'id != ""', ["id", "text", "doc_id"])
            owned.add(graph, *(row[field] for row in rows for field in ("id", "text",
                                                                         "doc_id")))
            names.extend(rag.graph.entity_names[:20])
    for graph in GRAPHS:
        assert len(owned.by_graph[graph]) > 50  # passages, texts and a document each
    rag = GraphRAG(uri=uri, graph="alpha", embedder=local_embedder)
    yield rag, owned, asked, names
    rag.close()


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def test_hundreds_of_random_requests_never_cross_graphs(world) -> None:
    rag, owned, questions, names = world
    store = database_keys(rag)
    keys: list[tuple[str | None, str | None, tuple[str, ...]]] = [
        (None, None, ()), ("hg_not-a-key", None, ()), (ENV_KEY, "admin", GRAPHS)]
    pick = random.Random(20)
    for n in range(12):
        role = ("read", "write", "admin")[n % 3]
        scope = tuple(sorted(pick.sample(GRAPHS, pick.randint(1, 2))))
        secret, _ = store.create(role, list(scope), f"k{n}")
        keys.append((secret, role, GRAPHS if role == "admin" else scope))
    pool = GraphPool(GraphService(rag), size=2)  # three graphs: they close and reopen
    app = create_app(pool, ServeSettings(api_key=ENV_KEY))
    failures: list[str] = []
    counts: dict[int, int] = {}
    lock = threading.Lock()

    def one(client: TestClient, rng: random.Random, n: int) -> None:
        secret, role, scope = rng.choice(keys)
        graph = rng.choice((*GRAPHS, "alpha", None))  # None: the default graph's routes
        prefix = "" if graph is None else f"/graphs/{graph}"
        target = graph or "alpha"
        kind = rng.choices(("query", "ask", "documents", "entity", "stats", "graphs", "add",
                            "delete"), weights=(40, 8, 10, 15, 8, 5, 7, 7))[0]
        need_role, options = "read", {}
        if kind == "query":
            method, path = "POST", f"{prefix}/query"
            options = {"json": {"question": rng.choice(questions), "top_k": rng.randint(1, 8),
                                "method": rng.choice(("default", "naive", "seed"))}}
        elif kind == "ask":
            method, path = "POST", f"{prefix}/ask"
            options = {"json": {"question": rng.choice(questions)}}
        elif kind == "documents":
            method, path = "GET", f"{prefix}/documents"
        elif kind == "entity":
            method, path = "GET", f"{prefix}/entities/{rng.choice(names)}"
        elif kind == "stats":
            method, path = "GET", f"{prefix}/stats"
        elif kind == "graphs":
            method, path, target = "GET", "/graphs", ""
        elif kind == "add":
            need_role, method, path = "write", "POST", f"{prefix}/documents"
            text = f"Isolation probe {n} of graph {target} lies on the river R{n}."
            options = {"json": {"rows": [{"passage": text, "triplets": [
                [f"Probe {n}", "lies on", f"R{n}"]]}], "doc_id": f"probe-{target}-{n}"}}
        else:
            need_role, method = "write", "DELETE"
            path = f"{prefix}/documents/probe-{target}-{rng.randrange(n + 1)}"
        reply = client.request(method, path, headers={"Authorization": f"Bearer {secret}"}
                               if secret else {}, **options)
        if secret is None or role is None:
            expected: tuple[int, ...] = (401,)
        elif target and target not in scope:
            expected = (404,)
        elif ("read", "write", "admin").index(role) < ("read", "write", "admin").index(
                need_role):
            expected = (403,)
        elif kind in ("entity", "delete"):
            expected = (200, 404)  # a name or document that graph may lack
        else:
            expected = (200,)
        body = reply.json() if reply.headers["content-type"].startswith(
            "application/json") else {}
        problems = []
        if reply.status_code not in expected:
            problems.append(f"status {reply.status_code}, expected {expected}: {reply.text[:300]}")
        if kind == "add" and reply.status_code == 200:
            data = options["json"]
            owned.add(target, data["doc_id"], data["rows"][0]["passage"])  # type: ignore[index]
        if kind == "graphs" and reply.status_code == 200:
            if body["graphs"] != sorted(scope):
                problems.append(f"listed {body['graphs']} for a key of {scope}")
            if body["default"] != ("alpha" if "alpha" in scope else None):
                problems.append(f"told the default graph {body['default']!r} to {scope}")
        elif graph is None and reply.status_code == 404 and "alpha" not in scope \
                and "alpha" in reply.text:
            problems.append(f"named the default graph to a key of {scope}")
        elif reply.status_code == 200:
            leaked = set(strings(body)) & owned.foreign(target)
            if leaked:
                problems.append(f"holds {len(leaked)} strings of other graphs: "
                                f"{sorted(leaked)[0][:80]!r}")
        with lock:
            counts[reply.status_code] = counts.get(reply.status_code, 0) + 1
            failures.extend(f"{method} {path} ({role} of {scope}): {p}" for p in problems)

    with TestClient(app) as client:
        def worker(seed: int) -> None:
            rng = random.Random(seed)
            for i in range(REQUESTS // THREADS):
                try:
                    one(client, rng, seed * 10_000 + i)
                except Exception:  # the server raised: say what, not just that a count is short
                    with lock:
                        failures.append(traceback.format_exc(limit=-12))
                    return

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=1200)
        assert not any(t.is_alive() for t in threads)
    assert not failures, "\n".join(failures[:20])
    assert sum(counts.values()) == REQUESTS
    assert {200, 401, 403, 404} <= set(counts), counts  # every answer was exercised
    assert counts[200] > REQUESTS // 4, counts
    pool.close()
