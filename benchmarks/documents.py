"""Keeping a graph current, on MuSiQue: ingest a copy of the OpenIE file, edit 10 passages
(reworded, one triplet changed) and remove 10 others in that same file, ingest it again,
check, then delete the document. Every step is a `hopgraph` command in a new process, as a
user runs it; the expected counts and embeddings are computed from the two files.

Usage (from the repository root):
  .venv/bin/python benchmarks/documents.py [--seed 0] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hopgraph.identity import content_key, entity_id, relation_id
from hopgraph.ingest.loaders import load_file

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"


def hopgraph(*args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """`hopgraph ARGS` in a new process, and its wall time in seconds."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hopgraph.cli", *args],
                          env={**os.environ, **env}, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"hopgraph {' '.join(args)} failed:\n{done.stderr}")
    return done, time.perf_counter() - started


def ids(path: Path) -> tuple[set[str], set[str], int]:
    """Entity ids, relation ids and passage count an ingest of `path` stores."""
    report = load_file(path)
    entities, relations = set(), set()
    for record in report.records:
        for t in record.triplets:
            entities.update((entity_id(t.subject), entity_id(t.object)))
            relations.add(relation_id(t.subject, t.predicate, t.object))
    return entities, relations, len({content_key(r.text) for r in report.records})


def edit(source: Path, target: Path, seed: int) -> dict[str, int]:
    """Write `source` to `target` with 10 passages edited and 10 others removed."""
    doc = json.loads(source.read_text(encoding="utf-8"))
    rows = doc["docs"]
    picked = random.Random(seed).sample(range(len(rows)), 20)
    for i in picked[:10]:
        row = rows[i]
        row["text"] = row["text"].replace(".", " (revised).", 1) + " This passage was edited."
        good = [t for t in row.get("extracted_triples", [])
                if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip()
                                                               for x in t)]
        if good:
            good[0][2] = f"{good[0][2]} (revised)"
    removed = set(picked[10:])
    doc["docs"] = [row for i, row in enumerate(rows) if i not in removed]
    target.write_text(json.dumps(doc), encoding="utf-8")
    return {"edited": 10, "removed": 10}


def stats(env: dict[str, str]) -> dict[str, int]:
    done, _ = hopgraph("stats", "--json", env=env)
    data = json.loads(done.stdout)
    return {k: data[k] for k in ("passages", "entities", "relations")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="which passages are edited/removed")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    openie = DATA / "openie_gpt-3.5-turbo-1106.json"
    if not openie.exists():
        raise SystemExit(f"MuSiQue data not found at {openie}")
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="hopgraph-docs-") as tmp:
        copy = Path(tmp) / "musique.json"
        copy.write_text(openie.read_text(encoding="utf-8"), encoding="utf-8")
        env = {"HOPGRAPH_URI": str(Path(tmp) / "docs.db"), "HOPGRAPH_GRAPH": "musique"}
        old_e, old_r, _ = ids(copy)
        done, out["ingest_s"] = hopgraph("ingest", "--quiet", "--json", str(copy), env=env)
        out["counts_before"] = stats(env)
        edit(openie, copy, args.seed)
        new_e, new_r, new_p = ids(copy)
        expected = {"passages": new_p, "entities": len(new_e), "relations": len(new_r)}
        done, out["replace_s"] = hopgraph("ingest", "--quiet", "--json", str(copy), env=env)
        summary = json.loads(done.stdout)
        out["replace_summary"] = {k: summary[k] for k in (
            "passages_added", "passages_present", "passages_removed", "relations_added",
            "relations_removed", "relations_unlinked", "entities_added", "entities_removed",
            "texts_embedded", "seconds")}
        out["expected_embedded"] = 10 + len(new_e - old_e) + len(new_r - old_r)
        out["counts_after_replace"] = stats(env)
        out["counts_expected"] = expected
        done, out["check_s"] = hopgraph("check", "--json", env=env)
        out["check_problems"] = json.loads(done.stdout)["problems"]
        done, out["unchanged_s"] = hopgraph("ingest", "--quiet", "--json", str(copy), env=env)
        out["unchanged_embedded"] = json.loads(done.stdout)["texts_embedded"]
        done, out["delete_s"] = hopgraph("delete", "--yes", "--json", str(copy), env=env)
        out["delete_seconds_inside"] = json.loads(done.stdout)["seconds"]
        out["counts_after_delete"] = stats(env)
        done, _ = hopgraph("check", "--json", env=env)
        out["check_after_delete"] = json.loads(done.stdout)["problems"]
    ok = (out["counts_after_replace"] == expected
          and out["replace_summary"]["texts_embedded"] == out["expected_embedded"]
          and out["check_problems"] == 0 and out["unchanged_embedded"] == 0
          and out["counts_after_delete"] == {"passages": 0, "entities": 0, "relations": 0}
          and out["check_after_delete"] == 0)
    rs = out["replace_summary"]
    print("| step | wall s (new process) | inside s | result |")
    print("|---|---:|---:|---|")
    print(f"| ingest the copy | {out['ingest_s']:.1f} | | {out['counts_before']} |")
    print(f"| replace: 10 edited, 10 removed | {out['replace_s']:.1f} | {rs['seconds']:.2f} | "
          f"{out['counts_after_replace']} (expected {expected}); embedded "
          f"{rs['texts_embedded']} (expected {out['expected_embedded']}); passages "
          f"+{rs['passages_added']} −{rs['passages_removed']}, relations "
          f"+{rs['relations_added']} −{rs['relations_removed']}, entities "
          f"+{rs['entities_added']} −{rs['entities_removed']} |")
    print(f"| check | {out['check_s']:.1f} | | {out['check_problems']} problems |")
    print(f"| ingest unchanged again | {out['unchanged_s']:.1f} | | embedded "
          f"{out['unchanged_embedded']} |")
    print(f"| delete the document | {out['delete_s']:.1f} | {out['delete_seconds_inside']:.2f} "
          f"| {out['counts_after_delete']}; check: {out['check_after_delete']} problems |")
    print("\nall as expected" if ok else "\nNOT as expected")
    if args.json:
        print(json.dumps(out, indent=2))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
