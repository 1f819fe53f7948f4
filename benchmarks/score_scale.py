"""How the retrieval methods' constants hold across embedders, on MuSiQue, for each embedder
given (issue 39, item 2). A constant whose best value moves with the embedder is tied to one
model's score scale.

- `scale` (the default table): each of the default method's additive offsets
  (`retrieve/bridge.py`: ANCHOR_BONUS, BRIDGE_BOOST, CONFIDENCE_SLOPE, ONWARD_WEIGHT;
  `retrieve/rank.py`: LEXICAL_WEIGHT, the BM25 share, LEXICAL_WEIGHT_CODES, its share for a
  question with an identifier, and LEXICAL_WEIGHT_PROBES, its share in a bridge probe's
  search) halved and doubled; `--only NAME` runs only those.
- `seed`: the seed method's cosine cut-off for an entity to count as the question's
  (`rank.ENTITY_MIN_SCORE`) at 0.7, 0.8 (shipped) and 0.9.
- `stages`: the default method with one stage at a time switched off (no third-hop chain,
  no bridges at all, no third bridge for a question naming two entities, no anchor bonus,
  no path step, no boost of the bridge's passages, no BM25 term in the question's search,
  none in the probes'), beside naive: which stage carries the gain for each embedder.

    .venv/bin/python benchmarks/score_scale.py --graph-db local=/tmp/bm_musique.db \
        --graph-db "$MPNET=/tmp/bm_mpnet.db"

    .venv/bin/python benchmarks/score_scale.py --table stages --graph-db ...

Each `EMBEDDER=DB` is a Milvus Lite file where `benchmarks/musique.py --uri DB` (with that
embedder) has already ingested MuSiQue: the runs here only query.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hopgraph.cli import main as hopgraph
from hopgraph.retrieve import bridge, rank

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"
CONSTANTS = ((bridge, "ANCHOR_BONUS"), (bridge, "BRIDGE_BOOST"), (bridge, "CONFIDENCE_SLOPE"),
             (rank, "LEXICAL_WEIGHT"), (bridge, "ONWARD_WEIGHT"), (rank, "LEXICAL_WEIGHT_CODES"),
             (rank, "LEXICAL_WEIGHT_PROBES"))
FACTORS = (0.5, 1.0, 2.0)
SEED_CUTOFFS = (0.7, 0.8, 0.9)
STAGES = (  # (label, method, module, constant, value): one stage off at a time
    ("naive", "naive", None, "", 0.0),
    ("default (as shipped)", "default", None, "", 0.0),
    ("no third-hop chain (CHAIN 0)", "default", bridge, "CHAIN", 0),
    ("no bridges (MAX_BRIDGES 0)", "default", bridge, "MAX_BRIDGES", 0),
    ("never a third bridge (MAX_BRIDGES 2)", "default", bridge, "MAX_BRIDGES", 2),
    ("no anchor bonus", "default", bridge, "ANCHOR_BONUS", 0.0),
    ("no path step (ONWARD_WEIGHT 0)", "default", bridge, "ONWARD_WEIGHT", 0.0),
    ("no bridge boost", "default", bridge, "BRIDGE_BOOST", 0.0),
    ("no BM25 term in the question's search", "default", rank, "LEXICAL_WEIGHT", 0.0),
    ("no BM25 term in the probes' searches", "default", rank, "LEXICAL_WEIGHT_PROBES", 0.0),
)


@contextlib.contextmanager
def changed(module: object, constant: str, value: float) -> Iterator[None]:
    """`module.constant` set to `value` for the block (nothing when `module` is None)."""
    if module is None:
        yield
        return
    base = getattr(module, constant)
    setattr(module, constant, type(base)(value))
    try:
        yield
    finally:
        setattr(module, constant, base)


def recall(embedder: str, db: str, method: str = "default") -> tuple[float, float]:
    """A method's R@2 and R@5 on the graph in `db`, as the constants stand."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "eval.json"
        with contextlib.redirect_stdout(io.StringIO()):
            code = hopgraph(["eval", "--corpus", str(DATA / "corpus.json"),
                             "--openie", str(DATA / "openie_gpt-3.5-turbo-1106.json"),
                             "--questions", str(DATA / "questions_dev.json"), "--uri", db,
                             "--embedder", embedder, "--method", method, "--quiet",
                             "--json", str(out)])
        if code:
            raise SystemExit(f"hopgraph eval failed ({code}) for {embedder} on {db}")
        rows = json.loads(out.read_text())
    row = rows["methods"][method]
    return 100 * row["recall@2"], 100 * row["recall@5"]


def row(label: str, cells: list[tuple[float, float]]) -> None:
    print(f"| {label} | " + " | ".join(f"{r2:.1f} / {r5:.1f}" for r2, r5 in cells) + " |",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph-db", action="append", required=True, metavar="EMBEDDER=DB")
    parser.add_argument("--table", choices=("scale", "seed", "stages"), default="scale")
    parser.add_argument("--only", action="append", metavar="CONSTANT",
                        help="with --table scale: only these constants (and the shipped row)")
    args = parser.parse_args()
    pairs = [spec.rsplit("=", 1) for spec in args.graph_db]
    names = [Path(embedder).name or embedder for embedder, _ in pairs]
    heads = " | ".join(f"{n} R@2 / R@5" for n in names)
    if args.table == "stages":
        print(f"| default method | {heads} |\n|---|" + "---|" * len(pairs))
        for label, method, module, constant, value in STAGES:
            with changed(module, constant, value):
                row(label, [recall(embedder, db, method) for embedder, db in pairs])
    elif args.table == "seed":
        print(f"| ENTITY_MIN_SCORE | {heads} |\n|---:|" + "---|" * len(pairs))
        for cutoff in SEED_CUTOFFS:
            with changed(rank, "ENTITY_MIN_SCORE", cutoff):
                row(f"{cutoff:g}", [recall(embedder, db, "seed") for embedder, db in pairs])
    else:
        print(f"| constant | factor | {heads} |\n|---|---:|" + "---|" * len(pairs))
        chosen = [(m, c) for m, c in CONSTANTS if not args.only or c in args.only]
        for module, constant in chosen:
            for factor in FACTORS:
                if factor == 1.0 and constant != chosen[0][1]:
                    continue  # the unchanged row once
                with changed(module, constant, getattr(module, constant) * factor):
                    label = "(as shipped)" if factor == 1.0 else constant
                    row(f"{label} | {factor:g}",
                        [recall(embedder, db) for embedder, db in pairs])


if __name__ == "__main__":
    main()
