"""One long paragraph (a .md file with no line break) through `hopgraph ingest --dry-run` and
through an upload to `hopgraph serve` (issue 34).

Makes the file from MuSiQue's paragraphs joined by spaces (or made-up sentences when the
data is absent), then:

1. runs `hopgraph ingest --dry-run --no-llm FILE` in a new process: its wall time and peak
   RSS (reading, chunking and the offline extraction; nothing is stored);
2. starts `hopgraph serve` on a free 127.0.0.1 port with an empty graph, uploads the file
   (offline extractor) and, while the job runs, sends `GET /health` every 0.1 s; after
   `--cancel-after` seconds of the job's run it cancels the job and waits for its end.
   It prints /health's latencies, the job's stages with their times, how long the cancel
   took to take effect, and the server's peak RSS (Linux).

Bounded: every request has a timeout, the job is cancelled, the server is stopped.

Usage (from the repository root):
  .venv/bin/python benchmarks/long_paragraph.py                 # 10 MB, cancel after 20 s
  options: --mb 10 --cancel-after 20 --skip-dry-run --skip-serve [--json]
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
LIMIT_S = 1800.0  # the whole upload run, cancel included


def make_file(path: Path, megabytes: float) -> None:
    """A .md of one heading and one paragraph of about `megabytes` MB, no line break."""
    corpus = DATA / "corpus.json"
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
    """Wall seconds and peak RSS (MB) of `hopgraph ingest --dry-run --no-llm FILE`."""
    began = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "hopgraph.cli", "ingest", "--dry-run", "--no-llm", "--quiet",
         "--uri", str(path.with_suffix(".db")), str(path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - began
    if status != 0:
        raise SystemExit(f"the dry run failed:\n{child.stderr.read().decode() if child.stderr else ''}")
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024)}


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


def served(path: Path, cancel_after: float) -> dict[str, object]:
    """Upload `path` to a new server, probe /health meanwhile, cancel, and time it all."""
    port = free_port()
    env = {**os.environ, "HOPGRAPH_URI": str(path.with_name("served.db")),
           "HOPGRAPH_GRAPH": "long"}
    server = subprocess.Popen([sys.executable, "-m", "hopgraph.cli", "serve", "--port",
                               str(port)], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    health: list[tuple[float, float]] = []  # (seconds since the upload, latency)
    stages: list[tuple[float, str]] = []
    stop = threading.Event()
    try:
        wait_healthy(port, server)
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

        prober = threading.Thread(target=probe, daemon=True)
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
            "server_peak_rss_mb": peak_rss_mb(server.pid),
        }
    finally:
        stop.set()
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()


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
    parser.add_argument("--skip-dry-run", action="store_true")
    parser.add_argument("--skip-serve", action="store_true")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hopgraph-long-") as tmp:
        path = Path(tmp) / "one-line.md"
        make_file(path, args.mb)
        result: dict[str, object] = {"file_mb": round(path.stat().st_size / 1e6, 1)}
        if not args.skip_dry_run:
            result["dry_run"] = dry_run(path)
            print(f"ingest --dry-run: {result['dry_run']}", flush=True)
        if not args.skip_serve:
            result["upload"] = served(path, args.cancel_after)
            for key, value in result["upload"].items():  # type: ignore[union-attr]
                print(f"upload {key}: {value}", flush=True)
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
