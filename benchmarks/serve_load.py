"""Load on `hopgraph serve`: concurrent clients sending POST /query on the MuSiQue graph, or
on several graphs of one server at once (`--graphs 3`).

Starts the server on a free 127.0.0.1 port (in a new process, as a user runs it), then N
client threads each send M queries over keep-alive connections, cycling through the 50 dev
questions (client i starts at question i); prints requests/s, p50/p95/p99 latency, errors,
and the server's CPU time per request (user + system, all its threads; Linux). On a machine
shared with other work, requests/s follows the other work; CPU ms per request much less so,
and 2000 / (CPU ms per request) is what two idle cores would serve.
Bounded: every request has a timeout, and the server is stopped at the end.

With `--graphs K`, MuSiQue's corpus is split into K graphs of one database (`musique_0`...,
passage i in graph i mod K) and request j of a client goes to graph j mod K through
`/graphs/{graph}/query`: one server, K graphs, each with its own retriever and answer cache.

Usage (from the repository root):
  .venv/bin/python benchmarks/serve_load.py                    # ingests MuSiQue first (~2.5 min)
  .venv/bin/python benchmarks/serve_load.py --uri g.db --graph musique   # an existing graph
  .venv/bin/python benchmarks/serve_load.py --graphs 3 [--max-graphs 3]  # three graphs
  options: --clients 32 --queries 50 --method default --top-k 5 --cache 0 [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"
TIMEOUT_S = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hopgraph(*args: str, env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-m", "hopgraph.cli", *args],
                          env={**os.environ, **env}, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        raise SystemExit(f"hopgraph {' '.join(args)} failed:\n{done.stderr}")


def wait_healthy(url: str, server: subprocess.Popen[bytes]) -> float:
    started = time.monotonic()
    while time.monotonic() - started < TIMEOUT_S:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if json.load(reply)["status"] == "ok":
                    return time.monotonic() - started
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process `pid` so far (all its threads); None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def client(port: int, questions: list[str], start: int, count: int, body: dict[str, object],
           latencies: list[float], errors: list[str], server_ms: list[float],
           paths: tuple[str, ...] = ("/query",)) -> None:
    """One client: `count` queries over one keep-alive connection (query i to path i mod
    the number of paths)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S)
    try:
        for i in range(count):
            payload = json.dumps({**body, "question": questions[(start + i) % len(questions)]})
            began = time.perf_counter()
            try:
                conn.request("POST", paths[i % len(paths)], payload,
                             {"Content-Type": "application/json"})
                reply = conn.getresponse()
                data = reply.read()
            except (OSError, http.client.HTTPException) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S)
                continue
            latencies.append((time.perf_counter() - began) * 1000)
            if reply.status != 200:
                errors.append(f"HTTP {reply.status}: {data[:200]!r}")
            else:
                answer = json.loads(data)
                # -1: a cached answer (no retrieval ran for it)
                server_ms.append(-1.0 if answer.get("cached") else answer["timings_ms"]["total"])
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--uri", help="an existing Milvus Lite file (default: ingest MuSiQue "
                        "into a temporary one)")
    parser.add_argument("--graph", default="musique")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--queries", type=int, default=50, help="per client")
    parser.add_argument("--method", default="default")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--cache", type=int, default=1024,
                        help="the server's answer cache (`serve --cache`; 0: every request "
                             "is computed)")
    parser.add_argument("--graphs", type=int, default=1,
                        help="split MuSiQue into this many graphs of one server (default 1)")
    parser.add_argument("--max-graphs", type=int, default=None,
                        help="the server's `--max-graphs` (default: --graphs)")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args()
    questions = [q["question"] for q in json.loads(
        (DATA / "questions_dev.json").read_text(encoding="utf-8"))]
    with tempfile.TemporaryDirectory(prefix="hopgraph-load-") as tmp:
        env = {"HOPGRAPH_URI": args.uri or str(Path(tmp) / "load.db"),
               "HOPGRAPH_GRAPH": args.graph}
        names = [args.graph] if args.graphs == 1 else [f"{args.graph}_{i}"
                                                        for i in range(args.graphs)]
        if not args.uri:
            print(f"ingesting MuSiQue into {len(names)} graph(s) ...", file=sys.stderr)
            for name, source in zip(names, split(Path(tmp), len(names)), strict=True):
                hopgraph("ingest", "--quiet", str(source), "--graph", name, env=env)
        env["HOPGRAPH_GRAPH"] = names[0]
        paths = ("/query",) if len(names) == 1 else tuple(f"/graphs/{n}/query" for n in names)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "hopgraph.cli", "serve", "--port", str(port),
             "--cache", str(args.cache), "--max-graphs", str(args.max_graphs or len(names))],
            env={**os.environ, **env}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        try:
            start_s = wait_healthy(f"http://127.0.0.1:{port}", server)
            body = {"method": args.method, "top_k": args.top_k}
            latencies: list[float] = []
            errors: list[str] = []
            server_ms: list[float] = []
            client(port, questions, 0, 3 * len(paths), body, [], [], [], paths)  # warm-up
            threads = [threading.Thread(target=client, args=(
                port, questions, i, args.queries, body, latencies, errors, server_ms, paths))
                for i in range(args.clients)]
            cpu_before = cpu_seconds(server.pid)
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(TIMEOUT_S * args.queries)
            wall = time.perf_counter() - began
            cpu_after = cpu_seconds(server.pid)
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
    total = args.clients * args.queries
    computed = [ms for ms in server_ms if ms >= 0]
    result = {
        "clients": args.clients, "queries_per_client": args.queries, "requests": total,
        "errors": len(errors), "seconds": round(wall, 2),
        "requests_per_s": round(len(latencies) / wall, 1),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
        "server_work_p50_ms": round(statistics.median(computed), 1) if computed else None,
        "server_cpu_ms_per_request": None if cpu_before is None or cpu_after is None
        else round((cpu_after - cpu_before) * 1000 / max(len(latencies), 1), 1),
        "server_start_s": round(start_s, 1), "method": args.method, "cpus": os.cpu_count(),
        "cache": args.cache, "cached_answers": len(server_ms) - len(computed),
        "graphs": len(names), "max_graphs": args.max_graphs or len(names),
    }
    print("| graphs (open at most) | clients × queries | answer cache | cached answers | errors "
          "| requests/s | p50 ms | p95 ms | p99 ms | retrieval p50 ms (inside the server, "
          "computed answers) | server CPU ms per request |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {result['graphs']} ({result['max_graphs']}) | {args.clients} × {args.queries} "
          f"| {args.cache or 'off'} | "
          f"{result['cached_answers']} | {result['errors']} | {result['requests_per_s']} | "
          f"{result['p50_ms']} | {result['p95_ms']} | {result['p99_ms']} | "
          f"{result['server_work_p50_ms']} | {result['server_cpu_ms_per_request']} |")
    for error in errors[:5]:
        print(f"error: {error}", file=sys.stderr)
    if args.json:
        print(json.dumps(result, indent=2))


def split(folder: Path, parts: int) -> list[Path]:
    """MuSiQue's passages with their triplets in `parts` files (passage i in file i mod
    `parts`); the whole file when `parts` is 1."""
    source = DATA / "openie_gpt-3.5-turbo-1106.json"
    if parts == 1:
        return [source]
    docs = json.loads(source.read_text(encoding="utf-8"))["docs"]
    files = []
    for part in range(parts):
        path = folder / f"musique_part{part}.json"
        path.write_text(json.dumps({"docs": docs[part::parts]}), encoding="utf-8")
        files.append(path)
    return files


if __name__ == "__main__":
    main()
