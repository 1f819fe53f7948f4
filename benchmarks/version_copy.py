"""What a write's own graph costs: `KnowledgeGraph.copy()` at a graph's size.

A write copies the current version's graph when something was built on that version (a
retriever: the API after a query, a server always), so that what was handed out stays whole
(docs/development.md, "A version and a write"); with nothing built on it (a bulk load) the
write takes the graph itself. This prints the copy's time (median of five) and the memory
it adds, on synthetic graphs of 10 relations per passage and 0.3 entities per relation.

    .venv/bin/python benchmarks/version_copy.py [--relations 100000,1000000]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

from hopgraph.graph import KnowledgeGraph


def synthetic(relations: int, seed: int = 0) -> KnowledgeGraph:
    """A graph of `relations` relations over random entities and passages."""
    rng = np.random.default_rng(seed)
    entities, passages = max(relations * 3 // 10, 1), max(relations // 10, 1)
    return KnowledgeGraph.from_arrays(
        [f"e{i}" for i in range(entities)], [f"Entity {i}" for i in range(entities)],
        [f"r{i}" for i in range(relations)], [f"relation text {i}" for i in range(relations)],
        rng.integers(0, entities, relations), rng.integers(0, entities, relations),
        [f"p{i}" for i in range(passages)], np.arange(relations + 1, dtype=np.int64),
        rng.integers(0, passages, relations))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relations", default="100000,1000000",
                        help="graph sizes, comma-separated")
    args = parser.parse_args()
    print("| relations | copy, median of 5 (s) | memory the copy adds (MB) |")
    print("|---:|---:|---:|")
    for relations in (int(n) for n in args.relations.split(",")):
        graph = synthetic(relations)
        times = []
        for _ in range(5):
            started = time.perf_counter()
            graph.copy()
            times.append(time.perf_counter() - started)
        tracemalloc.start()
        copy = graph.copy()
        added, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del copy
        print(f"| {relations:,} | {statistics.median(times):.2f} | {added / 2**20:,.0f} |")


if __name__ == "__main__":
    main()
