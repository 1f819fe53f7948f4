"""Your own documents: MuSiQue and HotpotQA dev as the files users bring, against the same
paragraphs given as ready-made passages, scored as recall at budgets of retrieved words.

For each set: the corpus is written as files (`hopgraph.shape`: 8 paragraphs per file in
corpus order, Markdown / plain text / PDF in turn) and ingested with the product's defaults
(`hopgraph eval --documents`); then the corpus is ingested as passages with the offline
extractor (`hopgraph eval --corpus ... --extract offline --budgets`). No LLM anywhere.

Usage (from the repository root):
  .venv/bin/python benchmarks/files.py [--sets musique,hotpotqa] [--formats md,txt,pdf]
      (--formats takes any of md, txt, pdf, docx, html, pptx: hopgraph.shape.FORMATS)
      [--chunk-tokens N --overlap-tokens N] [--no-passages] [--json out.json]
~4 min for MuSiQue and ~2.5 min for HotpotQA on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from hopgraph.shape import DEFAULT_FORMATS, FORMATS, write_corpus

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
BUDGETS = "200,400,800"


def eval_json(args: list[str]) -> dict:
    """One `hopgraph eval` run in a new process; its --json report."""
    with tempfile.TemporaryDirectory(prefix="hopgraph-files-") as tmp:
        out = Path(tmp) / "eval.json"
        command = [sys.executable, "-m", "hopgraph.cli", "eval", "--quiet", "--json", str(out),
                   "--budgets", BUDGETS, "--method", "naive", "--method", "default", *args]
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            sys.exit(f"eval failed ({done.returncode}):\n{done.stderr}")
        return json.loads(out.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="musique,hotpotqa")
    parser.add_argument("--formats", default=",".join(DEFAULT_FORMATS),
                        help=f"file formats taking turns, of {','.join(FORMATS)}")
    parser.add_argument("--chunk-tokens", type=int)
    parser.add_argument("--overlap-tokens", type=int)
    parser.add_argument("--no-passages", action="store_true", help="files only")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    chunking = [flag for flag, value in (("--chunk-tokens", args.chunk_tokens),
                                         ("--overlap-tokens", args.overlap_tokens))
                if value is not None for flag in (flag, str(value))]
    results = {}
    for name in args.sets.split(","):
        folder = DATA / name
        if not folder.is_dir():
            sys.exit(f"{name} data not found at {folder.resolve()} (expected ../shared/data)")
        questions = str(folder / "questions_dev.json")
        rows = {}
        with tempfile.TemporaryDirectory(prefix="hopgraph-files-") as tmp:
            items = json.loads((folder / "corpus.json").read_text(encoding="utf-8"))
            files = write_corpus(items, Path(tmp) / "docs", name, args.formats.split(","))
            report = eval_json(["--documents", str(Path(tmp) / "docs"),
                                "--questions", questions, *chunking])
            rows[f"the same text as {len(files)} files ({args.formats}), "
                 f"{report['chunks']} chunks"] = report["budgets"]
        if not args.no_passages:
            report = eval_json(["--corpus", str(folder / "corpus.json"), "--extract",
                                "offline", "--questions", questions])
            rows["paragraphs given as passages"] = report["budgets"]
        results[name] = rows
        print(f"\n{name} (recall at budgets of words, naive / default)\n")
        print("| input | 200 words | 400 words | 800 words |\n|---|---|---|---|")
        for label, scores in rows.items():
            cells = " | ".join(
                f"{100 * scores['naive'][f'words@{b}']:.1f} / "
                f"{100 * scores['default'][f'words@{b}']:.1f}" for b in (200, 400, 800))
            print(f"| {label} | {cells} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
