"""`hopgraph serve`: the REST API and the web page, in one warm process."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys

from hopgraph.cli.common import llm_client, open_graph
from hopgraph.errors import UsageError


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    """Open the graph once and serve it until interrupted."""
    try:
        from hopgraph.serve.app import ServeSettings, run
        from hopgraph.serve.service import GraphService
    except ImportError as exc:
        raise UsageError(f"`hopgraph serve` needs the 'serve' extra ({exc.name} is missing)",
                         fix='pip install "hopgraph[serve]"') from None
    if args.max_body_mb <= 0:
        raise UsageError(f"--max-body-mb must be positive, got {args.max_body_mb}")
    key = os.environ.get("HOPGRAPH_API_KEY") or None
    if key is None and not _loopback(args.host):
        print(f"warning: serving on {args.host}, reachable from other machines, with no API "
              "key: anyone who can connect can read and change the graph (set "
              "HOPGRAPH_API_KEY)", file=sys.stderr)
    origins = [o.strip() for o in os.environ.get("HOPGRAPH_CORS_ORIGINS", "").split(",")
               if o.strip()]
    settings = ServeSettings(api_key=key, cors_origins=origins,
                             max_body_bytes=int(args.max_body_mb * 1024 * 1024))
    llm = llm_client(args)
    try:
        with open_graph(args, llm=llm) as rag:
            service = GraphService(rag, llm, cache_size=args.cache)
            print(f"hopgraph: serving graph {rag.store.graph!r} of {rag.store.uri} at "
                  f"http://{args.host}:{args.port}/ (API docs at /docs"
                  f"{', API key required' if key else ''}; LLM: "
                  f"{llm.settings.model if llm else 'none'}); Ctrl-C stops", file=sys.stderr)
            run(service, args.host, args.port, settings)
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
    p.add_argument("--max-body-mb", type=float, default=10.0, metavar="MB",
                   help="largest request body accepted (10 MB; larger: 413)")
    p.add_argument("--cache", type=int, default=1024, metavar="N",
                   help="answers to repeated /query requests kept until the next write "
                        "(1024; 0: none)")
    p.set_defaults(func=cmd_serve)
