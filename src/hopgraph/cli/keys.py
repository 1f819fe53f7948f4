"""`hopgraph keys create|list|revoke`: the API keys of a database (`store.keys`), which every
`hopgraph serve` of it accepts.

Keys are kept in the database, changed there directly or through a running server: the one
`--server` names (with an admin key, `--api-key` or HOPGRAPH_API_KEY), or by itself the
`hopgraph serve` that holds the Milvus Lite file `--uri` names, found by the runtime file it
leaves beside it (`serve.runtime`). Through a server, a change counts there at once.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from hopgraph.client import Client, ConnectionFailed, Forbidden, NotFound, Unauthorized
from hopgraph.config import ServeSettings, Settings
from hopgraph.errors import UsageError
from hopgraph.serve import runtime
from hopgraph.serve.jobs import process_alive
from hopgraph.store import MilvusStore
from hopgraph.store.keys import ROLES, KeyStore
from hopgraph.store.lite import is_local_uri

T = TypeVar("T")
STARTING_S = 10.0  # how long a server named by a runtime file may take to answer


class Keeper(Protocol):
    """Where the keys are changed: the database, or a server of it."""

    def listed(self) -> list[dict[str, Any]]: ...
    def create(self, role: str, graphs: list[str], label: str) -> dict[str, Any]: ...
    def revoke(self, ident: str) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...


class InDatabase:
    """The keys of the database itself (no server holds it)."""

    def __init__(self, store: MilvusStore) -> None:
        self.store = store
        self.keys = KeyStore(store)

    def listed(self) -> list[dict[str, Any]]:
        found = sorted(self.keys.all().values(), key=lambda k: (k.created, k.id))
        return [k.as_dict() for k in found]

    def create(self, role: str, graphs: list[str], label: str) -> dict[str, Any]:
        secret, key = self.keys.create(role, graphs, label)
        return {"key": secret, **key.as_dict()}

    def revoke(self, ident: str) -> list[dict[str, Any]]:
        return [k.as_dict() for k in self.keys.revoke(ident)]

    def close(self) -> None:
        self.store.close()


class ThroughServer:
    """The keys of a server's database, through its key routes (`hopgraph.client`)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def listed(self) -> list[dict[str, Any]]:
        return self._call(self.client.list_keys)

    def create(self, role: str, graphs: list[str], label: str) -> dict[str, Any]:
        return self._call(lambda: self.client.create_key(role, graphs, label or None))

    def revoke(self, ident: str) -> list[dict[str, Any]]:
        try:
            return self._call(lambda: self.client.revoke_key(ident))
        except NotFound:
            return []

    def close(self) -> None:
        self.client.close()

    def _call(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except (Unauthorized, Forbidden) as exc:
            raise UsageError(f"the server refused: {exc.message}", where=self.client.base_url,
                             fix="pass an admin key: --api-key KEY or HOPGRAPH_API_KEY"
                             ) from None


def keeper(args: argparse.Namespace) -> Keeper:
    """The server `--server` names; else the server holding the Lite file `--uri` names,
    if one runs; else the database itself."""
    if args.api_key and not args.server:
        raise UsageError("--api-key goes with --server", fix="--server URL --api-key KEY; "
                         "with --uri the keys are changed in the database (or through the "
                         "server holding its Lite file, which needs no key)")
    if args.server:
        if args.uri:
            raise UsageError("--server and --uri name two places for the keys",
                             fix="give one: a server changes the keys of its own database")
        key = args.api_key or ServeSettings.load().api_key
        return ThroughServer(Client(args.server, api_key=key))
    settings = Settings.load(uri=args.uri, token=args.token)  # any graph name connects
    found = runtime.find(settings.uri) if is_local_uri(settings.uri) else None
    through = reach(found) if found is not None else None
    if through is not None:
        return through
    return InDatabase(MilvusStore.from_settings(settings))


def reach(found: runtime.Runtime) -> ThroughServer | None:
    """The server a runtime file names, once it answers with the file's token (it may be
    starting); None, said on stderr, if it does not (then the database is opened: it fails
    if a process holds it)."""
    client = Client(found.url, api_key=found.token, timeout=30.0)
    deadline = time.monotonic() + STARTING_S
    while True:
        try:
            client.list_keys()
        except ConnectionFailed as exc:
            if time.monotonic() < deadline and process_alive(found.pid):
                time.sleep(0.5)  # polling a server that is starting
                continue
            why = f"does not answer ({exc.what})"
        except (Unauthorized, Forbidden):
            why = "does not take its token (another server there?)"
        else:
            print(f"through the server at {found.url} (process {found.pid}), which holds "
                  "the database", file=sys.stderr)
            return ThroughServer(client)
        client.close()
        print(f"note: the server at {found.url} (process {found.pid}) {why}; opening the "
              "database itself", file=sys.stderr)
        return None


def cmd_keys(args: argparse.Namespace) -> int:
    """Make, list or revoke keys."""
    if args.action == "create" and args.role == "admin" and args.graphs:
        raise UsageError("an admin key may use every graph: leave out --graph")
    if args.action == "create" and args.role != "admin" and not args.graphs:
        raise UsageError(f"a {args.role} key needs the graphs it may use",
                         fix="--graph NAME (repeatable)")
    keys = keeper(args)
    try:
        if args.action == "create":
            made = keys.create(args.role, args.graphs or [], args.label or "")
            if args.json:
                print(json.dumps(made))
            else:
                print(made["key"])
                print(f"key {made['id']} ({made['role']}; graphs: {', '.join(made['graphs'])})"
                      " made; it is shown this once and stored only as a hash",
                      file=sys.stderr)
        elif args.action == "list":
            found = keys.listed()
            if args.json:
                print(json.dumps(found, indent=2))
            for k in found if not args.json else []:
                print(f"{k['id']}  {k['role']:<5}  {','.join(k['graphs']):<20}  "
                      f"{k['created']}  {k['label']}")
            if not found and not args.json:
                print("no keys", file=sys.stderr)
        else:
            gone = keys.revoke(args.ident)
            if not gone:
                raise UsageError(f"no key has the id or label {args.ident!r}",
                                 fix="`hopgraph keys list` shows them")
            for k in gone:
                print(f"revoked {k['id']} ({k['role']}, {k['label'] or 'no label'})")
    finally:
        keys.close()
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser],
               parents: list[argparse.ArgumentParser]) -> None:
    """The `keys` subcommand (the connection options after the action: `--graph` of
    `create` names the key's graphs)."""
    connection = argparse.ArgumentParser(add_help=False)
    connection.add_argument("--uri", help="the Milvus database whose keys these are: a .db "
                            "path or http://host:19530 [env HOPGRAPH_URI]; a `hopgraph serve` "
                            "holding the .db file is found and used")
    connection.add_argument("--token", help="Milvus / Zilliz Cloud token [env HOPGRAPH_TOKEN]")
    connection.add_argument("--server", metavar="URL",
                            help="change the keys through this `hopgraph serve` instead "
                                 "(e.g. http://127.0.0.1:8000), with an admin key")
    connection.add_argument("--api-key", metavar="KEY",
                            help="with --server: an admin key [env HOPGRAPH_API_KEY; the "
                                 "variable keeps it out of the process list]")
    connection.add_argument("-v", "--verbose", action="store_true", help="log details")
    p = sub.add_parser("keys", help="API keys for `hopgraph serve`, kept in the database")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", parents=[connection],
                                help="make a key; it is printed once")
    create.add_argument("--role", choices=ROLES, required=True,
                        help="read: query and look; write: also add and delete documents; "
                             "admin: everything, every graph, /metrics, keys")
    create.add_argument("--graph", dest="graphs", action="append", metavar="NAME",
                        help="a graph the key may use (repeatable; not for admin keys)")
    create.add_argument("--label", help="a name for the key (in `keys list` and the "
                                        "server's access log)")
    create.add_argument("--json", action="store_true", help='print {"key": ..., ...}')
    listing = actions.add_parser("list", parents=[connection],
                                 help="the keys (never the keys themselves)")
    listing.add_argument("--json", action="store_true")
    revoke = actions.add_parser("revoke", parents=[connection],
                                help="delete keys by id or label")
    revoke.add_argument("ident", metavar="ID_OR_LABEL")
    p.set_defaults(func=cmd_keys)
