"""Recall@2/5 and latency of every retrieval method on the MuSiQue set in ../shared/data.

Usage (from the repository root):  .venv/bin/python benchmarks/musique.py [--json out.json]
Extra arguments are passed to `hopgraph eval` (e.g. --uri ./musique.db --graph musique to
reuse an ingested graph). `--runtime onnx-int8` embeds with the int8 model (it sets
HOPGRAPH_EMBED_RUNTIME): its vectors are its own, so give it its own --uri, or none.
Prints the markdown table that the README shows.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from hopgraph.cli import main
from hopgraph.embed import RUNTIMES

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"

if __name__ == "__main__":
    if not DATA.is_dir():
        sys.exit(f"MuSiQue data not found at {DATA.resolve()} (expected ../shared/data)")
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--runtime", choices=RUNTIMES,
                        help="how the local model runs (HOPGRAPH_EMBED_RUNTIME)")
    ours, rest = parser.parse_known_args()
    if ours.runtime:
        os.environ["HOPGRAPH_EMBED_RUNTIME"] = ours.runtime
    sys.exit(main([
        "eval",
        "--corpus", str(DATA / "corpus.json"),
        "--openie", str(DATA / "openie_gpt-3.5-turbo-1106.json"),
        "--questions", str(DATA / "questions_dev.json"),
        *rest,
    ]))
