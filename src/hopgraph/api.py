"""The Python API: `GraphRAG` opens one graph, ingests into it and retrieves from it.

A thin facade: the graph's in-process state lives in `state.GraphState`, the writes in
`ingest.sync`, raw-document extraction in `ingest.extract`, retrieval in `retrieve` (a
`Query` says what to retrieve).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence, Sized
from pathlib import Path
from typing import Any

from hopgraph.answer import ANSWER_TOP_K, stream_answer
from hopgraph.config import Settings, as_number, mirror_cap
from hopgraph.embed import Embedder, embedder_for
from hopgraph.errors import UsageError
from hopgraph.graph import KnowledgeGraph
from hopgraph.ingest import extract, sync
from hopgraph.ingest.documents import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS
from hopgraph.ingest.loaders import read_items
from hopgraph.ingest.writer import Waiting
from hopgraph.llm import LLMClient
from hopgraph.progress import OnProgress, tracked
from hopgraph.records import (
    Answer,
    IngestSummary,
    LoadReport,
    PassageRecord,
    Removal,
    Retrieval,
    with_sources,
)
from hopgraph.retrieve import Retriever
from hopgraph.retrieve.query import DEFAULT_TOP_K, Query, as_query
from hopgraph.retrieve.rerank import make_reranker
from hopgraph.state import GraphState
from hopgraph.store import MilvusStore
from hopgraph.store.schema import WAIT_TIMEOUT_S
from hopgraph.store.unfinished import describe_unfinished
from hopgraph.store.vectors import VectorFile

log = logging.getLogger(__name__)
FOLLOW_SECONDS = 0.5  # with a server, reads look for other processes' writes this often


def _log_wait(holder: str) -> None:
    log.warning("waiting for the graph's writer lease, held by %s", holder)


class GraphRAG:
    """One graph in one Milvus database: ingest passages with triplets, retrieve multi-hop."""

    def __init__(
        self, uri: str | None = None, graph: str | None = None, token: str | None = None,
        embedder: str | Embedder | None = None, create: bool = True,
        memory_limit: int | None = None, llm: LLMClient | None = None,
        mirror_scan: bool = True, embed_timeout: float | None = None,
        embed_batch: int | None = None, embed_retries: int | None = None,
        rerank: str | None = None, rerank_top_n: int | None = None,
    ) -> None:
        spec = embedder if isinstance(embedder, str) or embedder is None else None
        self.settings = Settings.load(uri=uri, graph=graph, token=token, embedder=spec,
                                      memory_limit=memory_limit, embed_timeout=embed_timeout,
                                      embed_batch=embed_batch, embed_retries=embed_retries,
                                      rerank=rerank, rerank_top_n=rerank_top_n)
        # The rerank stage after retrieval (`retrieve.rerank`; None: off).
        self.reranker = make_reranker(self.settings)
        self._owns_embedder = embedder is None or isinstance(embedder, str)
        self.embedder: Embedder = (embedder_for(self.settings)
                                   if embedder is None or isinstance(embedder, str) else embedder)
        self.store = MilvusStore.from_settings(self.settings, create=create)
        try:
            self.store.open(self.embedder.name, self.embedder.dim, create=create)
            self.state: GraphState[Retriever] = GraphState(self.store, self.embedder.dim, (
                mirror_cap(self.settings.memory_limit, self.store.is_local)))
        except BaseException:
            self.close()  # a Milvus Lite file stays locked while a client holds it
            raise
        self._llm = llm
        # Told whom a write waits for while another process holds the writer lease.
        self.waiting: Waiting = _log_wait
        # With a server, `retrieve` and friends first apply other processes' writes when
        # they last looked longer ago than this (0: every time; Milvus Lite: never needed).
        self.follow_seconds = FOLLOW_SECONDS
        self._followed = time.monotonic()
        # Whether the mirror may read vectors back from Milvus when the vector files are not
        # current (seconds to minutes; worth it over many questions, not for one).
        self.mirror_scan = mirror_scan

    # --- what is open ------------------------------------------------------------------------

    @property
    def graph(self) -> KnowledgeGraph:
        """The graph as this process holds it (see `state`)."""
        return self.state.graph

    @property
    def vector_files(self) -> dict[str, VectorFile]:
        """The entity, relation and passage vectors on disk, in graph order."""
        return self.state.vectors.files

    @property
    def llm(self) -> LLMClient | None:
        """The LLM of method `llm` and of the LLM extractor (the caller owns and closes it)."""
        return self._llm

    @llm.setter
    def llm(self, client: LLMClient | None) -> None:
        self._llm = client
        self.state.forget_retriever()

    @property
    def memory_limit(self) -> int | None:
        """Rows per collection up to which searches run on the in-process mirror (0: always
        in Milvus; None: the default for the URI, see `retrieve.search.make_searcher`)."""
        return self.settings.memory_limit

    @memory_limit.setter
    def memory_limit(self, rows: int | None) -> None:
        self.settings.memory_limit = None if rows is None else as_number(
            rows, int, "memory_limit", "a whole number of rows")
        self.state.vectors.limit(mirror_cap(self.settings.memory_limit, self.store.is_local))
        self.state.forget_retriever()

    @property
    def retriever(self) -> Retriever:
        """The query pipeline over the current graph (rebuilt after each write)."""
        return self.state.retriever(lambda start: Retriever.over(
            start, self.embedder, self._llm, self.settings.memory_limit,
            scan=self.mirror_scan, fanout=self.settings.fanout, reranker=self.reranker,
            rerank_top_n=self.settings.rerank_top_n))

    # --- what callers may know of the graph's store (its innards stay behind these) -----

    @property
    def name(self) -> str:
        """The graph's name in its database."""
        return self.store.graph

    @property
    def uri(self) -> str:
        """The database: a Milvus Lite file's path or a server's URI."""
        return self.store.uri

    @property
    def created(self) -> bool:
        """Whether opening this GraphRAG created the graph (it did not exist before)."""
        return self.store.created

    def wait_indexed(self, timeout: float = WAIT_TIMEOUT_S) -> float:
        """Wait until Milvus has indexed every row (at most `timeout` s per collection;
        it indexes in the background after a write), and until this process's own
        nearest-neighbour indexes are built (`store.indexing`; at most `timeout` s more);
        returns the seconds waited."""
        started = time.perf_counter()
        self.store.wait_indexed(timeout)
        self.state.vectors.wait_indexed(timeout)
        return time.perf_counter() - started

    # --- writing -----------------------------------------------------------------------------

    def add(self, items: Iterable[PassageRecord | dict[str, Any]],
            progress: OnProgress | None = None, doc_id: str | None = None,
            append: bool = False) -> IngestSummary:
        """Ingest `PassageRecord`s or dicts {"passage", "triplets", "doc_id"?, "id"?,
        "metadata"?}; `progress` (of every `add_*`) is told `hopgraph.progress` events.

        An item's document is its own `doc_id`, else `doc_id`, else the item alone (its
        content key: adding the same text again changes nothing). A document already stored
        is replaced by what `items` say of it (unless `append`); if any item was skipped as
        malformed, nothing is pruned. `items` is consumed as a stream (a generator works),
        chunk by chunk: memory follows the chunk, not the input.
        """
        report = LoadReport(path="items")
        records = read_items(items, report, None if doc_id is None else str(doc_id))
        total = len(items) if isinstance(items, Sized) else 0
        return sync.store_records(self.state, self.embedder, records, [report],
                                  tracked(progress), total, append, self.waiting)

    def add_parts(self, parts: Sequence[sync.Part] | Callable[[], Sequence[sync.Part]],
                  done: list[IngestSummary] | None = None,
                  until: Callable[[], bool] | None = None) -> list[IngestSummary]:
        """Several independent adds in one write (group commit: one lease round, one catch-up,
        one change-log number), each stored as if alone, in order, with its own summary.
        Make the parts with `items_part` or `extracted_part`. If any part fails, the write
        stops there as a failed `add` does (its documents unfinished until written again):
        write the parts alone then to learn which one fails. `done`, if given, gets each
        part's summary as it is stored (after a failure: those of the parts before it).
        `parts` may be a function giving them, called once the write holds the lease.
        `until`, asked before each part: when true, the rest are left out (the summaries
        returned are those of the parts written)."""
        return sync.store_parts(self.state, self.embedder, parts, self.waiting, done, until)

    def add_files(self, paths: Iterable[str | Path], progress: OnProgress | None = None,
                  append: bool = False, extractor: str = "auto",
                  chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                  overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
                  root: str | Path | None = None) -> IngestSummary:
        """Ingest files and folders: passage/triplet rows (JSON, JSONL, HippoRAG OpenIE) as
        they are, raw documents (`ingest.reading.SUFFIXES`) as `add_documents` does (by
        suffix, else content). Malformed rows are skipped and reported in the summary.
        Each file is a document unless its rows name theirs; a stored one is replaced unless
        `append`. A file's document id is its path within the folder given, or its name when
        given by itself (`root`: within that folder instead); see docs/operations.md."""
        plan = extract.prepare(paths, extractor, self._llm is not None, chunk_tokens,
                               overlap_tokens, root=root)
        return self.add_prepared(plan, progress, append)

    def add_documents(self, paths: Iterable[str | Path], extractor: str = "auto",
                      progress: OnProgress | None = None, append: bool = False,
                      chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                      overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
                      root: str | Path | None = None) -> IngestSummary:
        """Ingest raw documents (.txt, .md, .pdf, .docx...) or folders: chunked, triplets by
        the LLM (`extractor="llm"`, or "auto" when this GraphRAG has one) or by the offline
        extractor ("offline", or "auto" without an LLM). Each file is a document, its id as
        for `add_files`; the summary says which extractor ran (`extractor`) and what it did
        (`extraction_notes`)."""
        plan = extract.prepare(paths, extractor, self._llm is not None, chunk_tokens,
                               overlap_tokens, documents_only=True, root=root)
        return self.add_prepared(plan, progress, append)

    def add_prepared(self, plan: extract.Plan, progress: OnProgress | None = None,
                     append: bool = False) -> IngestSummary:
        """Ingest documents read and chunked by `ingest.extract.prepare` (`add_documents`)."""
        return self.add_extracted(extract.run(plan, self._llm, tracked(progress),
                                              self.settings.names), progress,
                                  append)

    def add_extracted(self, done: extract.Extraction, progress: OnProgress | None = None,
                      append: bool = False) -> IngestSummary:
        """Ingest what `ingest.extract.run` gave; the summary says which extractor ran
        (`extractor`) and what it did (`extraction_notes`)."""
        summary = self.add_reports(done.reports, progress, append, done.aliases)
        if done.extractor is not None:
            summary.extractor, summary.extraction_notes = done.extractor, done.lines
        return summary

    def add_reports(self, reports: list[LoadReport], progress: OnProgress | None = None,
                    append: bool = False, aliases: dict[str, str] | None = None
                    ) -> IngestSummary:
        """Ingest the records of loader or extractor reports; their problems join the summary.
        Documents of a report with skipped rows are not pruned (their old passages stay).
        `aliases` (older id -> id): stored documents under an older id of a document stored
        now are removed (`ingest.inputs`)."""
        records = [record for report in reports for record in report.records]
        return sync.store_records(self.state, self.embedder, records, reports,
                                  tracked(progress), len(records), append, self.waiting,
                                  aliases)

    def delete(self, doc_ids: str | Iterable[str]) -> Removal:
        """Delete documents with everything only they hold: their passages, relations left
        without a passage, entities left without a relation (shared ones stay). Ids not
        stored are listed in `missing`; deleting them again is a no-op."""
        ids = [doc_ids] if isinstance(doc_ids, str) else list(dict.fromkeys(doc_ids))
        return sync.delete_documents(self.state, ids, self.waiting)

    def refresh(self, quick: bool = False) -> bool:
        """Apply what other processes wrote since this one last looked; whether the graph
        changed. `quick`: not when a session read finds nothing new (it can miss a write
        of the last ~0.5 s), as reads do by themselves with a server (`follow_seconds`)."""
        self._followed = time.monotonic()
        return self.state.refresh(quick)

    def follow(self, now: bool = False) -> bool:
        """Follow other processes' writes, the one way readers do (the API before each read,
        a server's follower thread every `follow_seconds`): when this process last looked
        longer ago than `follow_seconds` (`now`: whenever asked), a quick `refresh`.
        Whether the graph or its unfinished documents changed. Milvus Lite: nothing to
        follow (a file serves one process)."""
        if self.store.is_local or (
                not now and time.monotonic() - self._followed < self.follow_seconds):
            return False
        before = self.state.unfinished
        return self.refresh(quick=True) or self.state.unfinished != before

    def unfinished(self) -> dict[str, str]:
        """Documents a write left partial (it stopped, or is under way), with why, as of
        the last look at the change log (`refresh`)."""
        return dict(self.state.unfinished)

    def incomplete(self) -> str | None:
        """One line naming the documents a write left partial (`unfinished`), or None: the
        note every read of the graph carries (the API's and the server's)."""
        return describe_unfinished(self.store.graph, self.state.unfinished)

    def _noted(self, result: Retrieval) -> Retrieval:
        """`result`, with a note when the graph holds unfinished documents."""
        line = self.incomplete()
        if line and line not in result.notes:
            result.notes.append(line)
        return result

    def fork(self) -> None:
        """Give the next write its own copy of the graph even if nothing was built on the
        current version yet (a write copies it anyway when a retriever holds it): whatever
        was handed out keeps the graph it was given, whole, while the write runs (a server
        swaps to the new retriever once the write is done)."""
        self.state.fork()

    def drop(self) -> bool:
        """Delete this graph's collections (and its snapshot and vector files)."""
        return self.state.drop()

    # --- reading -----------------------------------------------------------------------------

    def retrieve(self, query: str | Query | None = None, **options: Any) -> Retrieval:
        """Graph retrieval: passages for a (multi-hop) question, best first, with evidence
        and each passage's `source` (file, page, headings, span).
        `query` is a `Query` or the question; `options` are `Query`'s fields by name
        (method, top_k, degree, entities, where), changing a given `Query`'s."""
        self.follow()
        result = self._noted(self.retriever.retrieve(as_query(query, options)))
        with_sources([result], self.passage_metadata)
        return result

    def compare(self, query: str | Query | None = None, **options: Any
                ) -> tuple[Retrieval, Retrieval]:
        """`retrieve` and `naive` side by side, the question embedded once."""
        self.follow()
        graph, naive = self.retriever.compare(as_query(query, options))
        with_sources([graph, naive], self.passage_metadata)
        return self._noted(graph), self._noted(naive)

    def ask(self, query: str | Query | None = None, **options: Any) -> Answer:
        """A cited answer: the query's passages (a question's `top_k` defaults to
        ANSWER_TOP_K, as for `hopgraph ask`), then the LLM (`llm=`) writes from them. Takes
        what `retrieve` takes, `where=` included; a UsageError without an LLM."""
        if self._llm is None:
            raise UsageError("an answer needs an LLM, and this graph was opened without one",
                             fix="GraphRAG(..., llm=LLMClient(LLMSettings(model=...))); "
                                 "`retrieve` gives the evidence without one")
        if not isinstance(query, Query):
            options.setdefault("top_k", ANSWER_TOP_K)
        result = self.retrieve(query, **options)
        text = "".join(stream_answer(self._llm, result.question, result.passages))
        return Answer(result.question, text, result, self._llm.usage.as_dict())

    def naive(self, question: str, top_k: int = DEFAULT_TOP_K) -> Retrieval:
        """Plain dense passage retrieval, for comparison."""
        return self.retrieve(question, method="naive", top_k=top_k)

    def passage_metadata(self, passage_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored metadata of these passages, by id (a passage not stored is absent):
        results carry ids and documents; this gives the rest when wanted."""
        ids = list(dict.fromkeys(passage_ids))
        rows = self.store.get(self.store.passages, ids, ["id", "metadata"]) if ids else []
        return {row["id"]: dict(row.get("metadata") or {}) for row in rows}

    def documents(self) -> dict[str, int]:
        """Every stored document and its passage count, by document id."""
        self.follow()
        return self.state.graph.documents()

    def stats(self) -> dict[str, Any]:
        """Row counts and the graph's settings."""
        return self.store.stats()

    def close(self, wait: bool = True) -> None:
        """Wait for this process's index builds (`wait_indexed`; `wait=False`: end them,
        for the next opener to build), then release the database (Milvus Lite allows one
        process per file) and own clients."""
        state = getattr(self, "state", None)  # (none when opening failed)
        try:
            if state is not None and wait:
                state.vectors.wait_indexed()
            elif state is not None:
                state.vectors.indexing.cancel()
        finally:
            self.store.close()
        if self._owns_embedder and hasattr(self.embedder, "close"):
            self.embedder.close()

    def __enter__(self) -> GraphRAG:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



def items_part(items: Iterable[PassageRecord | dict[str, Any]], doc_id: str | None = None,
               append: bool = False, progress: OnProgress | None = None) -> sync.Part:
    """What `GraphRAG.add(items, doc_id=..., append=...)` would store, read now (bad rows
    skipped and listed, as `add` lists them), as one part of `GraphRAG.add_parts`."""
    report = LoadReport(path="items")
    records = list(read_items(items, report, None if doc_id is None else str(doc_id)))
    return sync.Part(records, [report], len(records), append, None, tracked(progress))


def extracted_part(done: extract.Extraction, append: bool = False,
                   progress: OnProgress | None = None) -> sync.Part:
    """What `GraphRAG.add_extracted(done, ...)` would store, as one part of `add_parts`
    (the summary's `extractor` and `extraction_notes` are the caller's to set)."""
    records = [record for report in done.reports for record in report.records]
    return sync.Part(records, done.reports, len(records), append, done.aliases,
                     tracked(progress))
