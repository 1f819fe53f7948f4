"""The cost of a filter (`where`): MuSiQue's 1,890 passages with documents and metadata, the
50 dev questions asked with no filter and under filters that keep from one document to
nine tenths of the passages.

Each passage gets a document and metadata from its title (deterministic, as a corpus of
wiki pages grouped by first letter would have): `doc_id` "wiki/<letter>", and `title`,
`letter`, `year` (1900-2019), `lang`, `words`. Every filter is first asked once untimed
(`first ms`: building its scope, the Milvus query included, cached per graph version after),
then the 50 questions are timed with the default method (the warm p50 and p95).

Usage (from the repository root):
  .venv/bin/python benchmarks/filters.py                 # ingests first (~1.5 min)
  .venv/bin/python benchmarks/filters.py --uri f.db      # reuse (ingests if missing)
  options: --method default --memory-limit 0 (searches in Milvus) --json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hopgraph import GraphRAG, Query, Where
from hopgraph.ingest.loaders import load_file
from hopgraph.retrieve.scope import Scopes
from hopgraph.store import MilvusStore

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"
GRAPH = "musique_meta"


def metadata_of(title: str, text: str) -> tuple[str, dict[str, Any]]:
    """A passage's document and metadata from its title and text."""
    letter = title[:1].upper() if title[:1].isalpha() else "#"
    code = sum(map(ord, title))
    return f"wiki/{letter}", {"title": title, "letter": letter, "words": len(text.split()),
                              "year": 1900 + code % 120,
                              "lang": "de" if code % 3 == 0 else "en"}


FILTERS: list[tuple[str, dict[str, Any] | None]] = [
    ("none", None),
    ("one document (wiki/Q)", {"doc_id": "wiki/Q"}),
    ("one document (wiki/M)", {"doc_id": "wiki/M"}),
    ("year >= 2008 (~10 %)", {"year": {"$gte": 2008}}),
    ("three documents (wiki/A, B, C)", {"doc_id": {"$in": ["wiki/A", "wiki/B", "wiki/C"]}}),
    ("lang = de (~33 %)", {"lang": "de"}),
    ("year < 1960 and words > 80", {"year": {"$lt": 1960}, "words": {"$gt": 80}}),
    ("not (year >= 2008) (~90 %)", {"$not": {"year": {"$gte": 2008}}}),
]


def build(uri: str) -> GraphRAG:
    """The graph (ingested when missing)."""
    rag = GraphRAG(uri=uri, graph=GRAPH)
    if rag.stats()["passages"] == 0:
        report = load_file(DATA / "openie_gpt-3.5-turbo-1106.json")
        rows = []
        for record in report.records:
            title, _, text = record.text.partition("\n")
            doc, meta = metadata_of(title, text)
            rows.append(dataclasses.replace(record, doc_id=doc, metadata=meta))
        started = time.perf_counter()
        rag.add(rows)
        print(f"ingested {len(rows)} passages in {time.perf_counter() - started:.0f} s",
              file=sys.stderr)
    return rag


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--uri", help="a Milvus Lite file to reuse (default: a temporary one)")
    parser.add_argument("--method", default="default")
    parser.add_argument("--memory-limit", type=int, default=None,
                        help="0: every search in Milvus (default: the in-process mirror)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    questions = [q["question"] for q in json.loads(
        (DATA / "questions_dev.json").read_text(encoding="utf-8"))]
    with tempfile.TemporaryDirectory(prefix="hopgraph-filters-") as tmp:
        rag = build(args.uri or str(Path(tmp) / "filters.db"))
        rag.memory_limit = args.memory_limit
        total = len(rag.graph.passage_ids)
        store = MilvusStore.from_settings(rag.settings, create=False)
        scopes = Scopes(rag.graph, store)  # a filter's passages, found as the retriever does
        rows = []
        for name, spec in FILTERS:
            where = Where.parse(spec)
            if where is None:  # the backend's warm-up (the mirror loads), once
                rag.retrieve(Query(questions[0], args.method))
            started = time.perf_counter()
            kept = total if where is None else len(scopes.of(where).passage_ids)  # once
            first_ms = (time.perf_counter() - started) * 1000
            if where is not None:  # the retriever's own scope of the filter, untimed
                rag.retrieve(Query(questions[0], args.method, where=where))
            times = []
            for question in questions:
                began = time.perf_counter()
                rag.retrieve(Query(question, args.method, where=where))
                times.append((time.perf_counter() - began) * 1000)
            rows.append({"filter": name, "passages": kept, "share": kept / total,
                         "first_ms": first_ms if where is not None else 0.0,
                         "p50_ms": statistics.median(times),
                         "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))]})
        store.close()
        rag.close()
    base = rows[0]["p50_ms"]
    print(f"| filter ({args.method}, {'Milvus' if args.memory_limit == 0 else 'mirror'}) | "
          "passages kept | scope ms (once) | p50 ms | p95 ms | p50 / unfiltered |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['filter']} | {row['passages']} ({100 * row['share']:.1f} %) | "
              f"{row['first_ms']:.1f} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | "
              f"{row['p50_ms'] / base:.2f} |")
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
