"""Many processes, one graph on a real Milvus 2.3 server (marker `server`): concurrent
writers of overlapping documents, writers killed mid-write, and two REST servers beside CLI
commands. Each ends with `check` clean, no duplicate keys, and the graph equal to a serial
build of the surviving documents."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_process

from hopgraph import GraphRAG
from hopgraph.api import items_part
from hopgraph.embed import LocalEmbedder
from hopgraph.store import MilvusStore
from hopgraph.store.changes import ChangeLog
from hopgraph.store.check import Finding, check

WORKER = Path(__file__).with_name("concurrency_worker.py")
HOPGRAPH = str(Path(sys.executable).with_name("hopgraph"))  # the console script
CONVERGE_S = 30.0  # polling bound for the servers to follow (they should in ~2 s)
pytestmark = pytest.mark.server


def doc(k: int, n: int = 12, version: str = "") -> list[dict[str, Any]]:
    """Document k: two passages whose triplets overlap with every other document (one
    relation all of them state) and with its neighbours (shared entities)."""
    return [
        {"doc_id": f"d{k}", "passage": f"Scholar {k}{version} studied under Johann "
         "Bernoulli, who taught in Basel.",
         "triplets": [[f"Scholar {k}{version}", "studied under", "Johann Bernoulli"],
                      ["Johann Bernoulli", "taught in", "Basel"]]},
        {"doc_id": f"d{k}", "passage": f"Scholar {k} wrote to Scholar {(k + 1) % n}.",
         "triplets": [[f"Scholar {k}", "wrote to", f"Scholar {(k + 1) % n}"]]},
    ]


def rows(store: MilvusStore) -> tuple[dict, set, dict]:
    """Passages (id -> document), entities, relations (id -> sorted passages), read from
    Milvus; asserts no primary key is stored twice."""
    with store.strong_reads():
        passages = list(store.scan(store.passages, ["id", "doc_id"]))
        entities = [r["id"] for r in store.scan(store.entities, ["id"])]
        relations = list(store.scan(store.relations, ["id", "passage_ids"]))
        counts = [store.count(c) for c in (store.passages, store.entities, store.relations)]
    assert counts == [len({r["id"] for r in passages}), len(set(entities)),
                      len({r["id"] for r in relations})], "duplicate primary keys"
    return ({r["id"]: r["doc_id"] for r in passages}, set(entities),
            {r["id"]: sorted(r["passage_ids"]) for r in relations})


def problems(store: MilvusStore) -> list[Finding]:
    """What `store.check` finds, every read strong (a store opened beside the graph's
    GraphRAG has written nothing in its session)."""
    with store.strong_reads():
        return check(store).problems


def serial(uri: str, name: str, embedder: LocalEmbedder,
           docs: list[list[dict[str, Any]]]) -> GraphRAG:
    rag = GraphRAG(uri=uri, graph=name, embedder=embedder)
    rag.drop()
    rag.close()
    rag = GraphRAG(uri=uri, graph=name, embedder=embedder)
    for rows_ in docs:
        rag.add(rows_)
    return rag


def worker(uri: str, graph: str, actions: list, kill_at: int = 0,
           env: dict[str, str] | None = None) -> subprocess.Popen:
    args = [sys.executable, str(WORKER), uri, graph, json.dumps(actions)]
    if kill_at:
        args.append(str(kill_at))
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def finish(process: subprocess.Popen) -> tuple[int, str]:
    out, err = process.communicate(timeout=600)
    return process.returncode, out + err[-3000:]


@pytest.fixture
def fresh(milvus_server: str, local_embedder: LocalEmbedder) -> Iterator[Any]:
    opened: list[GraphRAG] = []

    def open_(name: str, drop: bool = False) -> GraphRAG:
        if drop:
            GraphRAG(uri=milvus_server, graph=name, embedder=local_embedder).drop()
        rag = GraphRAG(uri=milvus_server, graph=name, embedder=local_embedder)
        opened.append(rag)
        return rag

    yield open_
    for rag in opened:
        rag.close()


def test_concurrent_processes_and_threads_equal_a_serial_build(
        milvus_server: str, local_embedder: LocalEmbedder, fresh: Any, store_of: Any) -> None:
    """Three processes and two threads add, replace and delete overlapping documents at
    once; two of them write the same document (one version wins whole)."""
    graph = "concurrent"
    fresh(graph, drop=True)
    plans = [[["add", doc(k)] for k in range(w, 9, 3)] for w in range(3)]
    plans[0] += [["add", doc(99, version="-a")], ["delete", "d3"]]
    plans[1] += [["add", doc(99, version="-b")], ["delete", "d4"]]
    plans[2] += [["delete", "d0"], ["add", doc(0, version="-again")]]
    processes = [worker(milvus_server, graph, plan) for plan in plans]
    errors: list[BaseException] = []

    def thread_writes(ks: list[int]) -> None:
        try:
            with GraphRAG(uri=milvus_server, graph=graph, embedder=local_embedder) as rag:
                for k in ks:
                    rag.add(doc(k))
                rag.delete([f"d{ks[0]}"])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=thread_writes, args=(ks,)) for ks in ([9, 10],
                                                                           [11, 12])]
    for t in threads:
        t.start()
    results = [finish(p) for p in processes]
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    assert all(code == 0 for code, _ in results), results
    rag = fresh(graph)
    assert problems(store_of(rag)) == []
    got = rows(store_of(rag))
    winner = "-a" if any("Scholar 99-a" in t for t in rag.graph.relation_texts) else "-b"
    survivors = ([doc(k) for k in (1, 2, 5, 6, 7, 8, 10, 12)]
                 + [doc(0, version="-again"), doc(99, version=winner)])
    expected = serial(milvus_server, "concurrent_serial", local_embedder, survivors)
    assert got == rows(store_of(expected))
    assert rag.documents() == expected.documents()
    expected.close()


@pytest.mark.parametrize(("kill_at", "grouped"), [(3, False), (10, False), (6, True)])
def test_a_writer_killed_mid_write_is_completed_by_a_rerun(
        milvus_server: str, local_embedder: LocalEmbedder, fresh: Any, store_of: Any,
        monkeypatch: pytest.MonkeyPatch, kill_at: int, grouped: bool) -> None:
    """A process replacing document d1 (with a row of d3), then adding d2, one row per
    chunk, is killed before its kill_at-th announced change; a later write of another
    document leaves what it was writing unfinished; rerunning its writes completes them.
    `grouped`: the two adds are one write of two parts (group commit), killed mid-group."""
    monkeypatch.setenv("HOPGRAPH_LEASE_SECONDS", "3")  # the dead holder's claim runs out
    graph = f"killed_{kill_at}{'_group' if grouped else ''}"
    rag = fresh(graph, drop=True)
    rag.add(doc(1, version="-old"))
    plan = [["add", doc(1) + doc(3)[:1]], ["add", doc(2)]]
    if grouped:
        plan = [["group", [rows for _, rows in plan]]]
    code, out = finish(worker(milvus_server, graph, plan, kill_at,
                              env={"HOPGRAPH_LEASE_SECONDS": "3"}))
    assert code == -9, out
    rag.refresh()
    cut = set(rag.unfinished())
    assert cut and cut <= {"d1", "d2", "d3"}, cut
    assert any("is incomplete" in n for n in rag.retrieve("Who studied in Basel?").notes)
    rag.add(doc(5))  # waits for the dead writer's lease, closes its write
    store = store_of(rag)
    with store.strong_reads():
        unfinished = store.unfinished()
    assert set(unfinished) == cut and all("stopped" in why for why in unfinished.values())
    assert {p.id for p in problems(store) if p.kind == "unfinished document"} == cut
    if grouped:
        rag.add_parts([items_part(doc(1) + doc(3)[:1]), items_part(doc(2))])
    else:
        rag.add(doc(1) + doc(3)[:1])
        rag.add(doc(2))
    with store.strong_reads():
        assert store.unfinished() == {}
    assert problems(store) == []
    expected = serial(milvus_server, f"killed_serial_{kill_at}{int(grouped)}", local_embedder,
                      [doc(5), doc(1) + doc(3)[:1], doc(2)])
    assert rows(store) == rows(store_of(expected))
    expected.close()


def test_reads_follow_other_processes_with_quick_looks(
        milvus_server: str, fresh: Any, store_of: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads look at the change log with a session read (no wait for the server's time
    tick) and read it strong only when that shows a part the last strong look did not: a
    quiet log costs no strong read, and another process's write, whole or killed midway,
    still reaches this process's graph, which ends equal to what Milvus holds."""
    rag = fresh("quick", drop=True)
    rag.add(doc(1))
    rag.follow_seconds = 0  # every read looks
    strong: list[tuple] = []
    since = ChangeLog.since
    monkeypatch.setattr(ChangeLog, "since",
                        lambda self, *point: strong.append(point) or since(self, *point))
    for _ in range(3):
        rag.retrieve("Who taught in Basel?")
    assert strong == []

    store = store_of(rag)  # what Milvus holds, read strong

    def followed(unfinished: set[str]) -> None:
        deadline = time.monotonic() + CONVERGE_S
        while True:  # polling the reader, not synchronization
            rag.retrieve("Who taught in Basel?")
            held = set(rows(store)[0])
            if set(rag.graph.passage_ids) == held and set(rag.unfinished()) == unfinished:
                return
            assert time.monotonic() < deadline, (sorted(held), rag.unfinished())
            time.sleep(0.1)

    code, out = finish(worker(milvus_server, "quick", [["add", doc(2)]]))
    assert code == 0, out
    followed(set())
    assert strong  # the new parts were read strong
    strong.clear()
    rag.retrieve("Who taught in Basel?")
    assert strong == []
    code, out = finish(worker(milvus_server, "quick", [["add", doc(3)]], kill_at=3,
                              env={"HOPGRAPH_LEASE_SECONDS": "3"}))
    assert code == -9, out
    followed({"d3"})  # the rows it wrote before it died, announced as under way


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _call(url: str, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def _documents(base: str) -> set[str]:
    return {d["doc_id"] for d in _call(f"{base}/documents")["documents"]}


def _converge(base: str, expected: set[str]) -> float:
    """Seconds until the server lists exactly `expected` (polling)."""
    started = time.monotonic()
    while _documents(base) != expected:
        assert time.monotonic() - started < CONVERGE_S, (base, _documents(base), expected)
        time.sleep(0.1)  # polling the server, not synchronization
    return time.monotonic() - started


def test_two_servers_and_cli_commands_converge(
        milvus_server: str, local_embedder: LocalEmbedder, fresh: Any, store_of: Any,
        tmp_path: Path) -> None:
    """The scenario of issue 19: two servers, CLI add and delete, concurrent POSTs to both
    servers, a delete through a server that cannot have seen the latest CLI write."""
    graph = "two_servers"
    fresh(graph, drop=True).add(doc(0))
    env = {**os.environ, "HOPGRAPH_URI": milvus_server, "HOPGRAPH_GRAPH": graph}
    ports = [_free_port(), _free_port()]
    logs = [tmp_path / f"serve{k}.log" for k in range(len(ports))]  # a file, not a pipe:
    servers = [subprocess.Popen([HOPGRAPH, "serve", "--port",  # nobody drains a pipe, and
                                 str(port)], env=env, stdout=subprocess.DEVNULL,  # the access
                                stderr=log.open("w"), text=True)  # log would fill it
               for port, log in zip(ports, logs, strict=True)]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        for base, server, log in zip(bases, servers, logs, strict=True):
            deadline = time.monotonic() + 300
            while True:
                assert server.poll() is None, log.read_text()
                try:
                    _call(f"{base}/stats")
                    break
                except OSError:
                    assert time.monotonic() < deadline, "server did not start"
                    time.sleep(0.2)  # polling the server's start, not synchronization
        files = {}
        for k in (1, 4):
            files[k] = tmp_path / f"d{k}.jsonl"
            files[k].write_text("".join(json.dumps(r) + "\n" for r in doc(k)), "utf-8")
        cli = run_process("ingest", str(files[1]),
                          "--quiet", env=env)
        assert cli.code == 0, cli.stderr
        seen = [_converge(base, {"d0", "d1"}) for base in bases]
        posts: list[Any] = []
        threads = [threading.Thread(target=lambda b=base, k=k: posts.append(_call(
            f"{b}/documents", "POST", {"rows": doc(k)}))) for base, k in zip(
            bases, (2, 3), strict=True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert len(posts) == 2
        cli = run_process("delete", "d0", "--yes", env=env)
        assert cli.code == 0, cli.stderr
        cli = run_process("ingest", str(files[4]),
                          "--quiet", env=env)
        assert cli.code == 0, cli.stderr
        # Server 2 may not have followed the CLI's d4 yet: its delete must still be right.
        _call(f"{bases[1]}/documents/d1", "DELETE")
        seen += [_converge(base, {"d2", "d3", "d4"}) for base in bases]
        for base in bases:
            answer = _call(f"{base}/query", "POST", {"question": "Who wrote to Scholar 1?",
                                                         "method": "default"})
            docs = {p["doc_id"] for p in answer["graph"] + answer["naive"]}
            assert docs <= {"d2", "d3", "d4"}, docs
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=60)
    rag = fresh(graph)
    assert problems(store_of(rag)) == []
    expected = serial(milvus_server, "two_servers_serial", local_embedder,
                      [doc(2), doc(3), doc(4)])
    assert rows(store_of(rag)) == rows(store_of(expected))
    expected.close()
    print(f"servers listed each change after {', '.join(f'{s:.2f}' for s in seen)} s")
