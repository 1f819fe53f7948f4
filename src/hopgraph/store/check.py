"""`hopgraph check`: a graph's invariants, read from Milvus itself, and the safe repairs.

Invariants of a complete graph:
- the meta row is there, and every collection's vector width is the graph's dimension;
- no document is unfinished (a write that stopped, or one under way: `store.writes`);
- every relation points to passages that exist, and to at least one;
- every relation's subject and object entities exist;
- every entity belongs to some relation.

`repair` runs as a write (under the writer lease, announced in the change log, so other
processes follow it) and fixes what needs no model: an unfinished document is rolled back
(its passages deleted: ingest it again to have it back), passage ids that point nowhere are
dropped from their relations, relations left with no passage are deleted, and entities with
no relation are deleted. A relation whose entity is missing is reported, not guessed at:
ingesting its passages again restores the entity.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from hopgraph.sentences import sentence_rows
from hopgraph.store.milvus import MilvusStore
from hopgraph.store.writes import WriteSession, writing

KINDS = ("dangling passage", "relation without passage", "missing entity", "orphan entity",
         "vector width", "unfinished document", "unfinished write")


@dataclass
class Finding:
    """One broken invariant: what, which row, and whether `repair` fixes it."""

    kind: str
    id: str
    detail: str
    repairable: bool


@dataclass
class CheckReport:
    """What `check` found (and, after `repair`, what it fixed)."""

    graph: str
    uri: str
    counts: dict[str, int]
    problems: list[Finding] = field(default_factory=list)
    repaired: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON view (`check --json`)."""
        by_kind = {kind: sum(p.kind == kind for p in self.problems) for kind in KINDS}
        return {"graph": self.graph, "uri": self.uri, "counts": self.counts,
                "problems": len(self.problems), "by_kind": by_kind,
                "repaired": self.repaired, "findings": [asdict(p) for p in self.problems]}


def check(store: MilvusStore) -> CheckReport:
    """Read every entity, relation and passage id of the graph and test the invariants.
    Read strong: a session read by a process that has not written may not see yet what
    another process wrote last, and a relation without its entity would be reported."""
    with store.strong_reads():
        return _check(store)


def _check(store: MilvusStore) -> CheckReport:
    meta = store.meta  # a missing meta row is a StoreError naming the graph
    store.ensure_all_loaded()
    entities = {row["id"] for row in store.scan(store.entities, ["id"])}
    passages = {row["id"] for row in store.scan(store.passages, ["id"])}
    relations = list(store.scan(store.relations, ["id", "subject_id", "object_id",
                                                  "passage_ids"]))
    report = CheckReport(store.graph, store.uri, {
        "entities": len(entities), "relations": len(relations), "passages": len(passages)})
    problems = report.problems
    for doc, why in sorted(store.unfinished().items()):
        if doc == "*":  # no names: an earlier version's flag, or too many to list
            problems.append(Finding("unfinished write", "meta", why, True))
        else:
            problems.append(Finding("unfinished document", doc, f"{why}; `check --repair` "
                                    "removes it, ingesting it again completes it", True))
    for name in (store.entities, store.relations, store.passages):
        width = store.vector_width(name)
        if width != int(meta["dim"]):
            problems.append(Finding("vector width", name, f"vectors of width {width}, the "
                                    f"graph's embedder gives {meta['dim']}", False))
    linked: set[str] = set()
    for row in relations:
        rid, ends = row["id"], (row["subject_id"], row["object_id"])
        linked.update(ends)
        pids = list(row["passage_ids"])
        dangling = [p for p in pids if p not in passages]
        problems.extend(Finding("dangling passage", rid, f"points to passage {p}, which does "
                                "not exist", True) for p in dangling)
        if len(dangling) == len(pids):
            problems.append(Finding("relation without passage", rid,
                                    "no existing passage is left", True))
        problems.extend(Finding("missing entity", rid, f"entity {e} does not exist; ingest "
                                "the relation's passages again", False)
                        for e in dict.fromkeys(ends) if e not in entities)
    problems.extend(Finding("orphan entity", e, "belongs to no relation", True)
                    for e in sorted(entities - linked))
    return report


def repair(store: MilvusStore, report: CheckReport, session: WriteSession) -> int:
    """Apply the repairable fixes of `report` within write `session`; returns how many
    rows changed."""
    docs = sorted(p.id for p in report.problems if p.kind == "unfinished document")
    dangling = {p.id for p in report.problems if p.kind == "dangling passage"}
    emptied = {p.id for p in report.problems if p.kind == "relation without passage"}
    orphans = [p.id for p in report.problems if p.kind == "orphan entity"]
    changed = 0
    if docs or any(p.kind == "unfinished write" for p in report.problems):
        session.touch("passages", [], docs)  # the write's end then clears the marks
        session.completed.update([*docs, "*"])
    if docs:  # roll back: their passages go; the rounds after this clear what hung on them
        listed = ", ".join(json.dumps(d, ensure_ascii=False) for d in docs)
        found = store.where(store.passages, f"doc_id in [{listed}]", ["id", "text"],
                            limit=16384)
        gone = [row["id"] for row in found]
        session.touch("passages", gone, docs)
        if store.has_collection(store.sentences):  # absent until an open migrates the graph
            store.delete(store.sentences, [sid for row in found
                                           for sid in sentence_rows(row["id"], row["text"])])
        store.delete(store.passages, gone)
        changed += len(gone)
    passages = {row["id"] for row in store.scan(store.passages, ["id"])}
    keep = sorted(dangling - emptied)
    rows = store.get(store.relations, keep, ["id", "subject_id", "object_id", "text",
                                               "vector", "passage_ids"])
    for row in rows:
        row["passage_ids"] = [p for p in row["passage_ids"] if p in passages]
    for kind, ids in (("relations", [r["id"] for r in rows] + sorted(emptied)),
                      ("entities", orphans)):
        if ids:
            session.touch(kind, ids, [])
    changed += store.upsert(store.relations, rows)
    store.delete(store.relations, sorted(emptied))
    store.delete(store.entities, orphans)
    store.flush()
    return changed + len(emptied) + len(orphans)


def check_and_repair(store: MilvusStore, rounds: int = 6) -> CheckReport:
    """Repair until nothing repairable is left (rolling a document back leaves dangling
    links; deleting a relation can orphan an entity), as one write under the writer lease:
    the final check's report, with the rows changed over all rounds."""
    total = 0
    with writing(store, "check --repair") as session:
        report = check(store)
        for _ in range(rounds):
            if not any(p.repairable for p in report.problems):
                break
            total += repair(store, report, session)
            report = check(store)
    report = check(store)  # after the write's end: its marks are cleared
    report.repaired = total
    return report
