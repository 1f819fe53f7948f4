"""What a server tells its operators: `/metrics` in Prometheus's text format, and one
access-log line per request.

Requests are counted by route (the route's template, `/entities/{name}`, never the raw path),
graph (named once it was found: a client cannot grow the label set with names of no graph)
and status, with a latency histogram. The rest is read from the pool when scraped:
answer-cache hits and misses by graph, open graphs, each open graph's rows and write
counter, and the LLM's requests and tokens.

The access log (logger `hopgraph.access`, at INFO) has time, method, route, graph, status,
milliseconds and the label (else the public id) of the key that was accepted, or `none`
(a key itself is never logged); as text, or one JSON object per line (`--log-json`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hopgraph.serve.pool import GraphPool
from hopgraph.store.follow import sizes

access_log = logging.getLogger("hopgraph.access")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The server's metrics (a registry of its own: two apps in one process never mix)."""

    def __init__(self, pool: GraphPool) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("hopgraph_requests", "HTTP requests answered",
                                ["route", "graph", "status"], registry=self.registry)
        self.latency = Histogram("hopgraph_request_seconds", "time to answer a request",
                                 ["route", "graph"], buckets=_BUCKETS, registry=self.registry)
        self.registry.register(_PoolCollector(pool))

    def observe(self, route: str, graph: str, status: int, seconds: float) -> None:
        """Count one answered request."""
        self.requests.labels(route, graph, str(status)).inc()
        self.latency.labels(route, graph).observe(seconds)

    def exposition(self) -> bytes:
        """Every metric, in the text format."""
        return generate_latest(self.registry)


class _PoolCollector(Collector):
    """The graphs' own numbers, read at each scrape."""

    def __init__(self, pool: GraphPool) -> None:
        self.pool = pool

    def collect(self) -> Iterator[Metric]:
        pool = self.pool
        cache = CounterMetricFamily("hopgraph_answer_cache", "answers served from the cache "
                                    "(hit) or computed (miss)", labels=["graph", "result"])
        for graph, stats in sorted(pool.cache.items()):
            cache.add_metric([graph, "hit"], stats.hits)
            cache.add_metric([graph, "miss"], stats.misses)
        yield cache
        services = pool.services()
        yield GaugeMetricFamily("hopgraph_open_graphs", "graphs this server has open",
                                len(services))
        rows = GaugeMetricFamily("hopgraph_graph_rows", "rows of each open graph, by kind",
                                 labels=["graph", "kind"])
        writes = GaugeMetricFamily("hopgraph_graph_writes", "the number of the last write "
                                   "this server has applied, by open graph", labels=["graph"])
        for service in services:
            graph = service.rag.store.graph
            for kind, count in sizes(service.current.retriever.graph).items():
                rows.add_metric([graph, kind], count)
            writes.add_metric([graph], service.rag.state.applied[0])
        yield rows
        yield writes
        usage = pool.llm.usage.as_dict() if pool.llm is not None else {}
        calls = CounterMetricFamily("hopgraph_llm_requests", "HTTP requests to the LLM, "
                                    "retries included")
        calls.add_metric([], usage.get("requests", 0))
        yield calls
        tokens = CounterMetricFamily("hopgraph_llm_tokens", "LLM tokens", labels=["kind"])
        tokens.add_metric(["prompt"], usage.get("prompt_tokens", 0))
        tokens.add_metric(["completion"], usage.get("completion_tokens", 0))
        yield tokens


def _template(scope: Scope, asked: Scope) -> str:
    """The template of the route that answered (`/graphs/{graph}/query`), else of the one
    whose path was `asked` (the scope as it came in): the framework names only API routes
    in the scope, not the schema or the static files; `unmatched` for a path of no route."""
    route = scope.get("route")
    if route is None:
        app = asked.get("app")
        for candidate in getattr(app, "routes", ()):
            if candidate.matches(asked)[0] is not Match.NONE:
                route = candidate
                break
    path = getattr(route, "path", None)
    if not path:
        return "unmatched"
    return f"{path}/{{path:path}}" if isinstance(route, Mount) else path


class AccessLog:
    """Counts every request in `metrics` and logs one line for it (pure ASGI: it sees the
    status whatever answered, a guard or the app)."""

    def __init__(self, app: ASGIApp, metrics: Metrics, json_lines: bool = False) -> None:
        self.app = app
        self.metrics = metrics
        self.json_lines = json_lines

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        asked = dict(scope)  # the routers change the scope as they pass it on
        status = 500  # if the app fails before it answers

        async def seen(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, seen)
        finally:
            seconds = time.perf_counter() - started
            route = _template(scope, asked)
            state = scope.get("state") or {}
            graph = state.get("graph", "")  # set once the graph is found: no label from
            self.metrics.observe(route, graph, status, seconds)  # a name that was not
            key = state.get("key")
            self._log(scope["method"], route, graph, status, seconds,
                      "none" if key is None else key.label or key.id)

    def _log(self, method: str, route: str, graph: str, status: int, seconds: float,
             key: str) -> None:
        if not access_log.isEnabledFor(logging.INFO):
            return
        line: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"), "method": method,
            "route": route, "graph": graph, "status": status,
            "ms": round(seconds * 1000, 1), "key": key}
        if self.json_lines:
            access_log.info(json.dumps(line))
        else:
            access_log.info(" ".join(f"{k}={v}" for k, v in line.items()))
