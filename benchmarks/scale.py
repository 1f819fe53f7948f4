"""How hopgraph's costs grow with the graph: synthetic skewed graphs, a fast fake embedder.

Usage (from the repository root):
  .venv/bin/python benchmarks/scale.py                 # 10k and 100k relations
  .venv/bin/python benchmarks/scale.py --sizes 10000 100000 1000000
Each size runs on Milvus Lite in a temporary folder, in three fresh processes (so each
peak memory is that stage's): ingest (a stream of passages; rows/s, peak RSS, hopgraph's own
graph size); reopen from the snapshot, first and warm default-method queries (in-memory
mirror, then every search in Milvus), expansion degree 1 and 2 against the matrix powers,
fuzzy linking of a misspelt name; reopen cold (snapshot deleted: graph and vectors read back
from Milvus) and its first query. Prints one markdown row per size.
Memory: "RSS" includes Milvus Lite, which runs inside the process; "graph + linker" and
"mirror" are hopgraph's own structures, summed object by object (`deep_bytes`).
The embedder is a deterministic hash of the text, so the model is not in the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

DIM = 384
POWERS_MAX_GB = 8.0  # above this the matrix-power reference is not built (reported instead)
WORD = re.compile(r"\w+")
# Word vectors: mostly in a shared 32-dimensional "topic" space, plus a word's own part.
TOPICS = np.linalg.qr(np.random.default_rng(7).standard_normal((DIM, 32)))[0].astype(np.float32)
OWN = 0.5
PREDICATES = ["founded", "directed", "was born in", "is part of", "married", "wrote",
              "plays for", "is located in", "owns", "succeeded"]


class HashEmbedder:
    """A bag of hashed words: each word has a fixed pseudo-random unit vector (seeded by a
    hash of the word), a text's vector is the normalized sum of its words'. Fast,
    deterministic, no model, and shaped like a sentence embedding where it matters here:
    texts sharing words (an entity's name, a predicate) are near each other, so nearest
    neighbours are meaningful and an approximate index can be judged on them. (Vectors drawn
    at random per text, as before 2026-11-25, have no neighbours at all: every point is
    about as far from a query as every other.)"""

    name = "bench:hash-words-384"
    dim = DIM

    def __init__(self) -> None:
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vector = self._words.get(word)
        if vector is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            draw = np.random.default_rng(seed)
            vector = (TOPICS @ draw.standard_normal(len(TOPICS[0])) / np.sqrt(len(TOPICS[0]))
                      + OWN * draw.standard_normal(DIM) / np.sqrt(DIM)).astype(np.float32)
            if len(self._words) < 100_000:  # entity numbers are words too: keep it bounded
                self._words[word] = vector
        return vector

    def embed(self, texts: list[str]) -> np.ndarray:
        """One unit vector per text (a text without words gets its own hashed vector)."""
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            words = WORD.findall(text.lower()) or [text]
            out[i] = np.sum([self._word(w) for w in words], axis=0)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def graph_spec(n_relations: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """`n_relations` distinct (subject, object) index pairs drawn with a skewed (Zipf) degree
    distribution, a predicate index for each, and the entity names."""
    rng = np.random.default_rng(seed)
    n_entities = max(10, n_relations // 2)
    syllables = np.array(["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zu", "an", "el", "or"])
    parts = syllables[rng.integers(0, len(syllables), size=(n_entities, 5))]
    names = [f"{''.join(p[:2]).capitalize()} {''.join(p[2:]).capitalize()} {i}"
             for i, p in enumerate(parts.tolist())]
    weights = 1.0 / np.arange(1, n_entities + 1) ** 1.1
    weights /= weights.sum()
    ends = np.zeros((0, 2), dtype=np.int64)
    predicates = np.zeros(0, dtype=np.int64)
    while len(ends) < n_relations:  # the hubs draw the same triple again: redraw those
        more = n_relations - len(ends) + n_relations // 10 + 10
        ends = np.vstack([ends, rng.choice(n_entities, size=(more, 2), p=weights)])
        predicates = np.concatenate([predicates, rng.integers(0, len(PREDICATES), size=more)])
        keys = (ends[:, 0] * n_entities + ends[:, 1]) * len(PREDICATES) + predicates
        first = np.sort(np.unique(keys, return_index=True)[1])
        ends, predicates = ends[first], predicates[first]
    return ends[:n_relations], predicates[:n_relations], names


def records(ends: np.ndarray, predicates: np.ndarray, names: list[str]) -> Iterator:
    """Passages of 10 triplets each, made as they are read (the input is a stream)."""
    from hopgraph.records import PassageRecord, Triplet

    for start in range(0, len(ends), 10):
        triplets = [Triplet(names[s], PREDICATES[p], names[o]) for (s, o), p in
                    zip(ends[start:start + 10].tolist(), predicates[start:start + 10].tolist(),
                        strict=True)]
        text = f"Passage {start // 10}. " + " ".join(
            f"{t.subject} {t.predicate} {t.object}." for t in triplets)
        yield PassageRecord(text, triplets)


def deep_bytes(*roots: object) -> int:
    """Bytes held by Python containers, strings and NumPy/SciPy arrays reachable from
    `roots` (each object counted once): what hopgraph's own structures take."""
    seen: set[int] = set()
    stack, total = list(roots), 0
    while stack:
        item = stack.pop()
        if id(item) in seen or item is None or isinstance(item, (type, int, float, bool)):
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            total += item.nbytes if item.base is None else 0
            if item.base is not None:
                stack.append(item.base)
            continue
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif hasattr(item, "__dict__") and not callable(item):
            stack.extend(vars(item).values())
        elif hasattr(item, "__slots__"):
            stack.extend(getattr(item, name, None) for name in item.__slots__)
    return total


def percentiles(ms: list[float]) -> tuple[float, float]:
    ordered = sorted(ms)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def timed_queries(rag, questions: list[str]) -> tuple[float, float, float]:
    """First query (builds the mirror / linker) in ms, then warm p50 and p95 in ms."""
    started = time.perf_counter()
    rag.retrieve(questions[0])
    first = (time.perf_counter() - started) * 1000
    warm = []
    for q in questions[1:]:
        started = time.perf_counter()
        rag.retrieve(q)
        warm.append((time.perf_counter() - started) * 1000)
    return (first, *percentiles(warm))


def rss_gb() -> float:
    """Resident memory of this process now, GB."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30


def questions_for(size: int) -> tuple[list[str], list[str]]:
    """21 questions naming entities that have relations, and the entity names."""
    ends, _, names = graph_spec(size)
    rng = np.random.default_rng(1)
    picks = rng.choice(np.unique(ends), size=21, replace=False).tolist()
    return [f"Who founded the company that {names[i]} owns?" for i in picks], [
        names[i] for i in picks]


def open_graph(uri: str, **options: object):
    from hopgraph import GraphRAG

    return GraphRAG(uri=uri, graph="scale", embedder=HashEmbedder(), **options)


def stage_ingest(size: int, uri: str) -> dict[str, float]:
    """Ingest the synthetic graph as a stream of passages."""
    ends, predicates, names = graph_spec(size)
    row: dict[str, float] = {}
    if "://" in uri:  # a server: start from an empty graph
        with open_graph(uri) as old:
            old.drop()
    built = AnnBuilds()
    logging.getLogger("hopgraph.store.ann").addHandler(built)
    logging.getLogger("hopgraph.store.ann").setLevel(logging.INFO)
    started = time.perf_counter()
    with open_graph(uri) as rag:
        summary = rag.add(records(ends, predicates, names))
        stored = summary.passages_added + summary.entities_added + summary.relations_added
        row["ingest_s"] = time.perf_counter() - started
        row["rows_per_s"] = stored / row["ingest_s"]
        row["ingest_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        # The nearest-neighbour indexes are built in the background once the write returns
        # (store.indexing): the time until they are, and the peak with them.
        if "://" not in uri:  # (a server builds its own, waited for by the reopen stage)
            row["ann_wait_s"] = rag.wait_indexed(timeout=7200)
        row["ann_build_s"] = built.seconds
        row["indexed_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        row["relations"] = len(rag.graph.relations)
        row["hopgraph_after_ingest_mb"] = deep_bytes(rag.graph) / 2**20
        closing = time.perf_counter()
    row["close_s"] = time.perf_counter() - closing
    return row


class AnnBuilds(logging.Handler):
    """Adds up the seconds the nearest-neighbour indexes took to build (store.ann's log)."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("ANN index") and record.args:
            self.seconds += float(record.args[-1])


def stage_reopen(size: int, uri: str) -> dict[str, float]:
    """A new process: reopen from the snapshot, query both backends, expand, link."""
    from hopgraph.graph.reference import MatrixPowers

    questions, picked = questions_for(size)
    row: dict[str, float] = {}
    before = rss_gb()
    started = time.perf_counter()
    rag = open_graph(uri, create=False)
    row["reopen_snapshot_s"] = time.perf_counter() - started
    row["reopen_rss_mb"] = (rss_gb() - before) * 1024
    # A server builds its indexes in the background after the ingest's flush: queries timed
    # meanwhile would measure that build's load. (Lite's FLAT indexes need no build.)
    row["index_wait_s"] = rag.wait_indexed(timeout=3600)
    for backend, limit in (("mirror", 10**8), ("milvus", 0)):
        rag.memory_limit = limit  # a new retriever, searching where the limit says
        first, p50, p95 = timed_queries(rag, questions)
        row[f"{backend}_first_ms"], row[f"{backend}_p50_ms"], row[f"{backend}_p95_ms"] = (
            first, p50, p95)
    # Peak so far: queries on both backends (what is sized below and the matrix-power
    # reference need more).
    row["reopen_peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    typo = picked[0][:-3] + picked[0][-2:]
    row.update(own_structures(rag, f"Who founded the company of {typo}?"))
    graph = rag.graph
    rng = np.random.default_rng(2)
    seeds = rng.choice(len(graph.relations), size=3, replace=False).tolist()
    ents = [int(graph.subjects[s]) for s in seeds]
    # The reference precomputes A·Aᵀ and Aᵀ·A: Aᵀ·A has Σ deg(e)² entries (hubs!).
    degrees = np.asarray(graph.incidence.sum(axis=1)).ravel()
    row["powers_gb"] = float((degrees**2).sum()) * 12 / 2**30  # CSR: 8-byte value + 4 index
    powers = None
    if row["powers_gb"] <= POWERS_MAX_GB:
        started = time.perf_counter()
        powers = MatrixPowers(graph.incidence)
        row["powers_build_s"] = time.perf_counter() - started
    for degree in (1, 2):
        started = time.perf_counter()
        walked = graph.expand(ents, seeds, degree)
        row[f"expand{degree}_ms"] = (time.perf_counter() - started) * 1000
        if powers is not None:
            started = time.perf_counter()
            powered = powers.expand(ents, seeds, degree)
            row[f"powers{degree}_ms"] = (time.perf_counter() - started) * 1000
            assert np.array_equal(walked, powered)
    del powers
    rag.close()
    return row


def own_structures(rag, misspelt: str) -> dict[str, float | str]:
    """hopgraph's own structures, sized: the mirror (besides the graph and store it holds)
    and the entity linker with its trigram index, as the mirror's retriever builds them,
    then the time to link the `misspelt` question. Built over a state of their own (the
    reopened GraphRAG's are its own), from the same snapshot, vector and lexicon files."""
    from hopgraph.retrieve import Retriever
    from hopgraph.state import GraphState
    from hopgraph.store import MilvusStore

    row: dict[str, float | str] = {}
    store = MilvusStore.from_settings(rag.settings, create=False)
    try:
        state: GraphState[Retriever] = GraphState(store, DIM)
        retriever = state.retriever(lambda start: Retriever.over(start, rag.embedder, None,
                                                                 10**8))
        mirror = retriever.search
        row["indexed"] = "".join(kind[0] for kind in ("relations", "entities", "passages")
                                 if getattr(mirror, f"_{kind}").ann is not None) or "-"
        row["mirror_mb"] = deep_bytes(mirror._relations, mirror._entities, mirror._passages,
                                      mirror._bm25, mirror._texts) / 2**20
        _ = retriever.linker.fuzzy
        row["graph_linker_mb"] = deep_bytes(rag.graph, retriever.linker) / 2**20
        started = time.perf_counter()
        retriever.linker.link(misspelt)
        row["link_typo_ms"] = (time.perf_counter() - started) * 1000
    finally:
        store.close()
    return row


def stage_cold(size: int, uri: str) -> dict[str, float]:
    """A new process, no snapshot: the graph and its vectors are read back from Milvus."""
    questions, _ = questions_for(size)
    row: dict[str, float] = {}
    from hopgraph.store import MilvusStore

    store = MilvusStore(uri, "scale", create=False)
    path = store.snapshot_path()
    store.close()
    path.unlink()
    started = time.perf_counter()
    rag = open_graph(uri, create=False, memory_limit=10**8)
    row["reopen_cold_s"] = time.perf_counter() - started
    started = time.perf_counter()
    rag.retrieve(questions[0])
    row["cold_first_ms"] = (time.perf_counter() - started) * 1000
    row["cold_peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    rag.close()
    return row


STAGES = {"ingest": stage_ingest, "reopen": stage_reopen, "cold": stage_cold}


COLUMNS = [("relations", "relations", "{:,.0f}"), ("rows_per_s", "ingest rows/s", "{:,.0f}"),
           ("ingest_s", "ingest s", "{:,.0f}"),
           ("ingest_process_s", "ingest process until exit s", "{:,.0f}"),
           ("ingest_rss_gb", "ingest peak RSS GB (with Milvus Lite)", "{:.2f}"),
           ("hopgraph_after_ingest_mb", "graph after ingest MB", "{:,.0f}"),
           ("close_s", "close s", "{:.1f}"),
           ("ann_build_s", "ANN index build s", "{:,.0f}"),
           ("ann_wait_s", "ANN index wait after the write s", "{:,.0f}"),
           ("indexed_rss_gb", "peak RSS with the ANN build GB", "{:.2f}"),
           ("indexed", "kinds searched by ANN (r/e/p)", "{}"),
           ("reopen_snapshot_s", "reopen (snapshot) s", "{:.2f}"),
           ("reopen_rss_mb", "reopen RSS MB (Milvus Lite + graph)", "{:,.0f}"),
           ("index_wait_s", "wait for Milvus indexes s", "{:,.0f}"),
           ("graph_linker_mb", "graph + linker MB", "{:,.0f}"),
           ("mirror_mb", "mirror heap MB", "{:,.0f}"),
           ("mirror_first_ms", "first query, mirror ms", "{:,.0f}"),
           ("mirror_p50_ms", "warm p50 mirror ms", "{:.1f}"),
           ("milvus_first_ms", "first query, Milvus ms", "{:,.0f}"),
           ("milvus_p50_ms", "warm p50 Milvus ms", "{:.1f}"),
           ("milvus_p95_ms", "warm p95 Milvus ms", "{:.1f}"),
           ("reopen_cold_s", "reopen (cold) s", "{:.2f}"),
           ("cold_first_ms", "first query after cold ms", "{:,.0f}"),
           ("expand1_ms", "expand d1 ms", "{:.1f}"), ("expand2_ms", "expand d2 ms", "{:.1f}"),
           ("powers_build_s", "matrix powers build s", "{:.1f}"),
           ("powers2_ms", "matrix powers d2 ms", "{:.1f}"),
           ("powers_gb", "Aᵀ·A would need GB", "{:.1f}"),
           ("link_typo_ms", "link (typo) ms", "{:.1f}"),
           ("reopen_peak_rss_gb", "query process peak RSS GB (both backends)", "{:.2f}"),
           ("cold_peak_rss_gb", "cold process peak RSS GB", "{:.2f}")]


def run_size(size: int, cold: bool, server: str | None) -> dict[str, float] | str:
    """Every stage of one size, each in a process of its own; a failure's last line."""
    row: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="hopgraph-scale-") as tmp:
        uri = server or str(Path(tmp) / "scale.db")
        for stage in ["ingest", "reopen", *(["cold"] if cold else [])]:
            started = time.perf_counter()
            # A server's snapshot and vector files go to the cache dir: keep them in tmp.
            env = {**os.environ, "HOPGRAPH_CACHE_DIR": tmp}
            done = subprocess.run([sys.executable, __file__, "--stage", stage, str(size), uri],
                                  capture_output=True, text=True, check=False, env=env)
            if done.returncode != 0:  # the error's own lines, not only the last one
                print(done.stderr[-4000:], file=sys.stderr, flush=True)
                return f"{stage} failed (its stderr is above): {done.stderr.strip()[-300:]!r}"
            row.update(json.loads(done.stdout.strip().splitlines()[-1]))
            # Until the process is gone: Milvus Lite finishes building its indexes at exit.
            row[f"{stage}_process_s"] = time.perf_counter() - started
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the cold reopen (graph and vectors read back from Milvus)")
    parser.add_argument("--json", help="also write every row, with all figures, to this file")
    parser.add_argument("--server", action="store_true",
                        help="run against a Milvus 2.3 standalone server (the `milvus` package) "
                             "started in a temporary folder on 127.0.0.1:19530, not Milvus Lite")
    parser.add_argument("--port", type=int, default=19530,
                        help="with --server: its port (the tests' server takes 19530)")
    parser.add_argument("--stage", nargs=3, help=argparse.SUPPRESS)  # worker: STAGE SIZE URI
    args = parser.parse_args()
    if args.stage:
        stage, size, uri = args.stage
        print(json.dumps(STAGES[stage](int(size), uri)))
        return
    print("| " + " | ".join(title for _, title, _ in COLUMNS) + " |")
    print("|" + "---:|" * len(COLUMNS))
    rows = []
    with milvus_server(args.server, args.port) as server:
        for size in args.sizes:
            rows.append(report(size, run_size(size, not args.no_cold, server)))
    if args.json:
        Path(args.json).write_text(json.dumps([r for r in rows if r], indent=1))


def report(size: int, row: dict[str, float] | str) -> dict[str, float] | None:
    """Print one table row (or the failure); the row's figures, if any."""
    if isinstance(row, str):
        print(f"| {size:,} | {row} |", flush=True)
        return None
    print("| " + " | ".join(fmt.format(row[key]) if key in row else "–"
                            for key, _, fmt in COLUMNS) + " |", flush=True)
    return row


@contextmanager
def milvus_server(wanted: bool, port: int = 19530) -> Iterator[str | None]:
    """A Milvus standalone server for the run (its URI), or None for Milvus Lite."""
    if not wanted:
        yield None
        return
    from milvus import default_server

    with tempfile.TemporaryDirectory(prefix="hopgraph-scale-server-") as base:
        default_server.set_base_dir(base)
        default_server.listen_port = port
        default_server.start()
        try:
            yield f"http://127.0.0.1:{default_server.listen_port}"
        finally:
            default_server.stop()


if __name__ == "__main__":
    main()
