"""What the commands share: opening a graph or an LLM as the arguments say, progress bars."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from typing import Any

from hopgraph.api import GraphRAG
from hopgraph.config import LLMSettings, Settings
from hopgraph.errors import StoreError
from hopgraph.llm import LLMClient
from hopgraph.progress import ProgressEvent
from hopgraph.store import MilvusStore
from hopgraph.where import Where


def llm_configured(args: argparse.Namespace) -> LLMSettings | None:
    """The LLM settings the arguments and HOPGRAPH_LLM_* give, when they name a model."""
    if getattr(args, "no_llm", False):
        return None
    settings = LLMSettings.from_env(model=getattr(args, "llm", None),
                                    base_url=getattr(args, "llm_base_url", None))
    return settings if settings.configured else None


def llm_client(args: argparse.Namespace) -> LLMClient | None:
    """The LLM client the arguments and HOPGRAPH_LLM_* ask for, or None (offline)."""
    settings = llm_configured(args)
    return LLMClient(settings) if settings is not None else None


def embed_options(args: argparse.Namespace) -> dict[str, Any]:
    """GraphRAG's arguments for the embedder and reranker the common options name
    (--embedder, --embed-timeout, --embed-batch, --embed-retries, --rerank,
    --rerank-top-n)."""
    return {"embedder": args.embedder, "embed_timeout": args.embed_timeout,
            "embed_batch": args.embed_batch, "embed_retries": args.embed_retries,
            "rerank": getattr(args, "rerank", None),
            "rerank_top_n": getattr(args, "rerank_top_n", None)}


def open_graph(args: argparse.Namespace, create: bool = True, llm: LLMClient | None = None
               ) -> GraphRAG:
    """The graph the common options name (--uri, --graph, --token, --embedder...); a read of
    a graph left incomplete by a write that did not finish says so on stderr."""
    rag = GraphRAG(uri=args.uri, graph=args.graph, token=args.token, **embed_options(args),
                   create=create, llm=llm, memory_limit=getattr(args, "memory_limit", None),
                   mirror_scan=not one_shot(args))
    incomplete = None if create else rag.incomplete()
    if incomplete:
        print(f"warning: {incomplete}", file=sys.stderr)
    return rag


def where_options(p: argparse.ArgumentParser) -> None:
    """--where and --doc: the filter of a query (docs/filters.md)."""
    p.add_argument("--where", metavar="JSON",
                   help='keep only passages this filter matches, e.g. \'{"year": {"$gte": '
                        '2020}, "lang": "en"}\' (docs/filters.md)')
    p.add_argument("--doc", action="append", metavar="ID",
                   help="keep only passages of this document (repeatable; with --where: both)")


def where_of(args: argparse.Namespace) -> Where | None:
    """The filter --where and --doc ask for (None: no filter)."""
    where = Where.parse(args.where) if getattr(args, "where", None) else None
    docs = getattr(args, "doc", None)
    if not docs:
        return where
    only = {"doc_id": {"$in": list(dict.fromkeys(docs))}}
    return Where.parse(only if where is None else {"$and": [where.as_dict(), only]})


def one_shot(args: argparse.Namespace) -> bool:
    """One question per process: the mirror is used only when the vector files beside the
    snapshot are current (memory-mapped, nearly free), never by reading every vector back
    from Milvus first (slow next to one question: benchmarks/RESULTS.md, "One-shot query and
    reopen timings"; it pays off only over many questions).
    `eval` and library users may scan; `--memory-limit` / HOPGRAPH_MEMORY_LIMIT choose."""
    explicit = Settings.load(memory_limit=getattr(args, "memory_limit", None)).memory_limit
    return args.command in ("query", "ask") and explicit is None


def open_store(args: argparse.Namespace) -> MilvusStore:
    """The graph's collections alone: stats and drop need no embedder and no graph load."""
    settings = Settings.load(uri=args.uri, graph=args.graph, token=args.token)
    store = MilvusStore.from_settings(settings, create=False)
    if not store.exists():
        store.close()
        raise StoreError(f"graph {settings.graph!r} does not exist at {settings.uri}",
                         fix="check --uri and --graph, or ingest first")
    return store


class Bars:
    """Progress of named stages, read from `ProgressEvent`s (what the Python API's and the
    server's watchers get too): tqdm bars on a terminal, one line per stage elsewhere.

    On a pipe or in CI a bar's carriage-return updates fill logs with thousands of lines, so
    there each stage prints one line when it ends: "ingest: 1890 rows in 152.3 s".
    """

    def __init__(self, unit: str = "rows", prefix: str = "",
                 interactive: bool | None = None, units: dict[str, str] | None = None) -> None:
        self.unit = unit
        self.units = units or {}  # stages counted in something else than `unit`
        self.prefix = prefix
        self.interactive = sys.stderr.isatty() if interactive is None else interactive
        self._bars: dict[str, Any] = {}  # terminal: one tqdm bar per stage
        self._started: dict[str, float] = {}  # elsewhere: when each stage began
        self._reported: set[str] = set()

    def __call__(self, event: ProgressEvent | str, done: int = 0, total: int = 0) -> None:
        """An event's stage has done `done` of `total` (also taken as the three values)."""
        if isinstance(event, str):
            event = ProgressEvent(event, done, total, self.unit)
        stage, done, total = event.stage, event.done, event.total
        if self.interactive:
            self._bar(event)
            return
        started = self._started.setdefault(stage, time.perf_counter())
        if done >= total and stage not in self._reported:
            self._reported.add(stage)
            print(f"{self.prefix}{stage}: {total} {self._unit(event)} in "
                  f"{time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)

    def _unit(self, event: ProgressEvent) -> str:
        return self.units.get(event.stage, self.unit if event.unit == "rows" else event.unit)

    def _bar(self, event: ProgressEvent) -> None:
        from tqdm import tqdm

        stage, done, total = event.stage, event.done, event.total
        bar = self._bars.get(stage)
        if bar is None:
            bar = self._bars[stage] = tqdm(total=total, desc=f"{self.prefix}{stage}",
                                           unit=self._unit(event), file=sys.stderr,
                                           leave=False)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()


def short(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters."""
    return textwrap.shorten(" ".join(text.split()), width=width, placeholder=" …")
