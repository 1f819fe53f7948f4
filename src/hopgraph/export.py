"""Export a graph: GraphML for graph tools (Gephi, Cytoscape), JSONL that ingests back.

Read from Milvus (no vectors, no model). A relation is stored as its id, its two entity ids and
its text, "subject predicate object" with single spaces (`identity.relation_text`); the
predicate is the text between the subject's and the object's words, checked by recomputing
the relation's id, so an exported triplet ingests back to the very same relation. Relations
whose predicate cannot be recovered that way (or whose entity is missing) are left out and
counted in `ExportReport.skipped`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from hopgraph.identity import relation_id
from hopgraph.store import MilvusStore

FORMATS = ("jsonl", "graphml")


@dataclass
class Triple:
    """One stored relation, as the triplet that produced it."""

    id: str
    subject: str  # entity id
    object: str
    predicate: str
    text: str
    passage_ids: list[str]


@dataclass
class ExportReport:
    """What was written."""

    entities: int = 0
    relations: int = 0
    passages: int = 0
    skipped: list[str] = field(default_factory=list)  # relation ids left out, and why


def _predicate(text: str, subject: str, obj: str) -> str | None:
    """The predicate inside "subject predicate object" (None if the words do not line up)."""
    words, n_subject, n_object = text.split(), len(subject.split()), len(obj.split())
    if len(words) <= n_subject + n_object:
        return None
    return " ".join(words[n_subject:len(words) - n_object])


def triples(store: MilvusStore, names: dict[str, str], report: ExportReport
            ) -> Iterator[Triple]:
    """The graph's relations with their predicates recovered (and checked)."""
    for row in store.scan(store.relations, ["id", "subject_id", "object_id", "text",
                                            "passage_ids"]):
        subject, obj = names.get(row["subject_id"]), names.get(row["object_id"])
        if subject is None or obj is None:
            report.skipped.append(f"{row['id']}: an entity is missing (see `hopgraph check`)")
            continue
        predicate = _predicate(row["text"], subject, obj)
        if predicate is None or relation_id(subject, predicate, obj) != row["id"]:
            report.skipped.append(f"{row['id']}: the predicate cannot be recovered from "
                                  f"{row['text']!r}")
            continue
        yield Triple(row["id"], row["subject_id"], row["object_id"], predicate, row["text"],
                     list(row["passage_ids"]))


def export_jsonl(store: MilvusStore, out: IO[str]) -> ExportReport:
    """One row per passage, in the input format: {"passage", "triplets", "doc_id", "metadata"?}
    (the document keeps every passage's id the same when the file is ingested again).

    Ingesting the file into an empty graph gives the same passages, entities and relations.
    """
    report = ExportReport()
    names = {row["id"]: row["name"] for row in store.scan(store.entities, ["id", "name"])}
    report.entities = len(names)
    by_passage: dict[str, list[list[str]]] = defaultdict(list)
    for triple in triples(store, names, report):
        report.relations += 1
        for pid in triple.passage_ids:
            by_passage[pid].append([names[triple.subject], triple.predicate,
                                    names[triple.object]])
    for row in store.scan(store.passages, ["id", "text", "doc_id", "metadata"]):
        item: dict[str, Any] = {"passage": row["text"], "triplets": by_passage.get(row["id"], []),
                                "doc_id": row["doc_id"]}
        if row.get("metadata"):
            item["metadata"] = row["metadata"]
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
        report.passages += 1
    return report


def export_graphml(store: MilvusStore, path: Path | IO[bytes], passages: bool = False
                   ) -> ExportReport:
    """Entities as nodes, relations as edges (predicate, text, passage ids); with `passages`,
    passages as nodes too, each linked to the entities its relations name."""
    import networkx as nx

    report = ExportReport()
    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()  # nodes: entity and passage ids
    names = {}
    for row in store.scan(store.entities, ["id", "name"]):
        names[row["id"]] = row["name"]
        graph.add_node(row["id"], kind="entity", label=row["name"])
    report.entities = len(names)
    mentions: dict[str, set[str]] = defaultdict(set)
    for triple in triples(store, names, report):
        graph.add_edge(triple.subject, triple.object, key=triple.id, label=triple.predicate,
                       text=triple.text, passage_ids=" ".join(triple.passage_ids))
        report.relations += 1
        for pid in triple.passage_ids:
            mentions[pid].update((triple.subject, triple.object))
    if passages:
        for row in store.scan(store.passages, ["id", "text", "doc_id"]):
            graph.add_node(row["id"], kind="passage", label=row["text"][:80],
                           text=row["text"], doc_id=row.get("doc_id") or "")
            for entity in sorted(mentions.get(row["id"], ())):
                graph.add_edge(entity, row["id"], key=f"in:{row['id']}", label="in passage")
            report.passages += 1
    nx.write_graphml(graph, path)
    return report
