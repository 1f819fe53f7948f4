"""A real Milvus 2.3 standalone server for the tests marked `server` (the `milvus` PyPI
package), started once per test session by conftest's `milvus_server` fixture."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from pymilvus import MilvusClient

PORT = 19530
STARTUP_TIMEOUT_S = 180.0  # far above a cold start here; leave room for a slow CI machine
# A strong read waits for the proxy's next time tick (200 ms by default); our writes make a
# few such reads, so at 50 ms a small add is much quicker (benchmarks/RESULTS.md, "Many
# processes, one graph"). Same semantics:
# docs/server.md suggests the same setting to users whose writes are small and many.
TIME_TICK_MS = 50
# The largest reply the proxy sends (`proxy.grpc.serverMaxSendSize`; 64 MB by default, which
# a page of vectors from a 1M graph passes). Small here, so the tests meet that limit with
# graphs of thousands of rows (tests/test_store_milvus_server.py).
SEND_LIMIT_BYTES = 8 * 1024 * 1024


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


def start_milvus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
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
    default_server.config.set("proxy.timeTickInterval", TIME_TICK_MS)
    default_server.config.set("proxy.grpc.serverMaxSendSize", SEND_LIMIT_BYTES)
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
