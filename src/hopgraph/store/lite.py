"""What is particular to Milvus Lite: its file lock, and log noise hopgraph replaces with
its own one-line messages. (Its index choice is in `schema`: FLAT, see LITE_INDEX.)"""

from __future__ import annotations

import fcntl
import logging
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


def connect(uri: str, token: str | None, attempts: int = 4) -> MilvusClient:
    """A client for `uri`. Connecting to Milvus Lite's in-process gRPC server now and then
    fails with "Too many pings" (it throttles the keepalive pings of earlier clients; seen
    once in a few hundred test opens): a few quick retries get through. A file held by
    another process fails every attempt, ~1 s in all."""
    for attempt in range(attempts):
        try:
            return MilvusClient(uri=uri, token=token or "")
        except MilvusException:
            if attempt == attempts - 1 or not is_local_uri(uri):
                raise
            time.sleep(0.1 * 2**attempt)
    raise AssertionError("unreachable")


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
