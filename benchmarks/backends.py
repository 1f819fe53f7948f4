"""Every search backend must return what the benchmark measures: the MuSiQue dev questions
through the in-memory mirror and through Milvus (Lite, or a server with --uri), per method.

Usage (from the repository root):
  .venv/bin/python benchmarks/backends.py                      # fresh graph in a temp dir
  .venv/bin/python benchmarks/backends.py --uri ./musique.db --graph musique   # reuse one
Prints, per method: Recall@2/5 and p50 latency on each backend, and on how many questions
the top-5 passage ids are identical.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from hopgraph import OFFLINE_METHODS, GraphRAG
from hopgraph.evaluate import load_questions, score_method
from hopgraph.identity import content_key

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"
BACKENDS = {"memory": 10**7, "milvus": 0}  # memory_limit that selects each backend


def run(uri: str, graph: str) -> None:
    questions = load_questions(DATA / "questions_dev.json", DATA / "corpus.json")
    with GraphRAG(uri=uri, graph=graph) as rag:
        if rag.stats()["passages"] == 0:
            rag.add_files([DATA / "openie_gpt-3.5-turbo-1106.json"])
    top5: dict[str, dict[str, list[list[str]]]] = {}
    rows = []
    for backend, limit in BACKENDS.items():
        with GraphRAG(uri=uri, graph=graph, create=False, memory_limit=limit) as rag:
            for method in OFFLINE_METHODS:
                rag.retrieve(questions[0].text, method=method)  # warm-up
                found: list[list[str]] = []

                def ask(q: str, m: str = method, out: list[list[str]] = found) -> list[str]:
                    hits = rag.retrieve(q, top_k=5, method=m).passages
                    out.append([content_key(p.text) for p in hits])
                    return out[-1]

                score = score_method(ask, questions).as_dict()
                top5.setdefault(method, {})[backend] = found
                rows.append((method, backend, score))
    print("| method | backend | R@2 | R@5 | p50 ms | identical top-5 |")
    print("|---|---|---:|---:|---:|---:|")
    for method, backend, score in rows:
        same = sum(a == b for a, b in zip(top5[method]["memory"], top5[method]["milvus"],
                                          strict=True))
        print(f"| {method} | {backend} | {100 * score['recall@2']:.1f} | "
              f"{100 * score['recall@5']:.1f} | {score['latency_ms_p50']:.1f} | "
              f"{same}/{len(questions)} |")


if __name__ == "__main__":
    if not DATA.is_dir():
        sys.exit(f"MuSiQue data not found at {DATA.resolve()} (expected ../shared/data)")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--uri", help="Milvus URI holding (or to hold) the graph")
    parser.add_argument("--graph", default="musique", help="graph name (default musique)")
    args = parser.parse_args()
    if args.uri:
        run(args.uri, args.graph)
    else:
        with tempfile.TemporaryDirectory(prefix="hopgraph-backends-") as tmp:
            run(str(Path(tmp) / "musique.db"), args.graph)
