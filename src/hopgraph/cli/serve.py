"""`hopgraph serve`: the REST API and the web page, in one warm process."""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys

from hopgraph.cli.common import llm_client, open_graph
from hopgraph.config import (
    DEFAULT_ANSWER_CACHE,
    DEFAULT_MAX_BODY_MB,
    DEFAULT_MAX_FILE_MB,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_GRAPHS,
    DEFAULT_MAX_JOBS,
    DEFAULT_WRITE_WAIT,
    ServeSettings,
)
from hopgraph.errors import UsageError, install_extra
from hopgraph.store.lite import is_local_uri


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
        import python_multipart  # noqa: F401  (uploads are multipart forms)

        from hopgraph.serve.app import run
        from hopgraph.serve.pool import GraphPool
        from hopgraph.serve.service import GraphService, database_keys
    except ImportError as exc:
        raise UsageError(f"`hopgraph serve` needs the 'serve' extra ({exc.name} is missing)",
                         fix=install_extra("serve")) from None
    if args.max_body_mb <= 0:
        raise UsageError(f"--max-body-mb must be positive, got {args.max_body_mb}")
    settings = ServeSettings.load(max_body_bytes=int(args.max_body_mb * 1024 * 1024),
                                  cache_size=args.cache, allowed_hosts=args.allowed_hosts,
                                  log_json=args.log_json, max_graphs=args.max_graphs,
                                  max_file_mb=args.max_file_mb, max_files=args.max_files,
                                  max_jobs=args.max_jobs, write_wait=args.write_wait)
    settings.allowed_hosts = settings.allowed_hosts or default_hosts(args.host)
    key = settings.api_key
    llm = llm_client(args)
    try:
        rag = open_graph(args, llm=llm)
        try:
            stored = database_keys(rag).all()
            warn_or_refuse(args, is_local_uri(rag.uri), key is not None or bool(stored))
            pool = GraphPool(GraphService(rag, llm, cache_size=settings.cache_size),
                             settings.max_graphs, owns_first=True)
        except BaseException:
            rag.close()
            raise
        try:
            print(f"hopgraph: serving graph {rag.name!r} (and the database's other "
                  f"graphs at /graphs/NAME/) of {rag.uri} at http://{args.host}:"
                  f"{args.port}/ (API docs at /docs"
                  f"{', API key required' if key or stored else ''}; LLM: "
                  f"{llm.settings.model if llm else 'none'}); Ctrl-C stops", file=sys.stderr)
            run(pool, args.host, args.port, settings)
        finally:
            pool.close()
    finally:
        if llm is not None:
            llm.close()
    return 0


def warn_or_refuse(args: argparse.Namespace, lite: bool, keyed: bool) -> None:
    """Refuse to serve beyond loopback with no key (unless --no-auth); say what a Milvus
    Lite file shares with local processes."""
    if not keyed and not _loopback(args.host):
        if not args.no_auth:
            raise UsageError(f"refusing to serve on {args.host}, reachable from other "
                             "machines, with no API key", fix="set HOPGRAPH_API_KEY, "
                             "make keys with `hopgraph keys create`, or pass --no-auth")
        print(f"warning: serving on {args.host} with no API key (--no-auth): anyone "
              "who can connect can read and change the graph", file=sys.stderr)
    if lite and not _loopback(args.host):
        print("warning: this graph is a Milvus Lite file: while it is open, other "
              "processes on this machine can read and change it through Milvus "
              "Lite's own unauthenticated local port, whatever the API key; on a "
              "shared host use a Milvus server with a token", file=sys.stderr)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser],
               parents: list[argparse.ArgumentParser]) -> None:
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
    p.add_argument("--max-graphs", type=int, default=None, metavar="N",
                   help=f"graphs kept open at once, the least recently used closed first "
                        f"({DEFAULT_MAX_GRAPHS}; env HOPGRAPH_MAX_GRAPHS)")
    p.add_argument("--max-file-mb", type=float, default=None, metavar="MB",
                   help=f"largest uploaded file (POST /uploads; {DEFAULT_MAX_FILE_MB:g} MB; "
                        "larger: 413; env HOPGRAPH_MAX_FILE_MB)")
    p.add_argument("--max-files", type=int, default=None, metavar="N",
                   help=f"files per upload ({DEFAULT_MAX_FILES}; more: 422; env "
                        "HOPGRAPH_MAX_FILES)")
    p.add_argument("--max-jobs", type=int, default=None, metavar="N",
                   help=f"upload jobs queued or running at once ({DEFAULT_MAX_JOBS}; more: "
                        "429; env HOPGRAPH_MAX_JOBS)")
    p.add_argument("--write-wait", type=float, default=None, metavar="S",
                   help="seconds a POST or DELETE /documents waits behind another write of "
                        f"its graph, an upload's file say ({DEFAULT_WRITE_WAIT:g}; then: 503 "
                        "with Retry-After, nothing written; env HOPGRAPH_WRITE_WAIT)")
    p.add_argument("--cache", type=int, default=DEFAULT_ANSWER_CACHE, metavar="N",
                   help="answers to repeated /query requests kept until the next write "
                        f"({DEFAULT_ANSWER_CACHE}; 0: none)")
    p.set_defaults(func=cmd_serve)
