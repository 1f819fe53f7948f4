"""`hopgraph check`: a graph's invariants, read from Milvus itself, and the safe repairs.

Invariants of a complete graph:
- the meta row is there, and every collection's vector width is the graph's dimension;
- no write is left unfinished (the meta row's `writing` flag);
- every relation points to passages that exist, and to at least one;
- every relation's subject and object entities exist;
- every entity belongs to some relation.

`repair` fixes what needs no model and loses nothing a re-ingest would keep: passage ids that
point nowhere are dropped from their relations, relations left with no passage are deleted,
and entities with no relation are deleted. A relation whose entity is missing is reported,
not guessed at: ingesting its passages again restores the entity. Repairs count as a write
(the snapshot beside the graph is then rebuilt on the next open).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from hopgraph.store.milvus import MilvusStore

KINDS = ("dangling passage", "relation without passage", "missing entity", "orphan entity",
         "vector width", "unfinished write")


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
    """Read every entity, relation and passage id of the graph and test the invariants."""
    meta = store.meta  # a missing meta row is a StoreError naming the graph
    store.ensure_all_loaded()
    entities = {row["id"] for row in store.scan(store.entities, ["id"])}
    passages = {row["id"] for row in store.scan(store.passages, ["id"])}
    relations = list(store.scan(store.relations, ["id", "subject_id", "object_id",
                                                  "passage_ids"]))
    report = CheckReport(store.graph, store.uri, {
        "entities": len(entities), "relations": len(relations), "passages": len(passages)})
    problems = report.problems
    if store.incomplete:
        problems.append(Finding("unfinished write", "meta", store.incomplete, False))
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


def repair(store: MilvusStore, report: CheckReport) -> int:
    """Apply the repairable fixes of `report`; returns how many rows changed (none while a
    write is unfinished)."""
    dangling = {p.id for p in report.problems if p.kind == "dangling passage"}
    emptied = {p.id for p in report.problems if p.kind == "relation without passage"}
    orphans = [p.id for p in report.problems if p.kind == "orphan entity"]
    if not (dangling or emptied or orphans) or store.incomplete:
        return 0
    _, after = store.begin_write()
    passages = {row["id"] for row in store.scan(store.passages, ["id"])}
    keep = sorted(dangling - emptied)
    rows = store.get(store.relations, keep, ["id", "subject_id", "object_id", "text",
                                               "vector", "passage_ids"])
    for row in rows:
        row["passage_ids"] = [p for p in row["passage_ids"] if p in passages]
    changed = store.upsert(store.relations, rows)
    store.delete(store.relations, sorted(emptied))
    store.delete(store.entities, orphans)
    store.flush()
    store.end_write(after)
    report.repaired = changed + len(emptied) + len(orphans)
    return report.repaired


def check_and_repair(store: MilvusStore, rounds: int = 5) -> CheckReport:
    """Repair until nothing repairable is left (deleting a relation can orphan an entity);
    the final check's report, with the rows changed over all rounds. Nothing is repaired
    while a write is unfinished (the rerun of that ingest completes the graph)."""
    report, total = check(store), 0
    if store.incomplete:  # its orphans are the unfinished write's: rerunning it completes
        return report
    for _ in range(rounds):
        if not any(p.repairable for p in report.problems):
            break
        total += repair(store, report)
        report = check(store)
    report.repaired = total
    return report
