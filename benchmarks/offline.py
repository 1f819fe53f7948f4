"""Graph RAG from raw text with no LLM: the offline extractor on MuSiQue and HotpotQA dev,
with every rule, then with each rule turned off (the ablation table in the README).

Each row is one `hopgraph eval --extract offline` run (a fresh graph from the corpus text
alone; ~4 min for MuSiQue, ~2 min for HotpotQA on 2 cores).

Usage (from the repository root):
  .venv/bin/python benchmarks/offline.py                     # both sets, full ablation
  .venv/bin/python benchmarks/offline.py --sets hotpotqa --no-ablation
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
# Rules on by default are turned off one at a time; "surnames" (off by default) is turned on.
ABLATION = [["--without", "title"], ["--without", "pairs"], ["--without", "numbers"],
            ["--with", "surnames"]]


def run(name: str, change: list[str]) -> dict[str, dict[str, float]]:
    """Recall of naive and default on one set, with one rule changed (or none)."""
    folder = DATA / name
    with tempfile.TemporaryDirectory(prefix="hopgraph-offline-") as tmp:
        out = Path(tmp) / "eval.json"
        command = [sys.executable, "-m", "hopgraph.cli", "eval", "--quiet",
                   "--corpus", str(folder / "corpus.json"),
                   "--questions", str(folder / "questions_dev.json"),
                   "--extract", "offline", "--method", "naive", "--method", "default",
                   "--json", str(out)]
        command += change
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
        speed = next((line for line in done.stderr.splitlines()
                      if line.startswith("offline extractor:")), "")
        report = json.loads(out.read_text(encoding="utf-8"))
    methods = report["methods"]
    return {"naive": methods["naive"], "default": methods["default"],
            "index_seconds": report["index_seconds"], "speed": speed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["musique", "hotpotqa"])
    parser.add_argument("--no-ablation", action="store_true",
                        help="only the run with every rule")
    args = parser.parse_args()
    print("| set | rules | naive R@2 | naive R@5 | default R@2 | default R@5 | "
          "Δ R@2 | Δ R@5 | graph built in s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.sets:
        configs = [[]] + ([] if args.no_ablation else ABLATION)
        for change in configs:
            row = run(name, change)
            naive, default = row["naive"], row["default"]
            label = "default rules" if not change else f"{change[0][2:]} {change[1]}"
            print(f"| {name} | {label} | {100 * naive['recall@2']:.1f} | "
                  f"{100 * naive['recall@5']:.1f} | {100 * default['recall@2']:.1f} | "
                  f"{100 * default['recall@5']:.1f} | "
                  f"{100 * (default['recall@2'] - naive['recall@2']):+.1f} | "
                  f"{100 * (default['recall@5'] - naive['recall@5']):+.1f} | "
                  f"{row['index_seconds']:.0f} |", flush=True)
            if not change:
                print(f"<!-- {name}: {row['speed']} -->", flush=True)


if __name__ == "__main__":
    main()
