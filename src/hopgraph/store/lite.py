"""What is particular to Milvus Lite: its file lock, and log noise hopgraph replaces with
its own one-line messages. (Its index choice is in `schema`: FLAT, see LITE_INDEX.)"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from pathlib import Path

from milvus_lite.server_manager import server_manager_instance
from pymilvus import MilvusClient
from pymilvus.exceptions import MilvusException


class _DropKnownNoise(logging.Filter):
    """Milvus Lite lacks the timestamp call query iterators start with; pymilvus falls back to
    a client-side timestamp, which is correct for us, but both sides log it loudly per scan."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return "mvccTs" not in message and "Method not implemented" not in message


for _name in ("pymilvus.client.iterator.query_iterator", "grpc._server"):
    logging.getLogger(_name).addFilter(_DropKnownNoise())


class _DropLockTraceback(logging.Filter):
    """Milvus Lite logs a 20-line traceback when another process holds a database's lock;
    hopgraph reports that case itself in one line (`MilvusStore.__init__`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return type(error).__name__ != "DataDirLockedError"


logging.getLogger("milvus_lite.server_manager").addFilter(_DropLockTraceback())

def is_local_uri(uri: str) -> bool:
    """Whether a URI names a Milvus Lite file (a local path) rather than a server."""
    return "://" not in uri


# Milvus Lite runs one in-process server per database file, started by the first client of
# it, and keeps it (and the file's lock) until the process exits: closing a client does not
# stop it. hopgraph counts its own open clients per file and stops the server when the last
# one closes, so a closed graph can be opened by the CLI, a server or another program.
_open_clients: dict[str, int] = {}
_clients_lock = threading.Lock()


def connect(uri: str, token: str | None, attempts: int = 4) -> MilvusClient:
    """A client for `uri` (close it with `disconnect`). Connecting to Milvus Lite's
    in-process gRPC server now and then fails with "Too many pings" (it throttles the
    keepalive pings of earlier clients; rare): a few quick retries get through. A file held
    by another process fails every attempt, ~1 s in all."""
    local = is_local_uri(uri)
    with _clients_lock:  # one count per client; released below if the connect fails
        if local:
            key = os.path.abspath(uri)
            _open_clients[key] = _open_clients.get(key, 0) + 1
    try:
        for attempt in range(attempts):
            try:
                return MilvusClient(uri=uri, token=token or "")
            except MilvusException:
                if attempt == attempts - 1 or not local:
                    raise
                time.sleep(0.1 * 2**attempt)
        raise AssertionError("unreachable")
    except BaseException:
        if local:
            _forget_client(uri)
        raise


def disconnect(uri: str, client: MilvusClient) -> None:
    """Close a client of `connect`; the last one of a Milvus Lite file in this process
    also stops its in-process server, which releases the file's lock."""
    try:
        client.close()
    finally:
        if is_local_uri(uri):
            _forget_client(uri)


def _forget_client(uri: str) -> None:
    key = os.path.abspath(uri)
    with _clients_lock:
        left = _open_clients.get(key, 0) - 1
        if left > 0:
            _open_clients[key] = left
            return
        _open_clients.pop(key, None)
        # Under the lock: a `connect` of the same file waits, then starts a new server.
        server_manager_instance.release_server(key)


def held_elsewhere(path: Path) -> bool:
    """Whether another process holds Milvus Lite's lock on the database at `path` (this
    process's own Lite server, if it runs one for `path`, is not "another")."""
    if str(path) in server_manager_instance._servers:  # its servers, by absolute path
        return False
    lock = path / "LOCK"
    if not lock.is_file():
        return False
    with open(lock, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False
