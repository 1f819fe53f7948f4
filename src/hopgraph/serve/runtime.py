"""The runtime file of a `hopgraph serve` on a Milvus Lite database: how a command run by the
database's owner finds the server holding the file, and gets in as admin.

A Lite file serves one process at a time, so while `hopgraph serve` holds it, `hopgraph
keys` cannot open it. The server therefore leaves `<database>.server.json` beside it: its
URL, its process id and a random token it accepts as an admin key. `hopgraph keys --uri DB`
reads it and goes through the server (docs/server.md#keys-through-a-running-server).

Why this gives nobody more than they had:
- The file is made with mode 0600, and read only when it is a plain file (not a link)
  owned by the reading user with no group or other permission bits: another user can
  neither read the token nor plant a file that sends the owner's commands elsewhere.
  Whoever can read it can open the database itself, keys and all, whenever the server is
  down: the token adds nothing to that.
- The token is new at each start (32 random bytes) and the server takes it only from a
  client on this machine (a loopback address, or its own bound address), never logs it,
  and compares it in constant time.
- A file whose process is dead (a server killed without its clean shutdown) is ignored, and
  one left by an earlier server is replaced; a clean shutdown removes it, unless a newer
  server's file has replaced it.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from hopgraph.serve.jobs import process_alive

log = logging.getLogger(__name__)

SUFFIX = ".server.json"
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}


@dataclass(frozen=True)
class Runtime:
    """A server of a Lite database, as its runtime file tells it."""

    url: str
    pid: int
    database: str  # the database's resolved path
    token: str = field(repr=False)


def database_path(uri: str) -> Path:
    """A Lite URI as the resolved path the runtime file is named after."""
    return Path(uri).expanduser().resolve()


def place(uri: str) -> Path:
    """Where the runtime file of the Lite database `uri` lives."""
    db = database_path(uri)
    return db.parent / f"{db.name}{SUFFIX}"


def local_url(host: str, port: int) -> str:
    """The URL a process of this machine reaches a server bound to `host` at (a wildcard
    address: loopback)."""
    name = _WILDCARDS.get(host, host)
    return f"http://[{name}]:{port}" if ":" in name else f"http://{name}:{port}"


def new_token() -> str:
    """A token for one run of a server."""
    return "hgl_" + secrets.token_urlsafe(32)


def from_this_machine(peer: str | None, bound: str) -> bool:
    """Whether a client at `peer` is on this machine: a loopback address, or the very address
    the server is bound to (a packet from another machine does not carry it)."""
    if not peer:
        return False
    if peer == _WILDCARDS.get(bound, bound):
        return True
    try:
        return ipaddress.ip_address(peer).is_loopback
    except ValueError:
        return False


def publish(uri: str, url: str, token: str) -> Runtime:
    """Write the runtime file of this process's server of `uri`, readable by its owner only
    (a temp file renamed over the old one: a reader sees one whole file)."""
    target = place(uri)
    found = Runtime(url, os.getpid(), str(database_path(uri)), token)
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)  # whatever the umask
            json.dump({"url": found.url, "pid": found.pid, "database": found.database,
                       "token": found.token}, out)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return found


def withdraw(uri: str, runtime: Runtime) -> None:
    """Remove the runtime file at a clean shutdown, unless another server's replaced it."""
    target = place(uri)
    current = _read(target)
    if current is not None and current.token == runtime.token:
        target.unlink(missing_ok=True)


def find(uri: str) -> Runtime | None:
    """The running server of the Lite database `uri`, if its runtime file is there, is one
    this user may trust (theirs, private, not a link) and names a live process."""
    target = place(uri)
    try:
        info = target.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        log.warning("ignoring %s: not a private file of this user", target)
        return None
    found = _read(target)
    if found is None or found.database != str(database_path(uri)):
        return None
    if not process_alive(found.pid):
        log.info("ignoring %s: its server (process %d) is gone", target, found.pid)
        return None
    return found


def _read(target: Path) -> Runtime | None:
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
        return Runtime(str(data["url"]), int(data["pid"]), str(data["database"]),
                       str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
