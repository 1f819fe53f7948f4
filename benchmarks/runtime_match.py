"""Does a model folder under onnxruntime retrieve what the same model under torch retrieves?

The local runtimes (`HOPGRAPH_EMBED_RUNTIME=onnx`, the default, and `torch`) embed the
MuSiQue passages and dev questions with the embedder given; naive dense retrieval (cosine,
the passages' own vectors) is then scored for each, as `hopgraph eval` scores it (Recall@2 and
Recall@5 of the supporting paragraphs). Printed: both recalls, the questions whose top five
differ between the runtimes, and the cosine between the two runtimes' vectors of each text.

    .venv/bin/python benchmarks/runtime_match.py --embedder "$MPNET"    # ~15 min here
    .venv/bin/python benchmarks/runtime_match.py --embedder local       # ~2 min

Only the passage search is compared: the default method adds relation and entity vectors,
which come from the same runtime through the same code, so equal passage rankings and near-1
cosines on every text are the claim; the graph recalls with the ONNX runtime are in RESULTS.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from hopgraph.embed import make_embedder

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"


def passage_text(row: dict[str, str]) -> str:
    return f"{row['title']}\n{row['text']}"


def recall(question_vectors: np.ndarray, passage_vectors: np.ndarray,
           gold: list[set[int]], k: int) -> tuple[float, list[list[int]]]:
    """Mean share of each question's gold passages in its top `k`, and the top `k` lists."""
    scores = question_vectors @ passage_vectors.T
    tops = [list(np.argsort(-row, kind="stable")[:k]) for row in scores]
    shares = [len(g & set(top)) / len(g) for g, top in zip(gold, tops, strict=True)]
    return 100 * float(np.mean(shares)), tops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="local", help="'local' or a model folder's path")
    parser.add_argument("--limit", type=int, default=0, help="first N passages only (0: all)")
    args = parser.parse_args()
    corpus = json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((DATA / "questions_dev.json").read_text(encoding="utf-8"))
    index = {row["text"]: i for i, row in enumerate(corpus)}
    gold = [{index[p["paragraph_text"]] for p in q["paragraphs"]
             if p.get("is_supporting") and p["paragraph_text"] in index} for q in questions]
    kept = [i for i, g in enumerate(gold) if g]
    if args.limit:
        corpus = corpus[:args.limit]
        gold = [{i for i in g if i < args.limit} for g in gold]
        kept = [i for i, g in enumerate(gold) if g]
    texts = [passage_text(row) for row in corpus]
    asked = [questions[i]["question"] for i in kept]
    gold = [gold[i] for i in kept]
    vectors = {}
    print(f"{len(texts)} passages, {len(asked)} questions, embedder {args.embedder}")
    print("| runtime | R@2 | R@5 | passages/s |\n|---|---:|---:|---:|")
    tops = {}
    for runtime in ("onnx", "torch"):
        embedder = make_embedder(args.embedder, runtime=runtime)
        embedder.embed(texts[:4])  # export, load and warm up outside the timing
        start = time.perf_counter()
        passages = embedder.embed(texts)
        rate = len(texts) / (time.perf_counter() - start)
        query = embedder.embed(asked)
        vectors[runtime] = (passages, query)
        r2, _ = recall(query, passages, gold, 2)
        r5, tops[runtime] = recall(query, passages, gold, 5)
        print(f"| {runtime} | {r2:.1f} | {r5:.1f} | {rate:.1f} |", flush=True)
    differ = sum(a != b for a, b in zip(tops["onnx"], tops["torch"], strict=True))
    print(f"\nquestions whose top 5 differ between the runtimes: {differ} of {len(asked)}")
    for label, which in (("passages", 0), ("questions", 1)):
        cosine = np.sum(vectors["onnx"][which] * vectors["torch"][which], axis=1)
        print(f"cosine onnx vs torch, {label}: min {cosine.min():.6f}, "
              f"median {np.median(cosine):.6f}")


if __name__ == "__main__":
    main()
