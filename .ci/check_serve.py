"""Start `hopgraph serve` from an installed package and fetch what a browser would: the page,
every /static file it and the API docs page name, and one query. Shows that the wheel
carries the page and its vendored scripts and that the serve extra installs a working server.

Usage: python .ci/check_serve.py HOPGRAPH_EXECUTABLE DB_PATH GRAPH
(the graph must hold the Bernoulli demo file; the server is stopped before this exits)
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

START_SECONDS = 180  # the model loads before the server answers; slow on a busy 2-core box
QUESTION = "What contribution did the son of Euler's teacher make?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch(url: str, body: dict[str, object] | None = None) -> str:
    """GET (or POST a JSON body to) `url`; its text, or an error naming the URL."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return str(reply.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"check_serve: {url} answered {exc.code}: {exc.read()[:500]!r}") from None


def wait_until_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """Poll /health until it answers ok; exit with the server's log if it dies or stalls."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"check_serve: hopgraph serve exited with {server.returncode}:\n"
                     f"{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if json.load(reply).get("status") == "ok":
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)  # polling interval
    sys.exit(f"check_serve: no answer from {url}/health in {START_SECONDS} s:\n"
             f"{log.read_text(errors='replace')}")


def check(url: str) -> None:
    """The page, the files it names, the API docs page and its files, one query."""
    page = fetch(f"{url}/")
    docs = fetch(f"{url}/docs")
    named = sorted(set(re.findall(r'(?:src|href)="(/static/[^"]+)"', page + docs)))
    if not any(name.endswith(".js") for name in named):
        sys.exit(f"check_serve: the page names no /static script:\n{page[:1000]}")
    for name in [*named, "/openapi.json"]:
        fetch(f"{url}{name}")
    answer = fetch(f"{url}/query", {"question": QUESTION, "top_k": 2})
    if "Daniel Bernoulli" not in answer:
        sys.exit(f"check_serve: the query did not find Daniel Bernoulli:\n{answer[:1000]}")
    print(f"check_serve: /, /docs, {len(named)} static files and /query answered from the "
          "installed package")


def main(hopgraph: str, db: str, graph: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    port = url.rsplit(":", 1)[1]
    with tempfile.TemporaryDirectory(prefix="hopgraph-serve-check-") as tmp:
        log = Path(tmp) / "serve.log"
        with log.open("wb") as out:
            server = subprocess.Popen([hopgraph, "serve", "--uri", db, "--graph", graph,
                                       "--port", port], stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=subprocess.STDOUT, cwd=tmp)
        try:
            wait_until_up(url, server, log)
            check(url)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=30)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
