"""One long paragraph (a .md file with no line break) through `hopgraph ingest --dry-run` and
through an upload to `hopgraph serve` (issue 34).

Makes the file from MuSiQue's paragraphs joined by spaces (or made-up sentences when the
data is absent: `--data` says where it is), then:

1. runs `hopgraph ingest --dry-run --no-llm FILE` in a new process: its wall time and peak
   RSS (reading, chunking and the offline extraction; nothing is stored);
2. starts `hopgraph serve` on a free 127.0.0.1 port, on a graph of the Bernoulli file (when
   the data is there; else empty), sends 10 queries, uploads the file (offline extractor)
   and, while the job runs, sends `GET /health` every 0.1 s and a query (a new question
   each time, so never from the cache) every 0.5 s; after `--cancel-after` seconds of the
   job's run it cancels the job and waits for its end. It prints /health's and the queries'
   latencies, the job's stages with their times, how long the cancel took to take effect,
   and the server's peak RSS (Linux);
3. chunks the file's first 2 MB on a thread while another sleeps 1 ms in a loop: how long
   that one waited at most for the interpreter lock.

Bounded: every request has a timeout, the job is cancelled, the server is stopped.

Usage (from the repository root):
  .venv/bin/python benchmarks/long_paragraph.py                 # 10 MB, cancel after 20 s
  options: --mb 10 --cancel-after 20 --skip-dry-run --skip-serve --skip-lock [--json]
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

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
TIMEOUT_S = 120.0
LIMIT_S = 1800.0  # the whole upload run, cancel included


def make_file(path: Path, megabytes: float, data: Path) -> None:
    """A .md of one heading and one paragraph of about `megabytes` MB, no line break."""
    corpus = data / "musique" / "corpus.json"
    if corpus.exists():
        texts = [" ".join(row["text"].split()) for row in
                 json.loads(corpus.read_text(encoding="utf-8"))]
    else:
        texts = [f"Person {i} was born in Town {i % 97} in {1800 + i % 200} and studied at "
                 f"the University of Place {i % 13}." for i in range(2000)]
    wanted, parts, size, i = int(megabytes * 1_000_000), [], 0, 0
    while size < wanted:
        parts.append(texts[i % len(texts)])
        size += len(parts[-1]) + 1
        i += 1
    path.write_text("# Long notes\n\n" + " ".join(parts)[:wanted] + "\n", encoding="utf-8")


def dry_run(path: Path) -> dict[str, float]:
    """Wall and CPU seconds (user + system) and peak RSS (MB) of `hopgraph ingest --dry-run
    --no-llm FILE` (reading, chunking, the offline extraction)."""
    began = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "hopgraph.cli", "ingest", "--dry-run", "--no-llm", "--quiet",
         "--uri", str(path.with_suffix(".db")), str(path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - began
    if status != 0:
        raise SystemExit(f"the dry run failed with status {status}")
    return {"seconds": round(seconds, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_rss_mb": round(usage.ru_maxrss / 1024)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call(port: int, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S)
    try:
        conn.request(method, path, body, headers or {})
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read() or b"{}")
    finally:
        conn.close()


def upload(port: int, path: Path) -> str:
    boundary = "hopgraph-benchmark-boundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"extractor\"\r\n\r\n"
            f"offline\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; "
            f"filename=\"{path.name}\"\r\nContent-Type: text/markdown\r\n\r\n").encode()
    body += path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    status, job = call(port, "POST", "/uploads", body,
                       {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    if status != 202:
        raise SystemExit(f"the upload answered {status}: {job}")
    return str(job["id"])


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024)
    except OSError:
        pass
    return None


def query(port: int, number: int) -> float:
    """Seconds one POST /query took (question `number`: never one the cache holds)."""
    body = json.dumps({"question": f"Who taught the son of Euler's teacher ({number})?",
                       "top_k": 2}).encode()
    sent = time.monotonic()
    status, reply = call(port, "POST", "/query", body, {"Content-Type": "application/json"})
    if status != 200:
        raise SystemExit(f"a query answered {status}: {reply}")
    return time.monotonic() - sent


def served(path: Path, cancel_after: float, data: Path) -> dict[str, object]:
    """Upload `path` to a new server, probe /health and queries meanwhile, cancel, and time
    it all."""
    port = free_port()
    env = {**os.environ, "HOPGRAPH_URI": str(path.with_name("served.db")),
           "HOPGRAPH_GRAPH": "long"}
    bernoulli = data / "bernoulli" / "nano.json"
    if bernoulli.exists():
        subprocess.run([sys.executable, "-m", "hopgraph.cli", "ingest", "--quiet",
                        str(bernoulli)], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, check=True)
    server = subprocess.Popen([sys.executable, "-m", "hopgraph.cli", "serve", "--port",
                               str(port)], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    health: list[tuple[float, float]] = []  # (seconds since the upload, latency)
    queries: list[float] = []
    stages: list[tuple[float, str]] = []
    stop = threading.Event()
    try:
        wait_healthy(port, server)
        idle = [query(port, number) for number in range(11)][1:]  # the first loads the model
        began = time.monotonic()
        job_id = upload(port, path)
        posted = time.monotonic() - began

        def probe() -> None:
            while not stop.is_set():
                sent = time.monotonic()
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health",
                                            timeout=TIMEOUT_S) as reply:
                    reply.read()
                health.append((sent - began, time.monotonic() - sent))
                stop.wait(0.1)

        def ask() -> None:
            while not stop.is_set():
                queries.append(query(port, 100 + len(queries)))
                stop.wait(0.5)

        probers = [threading.Thread(target=probe, daemon=True),
                   threading.Thread(target=ask, daemon=True)]
        for prober in probers:
            prober.start()
        running_at = cancelled_at = None
        view: dict = {}
        while time.monotonic() - began < LIMIT_S:
            _, view = call(port, "GET", f"/jobs/{job_id}")
            now = time.monotonic() - began
            stage = view["stage"] if view["state"] == "running" else view["state"]
            if not stages or stages[-1][1] != stage:
                stages.append((round(now, 1), stage))
            if view["state"] == "running" and running_at is None:
                running_at = now
            if view["state"] not in ("queued", "running"):
                break
            if running_at is not None and cancelled_at is None and \
                    now - running_at >= cancel_after:
                call(port, "DELETE", f"/jobs/{job_id}")
                cancelled_at = now
            time.sleep(0.05)
        ended_at = time.monotonic() - began
        stop.set()
        for prober in probers:
            prober.join(TIMEOUT_S)
        latencies = [ms for _, ms in health]
        return {
            "upload_202_s": round(posted, 2), "stages": stages, "state": view.get("state"),
            "cancel_sent_s": None if cancelled_at is None else round(cancelled_at, 1),
            "cancel_took_s": None if cancelled_at is None else round(ended_at - cancelled_at, 1),
            "health_probes": len(latencies),
            "health_p50_ms": round(statistics.median(latencies) * 1000, 1),
            "health_max_ms": round(max(latencies) * 1000, 1),
            "health_over_1s": [(round(at, 1), round(s, 1)) for at, s in health if s > 1.0],
            "query_idle_p50_ms": round(statistics.median(idle) * 1000, 1),
            "query_idle_max_ms": round(max(idle) * 1000, 1),
            "queries_during_job": len(queries),
            "query_during_job_p50_ms": round(statistics.median(queries) * 1000, 1),
            "query_during_job_max_ms": round(max(queries) * 1000, 1),
            "server_peak_rss_mb": peak_rss_mb(server.pid),
        }
    finally:
        stop.set()
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()


def lock_waits(path: Path, characters: int = 2_000_000) -> dict[str, float]:
    """Chunk the first `characters` of `path` on a thread while this one sleeps 1 ms in a
    loop: its waits (ms) say how long the chunker held the interpreter lock at a time."""
    from hopgraph.embed.local import load_tokenizer
    from hopgraph.ingest.documents import Document, chunk_documents

    text = path.read_text(encoding="utf-8")[:characters]
    load_tokenizer()
    done = threading.Event()
    worker = threading.Thread(target=lambda: (chunk_documents([Document("a.md", text, "md")]),
                                              done.set()))
    waits: list[float] = []
    began = time.perf_counter()
    worker.start()
    while not done.is_set():
        slept = time.perf_counter()
        time.sleep(0.001)
        waits.append((time.perf_counter() - slept) * 1000)
    worker.join()
    waits.sort()
    return {"chunk_s": round(time.perf_counter() - began, 1),
            "wait_p50_ms": round(waits[len(waits) // 2], 1),
            "wait_p99_ms": round(waits[int(0.99 * (len(waits) - 1))], 1),
            "wait_max_ms": round(waits[-1], 1)}


def wait_healthy(port: int, server: subprocess.Popen[bytes]) -> None:
    started = time.monotonic()
    while time.monotonic() - started < TIMEOUT_S:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            if call(port, "GET", "/health")[0] == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=10.0, help="the file's size (10)")
    parser.add_argument("--cancel-after", type=float, default=20.0,
                        help="seconds of the job's run before it is cancelled (20)")
    parser.add_argument("--data", type=Path, default=DATA,
                        help="the shared data folder (default: ../shared/data beside the repo)")
    parser.add_argument("--skip-dry-run", action="store_true")
    parser.add_argument("--skip-serve", action="store_true")
    parser.add_argument("--skip-lock", action="store_true")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hopgraph-long-") as tmp:
        path = Path(tmp) / "one-line.md"
        make_file(path, args.mb, args.data)
        result: dict[str, object] = {"file_mb": round(path.stat().st_size / 1e6, 1),
                                     "musique": (args.data / "musique").exists()}
        if not args.skip_dry_run:
            result["dry_run"] = dry_run(path)
            print(f"ingest --dry-run: {result['dry_run']}", flush=True)
        if not args.skip_serve:
            result["upload"] = served(path, args.cancel_after, args.data)
            for key, value in result["upload"].items():  # type: ignore[union-attr]
                print(f"upload {key}: {value}", flush=True)
        if not args.skip_lock:
            result["lock"] = lock_waits(path)
            print(f"chunking 2 MB on a thread: {result['lock']}", flush=True)
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
