"""Many small writes to one server: N clients each POST M one-document adds at once.

Starts a Milvus 2.3 standalone server (the PyPI package `milvus`, its default 200 ms time
tick) and, for each client count, `hopgraph serve` on a fresh graph of it (a process of its
own, as a user runs it, default embedder). Each client sends its documents one after
another (`POST /documents`, 3 passages of 2 triplets each); all clients start together.
Printed per client count: documents/s end to end, request latency p50 / max, the writes
the server made (the change log's write number: with group commit, fewer than the
documents), whether every document is listed, and whether `hopgraph check` is clean.

Usage (from the repository root; ~4 min):
  .venv/bin/python benchmarks/post_load.py [--clients 1 2 4 8] [--docs 12] [--json]
To measure another checkout's server (its code on PYTHONPATH), set HOPGRAPH_SRC=DIR/src.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import milvus_server
from serve_load import free_port, wait_healthy

TIMEOUT_S = 600.0


def document(client: int, k: int) -> dict[str, Any]:
    """One document of three passages; names shared across documents (a real graph's)."""
    name = f"Courier {client}-{k}"
    rows = [{"passage": f"{name} delivered parcel PX-{client}{k}{i} to the Basel depot "
                        f"on day {i}.",
             "triplets": [[name, "delivered", f"PX-{client}{k}{i}"],
                          [f"PX-{client}{k}{i}", "delivered to", "Basel depot"]]}
            for i in range(3)]
    return {"rows": rows, "doc_id": f"c{client}-d{k}"}


def call(url: str, body: Any = None, method: str = "GET") -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        return json.loads(response.read())


def run(uri: str, graph: str, clients: int, docs: int, env: dict[str, str]) -> dict[str, Any]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "hopgraph.cli", "serve", "--uri", uri, "--graph", graph,
         "--port", str(port)], env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, server)
        latencies: list[float] = []
        errors: list[str] = []
        gate = threading.Barrier(clients)

        def client(c: int) -> None:
            gate.wait()
            for k in range(docs):
                started = time.perf_counter()
                try:
                    call(f"{base}/documents", document(c, k), "POST")
                except Exception as exc:  # counted and printed, the run goes on
                    errors.append(f"client {c} doc {k}: {exc}")
                latencies.append(time.perf_counter() - started)

        threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT_S)
        seconds = time.perf_counter() - started
        listed = call(f"{base}/documents")["total"]
    finally:
        server.terminate()
        server.wait(timeout=60)
    checked = subprocess.run([sys.executable, "-m", "hopgraph.cli", "check", "--uri", uri,
                              "--graph", graph], env=env, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, check=False)
    return {"clients": clients, "documents": clients * docs, "seconds": round(seconds, 1),
            "docs_per_s": round(clients * docs / seconds, 2),
            "p50_s": round(statistics.median(latencies), 2),
            "max_s": round(max(latencies), 2), "writes": _writes(uri, graph, env),
            "listed": listed, "check_clean": checked.returncode == 0, "errors": errors[:3]}


def _writes(uri: str, graph: str, env: dict[str, str]) -> int:
    """The graph's write number (how many writes changed it), from its meta row."""
    script = ("import sys; from hopgraph import GraphRAG; "
              "rag = GraphRAG(uri=sys.argv[1], graph=sys.argv[2]); "
              "print(rag.store.meta.get('writes', 0)); rag.close()")
    done = subprocess.run([sys.executable, "-c", script, uri, graph], env=env,
                          capture_output=True, text=True, check=False)
    return int(done.stdout.strip() or -1) if done.returncode == 0 else -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="*", default=[1, 2, 4, 8])
    parser.add_argument("--docs", type=int, default=12, help="documents per client (12)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = dict(os.environ)
    if os.environ.get("HOPGRAPH_SRC"):
        env["PYTHONPATH"] = os.environ["HOPGRAPH_SRC"]
    rows = []
    print("| clients | documents | seconds | documents/s | p50 s | max s | writes | listed "
          "| check |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    with milvus_server(True) as uri:
        assert uri is not None
        for clients in args.clients:
            row = run(uri, f"posts_{clients}", clients, args.docs, env)
            rows.append(row)
            print(f"| {clients} | {row['documents']} | {row['seconds']} | {row['docs_per_s']} "
                  f"| {row['p50_s']} | {row['max_s']} | {row['writes']} | {row['listed']} "
                  f"| {'clean' if row['check_clean'] else 'PROBLEMS'} |", flush=True)
            for error in row["errors"]:
                print("  error:", error)
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
