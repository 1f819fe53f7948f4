"""How hopgraph's costs grow with the graph: synthetic skewed graphs, a fast fake embedder.

Usage (from the repository root):
  .venv/bin/python benchmarks/scale.py                 # 10k and 100k relations
  .venv/bin/python benchmarks/scale.py --sizes 10000 100000 1000000
Each size runs in a process of its own (so peak memory is that size's) on Milvus Lite in a
temporary folder, and prints one row of a markdown table: ingest rows/s and peak RSS; reopen
with the snapshot, then first and warm default-method queries (in-memory mirror, and every
search in Milvus); reopen cold (no snapshot: graph and vectors read back from Milvus) and its
first query; expansion degree 1 and 2 against the matrix powers; fuzzy linking.
The embedder is a deterministic hash of the text, so the model is not in the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 384
PREDICATES = ["founded", "directed", "was born in", "is part of", "married", "wrote",
              "plays for", "is located in", "owns", "succeeded"]


class HashEmbedder:
    """Unit vectors drawn from a seed hashed from the text: fast, deterministic, no model."""

    name = "bench:hash-384"
    dim = DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        """One pseudo-random unit vector per text."""
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            out[i] = np.random.default_rng(seed).standard_normal(DIM)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def records(n_relations: int, seed: int = 0) -> tuple[list, list[str]]:
    """Passages of ~10 triplets over entities with a skewed (Zipf) degree distribution."""
    from hopgraph.records import PassageRecord, Triplet

    rng = np.random.default_rng(seed)
    n_entities = max(10, n_relations // 2)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zu", "an", "el", "or"]
    names = []
    for i in range(n_entities):
        parts = rng.choice(syllables, size=5)
        names.append(f"{''.join(parts[:2]).capitalize()} {''.join(parts[2:]).capitalize()} {i}")
    weights = 1.0 / np.arange(1, n_entities + 1) ** 1.1
    ends = rng.choice(n_entities, size=(n_relations, 2), p=weights / weights.sum())
    predicates = rng.integers(0, len(PREDICATES), size=n_relations)
    out = []
    for start in range(0, n_relations, 10):
        triplets = [Triplet(names[s], PREDICATES[p], names[o]) for (s, o), p in
                    zip(ends[start:start + 10].tolist(), predicates[start:start + 10].tolist(),
                        strict=True)]
        text = f"Passage {start // 10}. " + " ".join(
            f"{t.subject} {t.predicate} {t.object}." for t in triplets)
        out.append(PassageRecord(text, triplets))
    return out, names


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


def measure(size: int, folder: Path) -> dict[str, float]:
    """Every figure of one row, in this process."""
    from hopgraph import GraphRAG
    from hopgraph.graph import MatrixPowers

    data, names = records(size)
    rng = np.random.default_rng(1)
    picks = rng.choice(len(names), size=21, replace=False).tolist()
    questions = [f"Who founded the company that {names[i]} owns?" for i in picks]
    uri, row = str(folder / "scale.db"), {"relations": size}
    embedder = HashEmbedder()
    started = time.perf_counter()
    with GraphRAG(uri=uri, graph="scale", embedder=embedder) as rag:
        summary = rag.add(data)
        stored = summary.passages_added + summary.entities_added + summary.relations_added
        row["ingest_s"] = time.perf_counter() - started
        row["rows_per_s"] = stored / row["ingest_s"]
        row["ingest_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        closing = time.perf_counter()
    row["close_s"] = time.perf_counter() - closing
    del data
    started = time.perf_counter()
    rag = GraphRAG(uri=uri, graph="scale", embedder=embedder, create=False)
    row["reopen_snapshot_s"] = time.perf_counter() - started
    for backend, limit in (("mirror", 10**8), ("milvus", 0)):
        rag.settings.memory_limit = limit
        rag._retriever = None
        first, p50, p95 = timed_queries(rag, questions)
        row[f"{backend}_first_ms"], row[f"{backend}_p50_ms"], row[f"{backend}_p95_ms"] = (
            first, p50, p95)
    rag.close()
    rag.store.snapshot_path().unlink()  # cold: the graph and its vectors from Milvus
    started = time.perf_counter()
    rag = GraphRAG(uri=uri, graph="scale", embedder=embedder, create=False,
                   memory_limit=10**8)
    row["reopen_cold_s"] = time.perf_counter() - started
    started = time.perf_counter()
    rag.retrieve(questions[0])
    row["cold_first_ms"] = (time.perf_counter() - started) * 1000
    graph = rag.graph
    seeds = rng.choice(len(graph.relations), size=3, replace=False).tolist()
    ents = [int(graph.subjects[s]) for s in seeds]
    for degree in (1, 2):
        started = time.perf_counter()
        walked = graph.expand(ents, seeds, degree).relations
        row[f"expand{degree}_ms"] = (time.perf_counter() - started) * 1000
        if size <= 100_000:  # the matrix powers need GBs and minutes beyond that
            started = time.perf_counter()
            powered = MatrixPowers(graph.incidence).expand(ents, seeds, degree)
            row[f"powers{degree}_ms"] = (time.perf_counter() - started) * 1000
            assert np.array_equal(walked, powered)
    typo = names[picks[0]][:-3] + names[picks[0]][-2:]
    rag.retriever.linker.link(f"Who founded {names[picks[1]]}?")  # builds the name index
    _ = rag.retriever.linker.fuzzy  # and the trigram index: timed below is the lookup alone
    started = time.perf_counter()
    rag.retriever.linker.link(f"Who founded the company of {typo}?")
    row["link_typo_ms"] = (time.perf_counter() - started) * 1000
    row["end_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    rag.close()
    return row


COLUMNS = [("relations", "relations", "{:,.0f}"), ("rows_per_s", "ingest rows/s", "{:,.0f}"),
           ("ingest_rss_gb", "ingest peak RSS GB", "{:.2f}"), ("close_s", "close s", "{:.1f}"),
           ("reopen_snapshot_s", "reopen (snapshot) s", "{:.2f}"),
           ("mirror_first_ms", "first query, mirror ms", "{:,.0f}"),
           ("mirror_p50_ms", "warm p50 mirror ms", "{:.1f}"),
           ("milvus_first_ms", "first query, Milvus ms", "{:,.0f}"),
           ("milvus_p50_ms", "warm p50 Milvus ms", "{:.1f}"),
           ("milvus_p95_ms", "warm p95 Milvus ms", "{:.1f}"),
           ("reopen_cold_s", "reopen (cold) s", "{:.2f}"),
           ("cold_first_ms", "first query after cold ms", "{:,.0f}"),
           ("expand1_ms", "expand d1 ms", "{:.1f}"), ("expand2_ms", "expand d2 ms", "{:.1f}"),
           ("powers2_ms", "matrix powers d2 ms", "{:.1f}"),
           ("link_typo_ms", "link (typo) ms", "{:.1f}"), ("end_rss_gb", "peak RSS GB", "{:.2f}")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # worker: one size
    args = parser.parse_args()
    if args.one:
        with tempfile.TemporaryDirectory(prefix="hopgraph-scale-") as tmp:
            print(json.dumps(measure(args.one, Path(tmp))))
        return
    print("| " + " | ".join(title for _, title, _ in COLUMNS) + " |")
    print("|" + "---:|" * len(COLUMNS))
    for size in args.sizes:
        done = subprocess.run([sys.executable, __file__, "--one", str(size)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"| {size:,} | failed: {done.stderr.strip().splitlines()[-1:]} |")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print("| " + " | ".join(fmt.format(row[key]) if key in row else "–"
                                for key, _, fmt in COLUMNS) + " |", flush=True)


if __name__ == "__main__":
    main()
