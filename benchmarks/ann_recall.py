"""Recall@10 of the nearest-neighbour index (store/ann.py) against exact search, and the
time of one search each way.

Usage (from the repository root):
  .venv/bin/python benchmarks/ann_recall.py --scale 100000 1000000   # synthetic relations
  .venv/bin/python benchmarks/ann_recall.py --scale 100000 --random  # worst case, see below
  .venv/bin/python benchmarks/ann_recall.py --musique                # MiniLM, real texts
--scale N: the relation texts of benchmarks/scale.py's N-relation graph, embedded by its
bag-of-words hash embedder; queries: 200 questions naming an entity of the graph (scale.py's
kind) and 200 probes "question + entity name", as the default method makes them.
--random: each text its own random vector (scale.py's embedder before 2026-11-25): points
without neighbours, where no index finds the exact top 10 short of reading everything.
--passages: with --scale N, the graph's passages (ten relations each, so N/10 rows), searched
with the candidate list passages get (`store.ann.EF_BY_KIND`).
--built FILE: with --scale N, the relation (or, with --passages, passage) vector file of an
N-relation graph ingested by scale.py (e.g. /tmp/x/scale.db.snapshots/scale.relations.f32)
and the index the ingest built beside it, instead of building one here.
--musique: the MuSiQue relation texts and passages embedded with all-MiniLM-L6-v2 (about
17k relations: the index is forced on with a threshold of 1,000 rows); queries: the 50 dev
questions and 200 probes. Prints one markdown row per data set.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from scale import PREDICATES, HashEmbedder, graph_spec, records

from hopgraph.store.ann import EF_BY_KIND, AnnFile
from hopgraph.store.vectors import VectorFile

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "musique"


class RandomEmbedder:
    """A pseudo-random unit vector per text: no two texts are related."""

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            out[i] = np.random.default_rng(seed).standard_normal(384)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def embed_all(embedder, texts: list[str]) -> np.ndarray:
    return np.vstack([embedder.embed(texts[i:i + 10_000]) for i in range(0, len(texts), 10_000)])


def scale_set(size: int, random: bool, passages: bool = False
              ) -> tuple[np.ndarray, np.ndarray]:
    ends, predicates, names = graph_spec(size)
    embedder = RandomEmbedder() if random else HashEmbedder()
    if passages:  # the graph's passages, ten relations each
        texts = [record.text for record in records(ends, predicates, names)]
    else:
        texts = [f"{names[s]} {PREDICATES[p]} {names[o]}"
                 for (s, o), p in zip(ends.tolist(), predicates.tolist(), strict=True)]
    rng = np.random.default_rng(5)
    picks = rng.choice(np.unique(ends), 200, replace=False).tolist()
    questions = [f"Who founded the company that {names[i]} owns?" for i in picks]
    probes = [f"{q} {names[i]}" for q, i in zip(questions, rng.choice(len(names), 200).tolist(),
                                                 strict=True)]
    return embed_all(embedder, texts), embedder.embed(questions + probes)


def musique_set() -> tuple[np.ndarray, np.ndarray]:
    from hopgraph.embed import make_embedder

    docs = json.loads((DATA / "openie_gpt-3.5-turbo-1106.json").read_text())["docs"]
    texts = sorted({" ".join(t) for d in docs for t in d["extracted_triples"]
                    if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t)})
    questions = [q["question"] for q in json.loads((DATA / "questions_dev.json").read_text())]
    names = sorted({t.split(" ")[0] for t in texts})
    rng = np.random.default_rng(5)
    probes = [f"{questions[i % 50]} {names[j]}" for i, j in
              enumerate(rng.choice(len(names), 200).tolist())]
    embedder = make_embedder("local")
    return embed_all(embedder, texts), embedder.embed(questions + probes)


def measure(label: str, vectors: np.ndarray, queries: np.ndarray, min_rows: int,
            built: Path | None = None, kind: str = "relations") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        file = VectorFile(built or Path(tmp) / f"bench.{kind}.f32", vectors.shape[1])
        started = time.perf_counter()
        if built is None:
            file.write(vectors)
            AnnFile(file.path).update(file.read(len(vectors)), min_rows)
        build = time.perf_counter() - started
        mapped = file.read(len(vectors))
        assert mapped is not None and np.array_equal(mapped[:100], vectors[:100])
        ann = AnnFile(file.path).load(mapped)
        assert ann is not None
        ann.ef = EF_BY_KIND.get(kind, ann.ef)  # as the graph's searches ask
        found, ann_ms, exact_ms = 0, [], []
        for query in queries:
            started = time.perf_counter()
            hits = ann.search(mapped, query, 10)
            ann_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            scores = np.asarray(mapped) @ query
            exact = np.argpartition(-scores, 9)[:10]
            exact_ms.append((time.perf_counter() - started) * 1000)
            found += len({r for r, _ in hits} & set(exact.tolist()))
    print(f"| {label} | {len(vectors):,} | {len(queries)} | {found / (10 * len(queries)):.4f} | "
          f"{statistics.median(ann_ms):.2f} | {statistics.median(exact_ms):.1f} | "
          f"{'(ingest)' if built else f'{build:,.0f}'} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, nargs="*", default=[])
    parser.add_argument("--random", action="store_true")
    parser.add_argument("--musique", action="store_true")
    parser.add_argument("--built", type=Path)
    parser.add_argument("--passages", action="store_true",
                        help="with --scale: the graph's passages rather than its relations")
    args = parser.parse_args()
    print("| data | rows | queries | recall@10 | index search ms (p50) | exact search ms (p50) "
          "| index build s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for size in args.scale:
        vectors, queries = scale_set(size, args.random, args.passages)
        label = "scale.py, random vector per text" if args.random else "scale.py, hashed words"
        kind = "passages" if args.passages else "relations"
        measure(f"{label}, {kind}", vectors, queries, 1, args.built, kind)
    if args.musique:
        vectors, queries = musique_set()
        measure("MuSiQue relations, MiniLM", vectors, queries, 1_000)


if __name__ == "__main__":
    main()
