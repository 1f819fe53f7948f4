"""How the default method's additive constants hold across embedders: each of the bridge
step's score offsets (`retrieve/bridge.py`: ANCHOR_BONUS, BRIDGE_BOOST, CONFIDENCE_SLOPE)
halved and doubled, on MuSiQue, for each embedder given. A constant whose best value moves
with the embedder is tied to one model's score scale (issue 39, item 2).

    .venv/bin/python benchmarks/score_scale.py --graph-db local=/tmp/bm_musique.db \
        --graph-db "$MPNET=/tmp/bm_mpnet.db"

Each `EMBEDDER=DB` is a Milvus Lite file where `benchmarks/musique.py --uri DB` (with that
embedder) has already ingested MuSiQue: the runs here only query.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path

from hopgraph.cli import main as hopgraph
from hopgraph.retrieve import bridge

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"
CONSTANTS = ("ANCHOR_BONUS", "BRIDGE_BOOST", "CONFIDENCE_SLOPE")
FACTORS = (0.5, 1.0, 2.0)


def recall(embedder: str, db: str) -> tuple[float, float]:
    """The default method's R@2 and R@5 on the graph in `db`, as the constants stand."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "eval.json"
        with contextlib.redirect_stdout(io.StringIO()):
            code = hopgraph(["eval", "--corpus", str(DATA / "corpus.json"),
                             "--openie", str(DATA / "openie_gpt-3.5-turbo-1106.json"),
                             "--questions", str(DATA / "questions_dev.json"), "--uri", db,
                             "--embedder", embedder, "--method", "default", "--quiet",
                             "--json", str(out)])
        if code:
            raise SystemExit(f"hopgraph eval failed ({code}) for {embedder} on {db}")
        rows = json.loads(out.read_text())
    row = rows["methods"]["default"]
    return 100 * row["recall@2"], 100 * row["recall@5"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph-db", action="append", required=True, metavar="EMBEDDER=DB")
    args = parser.parse_args()
    pairs = [spec.rsplit("=", 1) for spec in args.graph_db]
    names = [Path(embedder).name or embedder for embedder, _ in pairs]
    print("| constant | factor | " + " | ".join(f"{n} R@2 / R@5" for n in names) + " |")
    print("|---|---:|" + "---|" * len(pairs))
    for constant in CONSTANTS:
        base = getattr(bridge, constant)
        for factor in FACTORS:
            if factor == 1.0 and constant != CONSTANTS[0]:
                continue  # the unchanged row once
            setattr(bridge, constant, base * factor)
            try:
                cells = [recall(embedder, db) for embedder, db in pairs]
            finally:
                setattr(bridge, constant, base)
            label = "(as shipped)" if factor == 1.0 else constant
            print(f"| {label} | {factor:g} | " +
                  " | ".join(f"{r2:.1f} / {r5:.1f}" for r2, r5 in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
