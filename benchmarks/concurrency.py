"""Many processes, one graph on a Milvus 2.3 standalone server (started here): how fast
writes go with 1, 2 and 4 concurrent writers, how soon a server sees another process's
write, and what following a write costs as the graph grows.

Usage (from the repository root):
  .venv/bin/python benchmarks/concurrency.py                      # sizes 10k and 100k
  .venv/bin/python benchmarks/concurrency.py --sizes 10000 100000 1000000
  .venv/bin/python benchmarks/concurrency.py --growth-only --sizes 1000000

Writers are threads, each with its own GraphRAG (its own client and lease claim), adding
10-passage documents; the embedder is scale.py's hash of the text, so the model is not in
the figures. "Seen after" is the time from a write's return until a `GraphService` on
another GraphRAG lists the document (its follower looks every 0.5 s). "Refresh" is
`GraphRAG.refresh()` absorbing one 10-passage document written by another process (the
graph alone: what a Python program pays before its next read). "Follow" is
`GraphService.follow()` absorbing one 10-passage document written by another GraphRAG and
swapping in its new version (the search mirror is built then, its BM25 index carried over
from the last version); "first query" is the first default-method question on it (its
entity linker is extended then, and the graph's lazily built matrices are made). Each
graph is measured once Milvus has indexed every row written ("index wait"): until then a
search scans the unindexed rows, which at 1M relations costs seconds per question.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from typing import Any

from scale import HashEmbedder, graph_spec, milvus_server, records

from hopgraph import GraphRAG
from hopgraph.serve.service import GraphService

WRITES_PER_WRITER = 6
# Milvus builds its indexes in the background after a write; a search meanwhile scans the
# rows not yet indexed (seconds at 1M relations): the follow is measured on a settled server.
INDEX_WAIT_S = 1800  # per collection, at most


def document(name: str, passages: int = 10) -> list[dict[str, Any]]:
    """A document of `passages` passages, each with two triplets, one shared by all."""
    return [{"doc_id": name, "passage": f"{name} passage {i}: Ada Lovelace wrote notes on "
             f"the engine; {name} cites note {i}.",
             "triplets": [["Ada Lovelace", "wrote notes on", "the Analytical Engine"],
                          [name, "cites", f"note {i} of {name}"]]} for i in range(passages)]


def open_graph(uri: str, graph: str, **options: Any) -> GraphRAG:
    return GraphRAG(uri=uri, graph=graph, embedder=HashEmbedder(), **options)


def fresh_graph(uri: str, graph: str) -> None:
    with open_graph(uri, graph) as rag:
        rag.drop()


def writers(uri: str, count: int) -> dict[str, float]:
    """`count` writers adding WRITES_PER_WRITER documents each, at once."""
    graph = f"writers_{count}"
    fresh_graph(uri, graph)
    rags = [open_graph(uri, graph) for _ in range(count)]
    latencies: list[float] = []
    start = threading.Barrier(count)

    def run(n: int, rag: GraphRAG) -> None:
        start.wait()
        for k in range(WRITES_PER_WRITER):
            began = time.perf_counter()
            rag.add(document(f"w{n}-{k}"))
            latencies.append(time.perf_counter() - began)

    threads = [threading.Thread(target=run, args=(n, rag)) for n, rag in enumerate(rags)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    for rag in rags:
        rag.close()
    return {"writers": count, "writes": len(latencies), "writes_per_s": len(latencies) / wall,
            "latency_p50_s": statistics.median(latencies), "latency_max_s": max(latencies)}


def seen_after(uri: str, repeats: int) -> list[float]:
    """Seconds from a write's return until a server on another GraphRAG lists it."""
    graph = "visibility"
    fresh_graph(uri, graph)
    writer = open_graph(uri, graph)
    writer.add(document("first"))
    follower = open_graph(uri, graph)
    service = GraphService(follower)
    delays = []
    try:
        for k in range(repeats):
            writer.add(document(f"v{k}"))
            written = time.perf_counter()
            while f"v{k}" not in service.documents():
                time.sleep(0.01)  # polling the server, not synchronization
            delays.append(time.perf_counter() - written)
    finally:
        service.close()
        writer.close()
        follower.close()
    return delays


def growth(uri: str, size: int) -> dict[str, float]:
    """Follow one 10-passage document on a graph of `size` relations."""
    graph = f"growth_{size}"
    fresh_graph(uri, graph)
    ends, predicates, names = graph_spec(size)
    row: dict[str, float] = {"relations": size}
    began = time.perf_counter()
    with open_graph(uri, graph) as rag:
        rag.add(records(ends, predicates, names))
        row["build_s"] = time.perf_counter() - began
        row["index_wait_s"] = rag.wait_indexed(timeout=INDEX_WAIT_S)
    began = time.perf_counter()
    follower = open_graph(uri, graph)
    row["open_s"] = time.perf_counter() - began
    service = GraphService(follower, follow_seconds=0)  # followed by hand below
    plain = open_graph(uri, graph)  # a Python API user: refresh only
    question = f"What did {names[0]} found?"
    service.retrieve(follower_query(question))
    times, refreshes = [], []
    for k in range(3):
        with open_graph(uri, graph) as writer:
            writer.add(document(f"g{k}"))
        began = time.perf_counter()
        assert plain.refresh()
        refreshes.append(time.perf_counter() - began)
        began = time.perf_counter()
        assert service.follow()  # absorb the change, swap in the new version
        followed = time.perf_counter()
        service.retrieve(follower_query(question))
        times.append((followed - began, time.perf_counter() - followed))
    row["refresh_ms"] = statistics.median(refreshes) * 1000
    row["follow_ms"] = statistics.median(t[0] for t in times) * 1000
    row["first_query_ms"] = statistics.median(t[1] for t in times) * 1000
    service.close()
    follower.close()
    plain.close()
    return row


def follower_query(question: str) -> Any:
    from hopgraph.retrieve.query import Query

    return Query(question=question, method="default")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=10, help="visibility samples (10)")
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    parser.add_argument("--growth-only", action="store_true",
                        help="only the growth table (no writers, no visibility)")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    with milvus_server(True) as uri:
        assert uri is not None
        if not args.growth_only:
            contention(uri, args.repeats, out)
        print("| relations | build s | index wait s | follower open s | refresh ms | "
              "follow ms | first query ms |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        out["growth"] = []
        for size in args.sizes:
            row = growth(uri, size)
            out["growth"].append(row)
            print(f"| {size:,} | {row['build_s']:.0f} | {row['index_wait_s']:.0f} | "
                  f"{row['open_s']:.1f} | "
                  f"{row['refresh_ms']:.0f} | {row['follow_ms']:.0f} | "
                  f"{row['first_query_ms']:.0f} |", flush=True)
    if args.json:
        print(json.dumps(out, indent=2))


def contention(uri: str, repeats: int, out: dict[str, Any]) -> None:
    """The writers table and the visibility line."""
    print("| writers | writes | writes/s | latency p50 s | latency max s |")
    print("|---:|---:|---:|---:|---:|")
    out["writers"] = []
    for count in (1, 2, 4):
        row = writers(uri, count)
        out["writers"].append(row)
        print(f"| {count} | {row['writes']} | {row['writes_per_s']:.2f} | "
              f"{row['latency_p50_s']:.2f} | {row['latency_max_s']:.2f} |", flush=True)
    delays = seen_after(uri, repeats)
    out["seen_after_s"] = delays
    print(f"\nseen by another server after: median {statistics.median(delays):.2f} s, "
          f"max {max(delays):.2f} s ({len(delays)} writes)\n", flush=True)


if __name__ == "__main__":
    main()
