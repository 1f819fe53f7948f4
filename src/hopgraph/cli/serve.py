"""`hopgraph serve`: the REST API and the web page, in one warm process."""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys

from hopgraph.cli.common import llm_client, open_graph
from hopgraph.config import DEFAULT_ANSWER_CACHE, DEFAULT_MAX_BODY_MB, ServeSettings
from hopgraph.errors import UsageError
from hopgraph.store.keys import KeyStore


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_hosts(host: str) -> list[str]:
    """The Host names served when none are given: the bound address and the local names
    (with a wildcard address, this machine's name too)."""
    names = ["localhost", "127.0.0.1", "::1"]
    if host in ("0.0.0.0", "::", ""):
        names.append(socket.gethostname())
    elif host not in names:
        names.append(host)
    return names


def cmd_serve(args: argparse.Namespace) -> int:
    """Open the graph once and serve it until interrupted."""
    try:
        from hopgraph.serve.app import run
        from hopgraph.serve.service import GraphService
    except ImportError as exc:
        raise UsageError(f"`hopgraph serve` needs the 'serve' extra ({exc.name} is missing)",
                         fix='pip install "hopgraph[serve]"') from None
    if args.max_body_mb <= 0:
        raise UsageError(f"--max-body-mb must be positive, got {args.max_body_mb}")
    settings = ServeSettings.load(max_body_bytes=int(args.max_body_mb * 1024 * 1024),
                                  cache_size=args.cache, allowed_hosts=args.allowed_hosts,
                                  log_json=args.log_json)
    settings.allowed_hosts = settings.allowed_hosts or default_hosts(args.host)
    key = settings.api_key
    llm = llm_client(args)
    try:
        with open_graph(args, llm=llm) as rag:
            stored = KeyStore(rag.store).all()
            if key is None and not _loopback(args.host) and not stored:
                if not args.no_auth:
                    raise UsageError(f"refusing to serve on {args.host}, reachable from other "
                                     "machines, with no API key", fix="set HOPGRAPH_API_KEY, "
                                     "make keys with `hopgraph keys create`, or pass --no-auth")
                print(f"warning: serving on {args.host} with no API key (--no-auth): anyone "
                      "who can connect can read and change the graph", file=sys.stderr)
            if rag.store.is_local and not _loopback(args.host):
                print("warning: this graph is a Milvus Lite file: while it is open, other "
                      "processes on this machine can read and change it through Milvus "
                      "Lite's own unauthenticated local port, whatever the API key; on a "
                      "shared host use a Milvus server with a token", file=sys.stderr)
            service = GraphService(rag, llm, cache_size=settings.cache_size)
            print(f"hopgraph: serving graph {rag.store.graph!r} of {rag.store.uri} at "
                  f"http://{args.host}:{args.port}/ (API docs at /docs"
                  f"{', API key required' if key or stored else ''}; LLM: "
                  f"{llm.settings.model if llm else 'none'}); Ctrl-C stops", file=sys.stderr)
            try:
                run(service, args.host, args.port, settings)
            finally:
                service.close()
    finally:
        if llm is not None:
            llm.close()
    return 0


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]
               ) -> None:
    """The `serve` subcommand."""
    p = sub.add_parser("serve", parents=parents,
                       help="serve the REST API and the web page (needs the 'serve' extra)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (8000)")
    p.add_argument("--max-body-mb", type=float, default=DEFAULT_MAX_BODY_MB, metavar="MB",
                   help=f"largest request body accepted ({DEFAULT_MAX_BODY_MB:g} MB; larger: "
                        "413)")
    p.add_argument("--allowed-hosts", metavar="NAMES", default=None,
                   help="Host header names served, comma-separated ('*.example.com' and '*' "
                        "allowed; default: the bound address and localhost names; env "
                        "HOPGRAPH_ALLOWED_HOSTS)")
    p.add_argument("--no-auth", action="store_true",
                   help="serve beyond loopback with no API key (otherwise refused)")
    p.add_argument("--log-json", action="store_true",
                   help="write the access log (one line per request, on stderr) as JSON")
    p.add_argument("--cache", type=int, default=DEFAULT_ANSWER_CACHE, metavar="N",
                   help="answers to repeated /query requests kept until the next write "
                        f"({DEFAULT_ANSWER_CACHE}; 0: none)")
    p.set_defaults(func=cmd_serve)
