"""`hopgraph keys create|list|revoke`: the API keys of a database (`store.keys`), which every
`hopgraph serve` of it accepts."""

from __future__ import annotations

import argparse
import json
import sys

from hopgraph.config import Settings
from hopgraph.errors import UsageError
from hopgraph.store import MilvusStore
from hopgraph.store.keys import ROLES, KeyStore


def _keys(args: argparse.Namespace) -> tuple[MilvusStore, KeyStore]:
    settings = Settings.load(uri=args.uri, token=args.token)  # any graph name connects
    store = MilvusStore(settings.uri, settings.graph, settings.token)
    return store, KeyStore(store)


def cmd_keys(args: argparse.Namespace) -> int:
    """Make, list or revoke keys."""
    store, keys = _keys(args)
    try:
        if args.action == "create":
            if args.role == "admin" and args.graphs:
                raise UsageError("an admin key may use every graph: leave out --graph")
            secret, key = keys.create(args.role, args.graphs or [], args.label or "")
            if args.json:
                print(json.dumps({"key": secret, **key.as_dict()}))
            else:
                print(secret)
                print(f"key {key.id} ({key.role}; graphs: {', '.join(key.graphs)}) made; it "
                      "is shown this once and stored only as a hash", file=sys.stderr)
        elif args.action == "list":
            found = sorted(keys.all().values(), key=lambda k: k.created)
            if args.json:
                print(json.dumps([k.as_dict() for k in found], indent=2))
            for k in found if not args.json else []:
                print(f"{k.id}  {k.role:<5}  {','.join(k.graphs):<20}  {k.created}  {k.label}")
            if not found and not args.json:
                print("no keys", file=sys.stderr)
        else:
            gone = keys.revoke(args.ident)
            if not gone:
                raise UsageError(f"no key has the id or label {args.ident!r}",
                                 fix="`hopgraph keys list` shows them")
            for k in gone:
                print(f"revoked {k.id} ({k.role}, {k.label or 'no label'})")
    finally:
        store.close()
    return 0


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]
               ) -> None:
    """The `keys` subcommand (the connection options after the action: `--graph` of
    `create` names the key's graphs)."""
    connection = argparse.ArgumentParser(add_help=False)
    connection.add_argument("--uri", help="the Milvus database whose keys these are: a .db "
                            "path or http://host:19530 [env HOPGRAPH_URI]")
    connection.add_argument("--token", help="Milvus / Zilliz Cloud token [env HOPGRAPH_TOKEN]")
    connection.add_argument("-v", "--verbose", action="store_true", help="log details")
    p = sub.add_parser("keys", help="API keys for `hopgraph serve`, kept in the database")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", parents=[connection],
                                help="make a key; it is printed once")
    create.add_argument("--role", choices=ROLES, required=True,
                        help="read: query and look; write: also add and delete documents; "
                             "admin: everything, every graph, /metrics")
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
