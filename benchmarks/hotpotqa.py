"""Recall@2/5 and latency of every retrieval method on the HotpotQA sample in ../shared/data,
from raw text: HotpotQA comes with no LLM triplets, so the graph is built by the offline
extractor (`hopgraph eval --extract offline`).

Usage (from the repository root):  .venv/bin/python benchmarks/hotpotqa.py [--json out.json]
Extra arguments are passed to `hopgraph eval`. Prints the markdown table the README shows.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hopgraph.cli import main

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "hotpotqa"

if __name__ == "__main__":
    if not DATA.is_dir():
        sys.exit(f"HotpotQA data not found at {DATA.resolve()} (expected ../shared/data)")
    sys.exit(main([
        "eval",
        "--corpus", str(DATA / "corpus.json"),
        "--extract", "offline",
        "--questions", str(DATA / "questions_dev.json"),
        *sys.argv[1:],
    ]))
