"""The change log: what every write touched, so that other processes can follow it.

A write has a number (`seq`: one above the last closed write's, taken under the writer
lease, `store.lease`). Before each change to the rows it appends a *part* naming the ids it
is about to touch (one kind) and their documents, in as many parts as their size needs
(`parts_of`; documents and ids in parts of their own); when it is over it
appends an *end* part saying how it ended ("done", or "stopped": failed, or closed by the
next writer after its process died). A part is *settled* once a later part of its write or
its end exists: the writer changes the rows of one part before it announces the next.

A follower applies a settled part by reading its ids back from Milvus and taking what it
finds (present: added or updated; absent: removed), so applying a part twice, or late, or
after a newer part touched the same id, leaves it with what Milvus holds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hopgraph.store.collections import Collections

PART_BYTES = 48_000  # names per part, packed by size: a row's JSON must stay under 64 KiB
WHOLE = 1 << 40  # a part number past every part: (seq, WHOLE) is "all of write seq"
KEEP_WRITES = 1000  # closed writes kept in the log; a follower further behind reloads
_FIELDS = ["id", "seq", "value"]
_PAGE = 16384
_PART_LIMIT = 10**6  # part numbers of six digits keep ids in (seq, part) order
UNDER_WAY_SECONDS = 5.0  # a write under way is looked at strongly at least this often


@dataclass(frozen=True)
class Part:
    """One row of the log."""

    seq: int
    part: int
    # "entities", "relations", "passages"; "docs" (documents only); "done" (documents the
    # write completed, just before its end); "end"
    kind: str
    ids: tuple[str, ...] = ()
    docs: tuple[str, ...] = ()
    outcome: str = ""  # end parts: "done" or "stopped"
    who: str = ""  # end parts: which process wrote, and what

    @property
    def key(self) -> tuple[int, int]:
        return self.seq, self.part

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Part:
        value = json.loads(row["value"])
        return cls(int(row["seq"]), int(value["part"]), value["kind"],
                   tuple(value.get("ids", ())), tuple(value.get("docs", ())),
                   value.get("outcome", ""), value.get("who", ""))

    @property
    def id(self) -> str:
        """The row's primary key: ordered as `key` is, for part numbers under _PART_LIMIT."""
        return f"{self.seq:012d}.{self.part:06d}"

    def row(self) -> dict[str, Any]:
        value = {"part": self.part, "kind": self.kind, "ids": list(self.ids),
                 "docs": list(self.docs), "outcome": self.outcome, "who": self.who}
        return {"id": self.id, "seq": self.seq,
                "value": json.dumps(value, ensure_ascii=False), "vector": [1.0, 0.0]}


def parts_of(seq: int, first: int, kind: str, ids: Sequence[str], docs: Iterable[str]
             ) -> list[Part]:
    """Parts `first`, `first + 1`, ... of write `seq`: the documents `docs` (kind "docs"),
    then `ids` of `kind`, each part under PART_BYTES; at least one part."""
    parts = [Part(seq, 0, "docs", docs=tuple(group))
             for group in _packed(sorted(set(docs)))]
    parts += [Part(seq, 0, kind, tuple(group)) for group in _packed(list(ids))]
    parts = parts or [Part(seq, 0, kind)]
    return [Part(p.seq, first + n, p.kind, p.ids, p.docs) for n, p in enumerate(parts)]


def ending(seq: int, first: int, outcome: str, who: str, completed: Iterable[str] = ()
           ) -> list[Part]:
    """The last parts of write `seq`: the documents it completed ("done" parts), then its
    end part, which says how it ended."""
    parts = [Part(seq, first + n, "done", docs=tuple(group))
             for n, group in enumerate(_packed(sorted(set(completed))))]
    return [*parts, Part(seq, first + len(parts), "end", outcome=outcome, who=who)]


def _after(seq: int, part: int) -> str:
    """The filter of the log rows after (`seq`, `part`) (a few more when part < 0)."""
    if part < 0:
        return f"seq >= {seq}"
    if part < _PART_LIMIT:  # a row's id orders as (seq, part): both zero-padded
        return f'seq > {seq} or (seq == {seq} and id > "{Part(seq, part, "").id}")'
    return f"seq > {seq}"


def _key(row: dict[str, Any]) -> tuple[int, int]:
    """A log row's (seq, part), from its id alone."""
    seq, part = str(row["id"]).split(".")
    return int(seq), int(part)


def _packed(names: list[str]) -> list[list[str]]:
    """`names` in groups whose JSON stays under PART_BYTES."""
    groups: list[list[str]] = []
    size = PART_BYTES
    for name in names:
        cost = len(json.dumps(name, ensure_ascii=False).encode("utf-8")) + 2
        if size + cost > PART_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(name)
        size += cost
    return groups


@dataclass
class Pending:
    """The log after some point, by write: settled parts to apply, the last part of a write
    still open (its rows may be in flight: applied again on every look until it settles),
    and the open writes with the documents they touched so far."""

    settled: list[Part] = field(default_factory=list)
    tail: list[Part] = field(default_factory=list)
    closed: list[Part] = field(default_factory=list)  # end parts, by seq
    open: dict[int, set[str]] = field(default_factory=dict)  # seq -> documents
    last: tuple[int, int] = (0, -1)  # the last settled (seq, part)


class ChangeLog:
    """The change-log collection of one graph."""

    def __init__(self, store: Collections, collection: str) -> None:
        self.store = store
        self.collection = collection
        self._seen: set[tuple[int, int]] | None = None  # parts the last `pending` read
        self._seen_at = 0.0  # when (time.monotonic)
        self._seen_last = (0, -1)  # the point a follower reaches by applying them
        self._under_way = False  # whether it found a write under way

    def append(self, parts: Iterable[Part]) -> None:
        """Add parts (upserted: writing a part again is harmless)."""
        self.store.upsert(self.collection, (p.row() for p in parts))

    def since(self, seq: int, part: int = -1) -> list[Part]:
        """Every part after (`seq`, `part`), in order (read strong). Only those rows are
        read: a follower looks before queries (at most every `FOLLOW_SECONDS`), and the parts
        of a large write it applied already (a 1M-relation ingest logs every id it stored)
        were slow to read and parse, and every query paid for them (benchmarks/RESULTS.md,
        "1M relations on Milvus Lite, before and after issue 23")."""
        seq, part = int(seq), int(part)
        rows = self.store.where(self.collection, _after(seq, part), _FIELDS, _PAGE)
        parts = sorted((Part.from_row(r) for r in rows), key=lambda p: p.key)
        return [p for p in parts if p.key > (seq, part)]

    def quiet(self, seq: int, part: int = -1) -> bool:
        """Whether a quick look finds nothing after (`seq`, `part`) that the last `pending`
        did not: then a strong look would find nothing to apply either.

        The quick look is a session read of the part keys alone. It does not wait for the
        server's time tick, as a strong read does, so it is far quicker on a Milvus 2.3
        server with its default tick (benchmarks/RESULTS.md, "1M relations on Milvus Lite,
        before and after issue 23", "Where the time went"). It may miss parts written
        within the last tick or so; the next look finds them. A follower short of the point
        the last `pending` led to (its apply failed, or it reloaded an older graph) is never
        quiet. A write under way announces each part before it writes that part's rows, so
        while one is seen, a strong look is due at least every UNDER_WAY_SECONDS (`pending`
        reads the rows of its last part again each time)."""
        seq, part = int(seq), int(part)
        if self._seen is None or (seq, part) < self._seen_last or (
                self._under_way and time.monotonic() - self._seen_at >= UNDER_WAY_SECONDS):
            return False
        rows = self.store.where(self.collection, _after(seq, part), ["id"], _PAGE,
                                strong=False)
        found = {key for key in map(_key, rows) if key > (seq, part)}
        return found <= self._seen

    def pending(self, seq: int, part: int = -1) -> Pending:
        """What a follower that applied everything up to (`seq`, `part`) has still to do."""
        result = Pending(last=(seq, part))
        parts = self.since(seq, part)
        self._seen, self._seen_at = {p.key for p in parts}, time.monotonic()
        ended = {p.seq for p in parts if p.kind == "end"}
        by_seq: dict[int, list[Part]] = {}
        for p in parts:
            by_seq.setdefault(p.seq, []).append(p)
        for s, group in sorted(by_seq.items()):
            if s in ended:
                result.settled.extend(p for p in group if p.kind != "end")
                result.closed.extend(p for p in group if p.kind == "end")
                result.last = group[-1].key
                continue
            result.open[s] = {d for p in group if p.kind != "done" for d in p.docs}
            result.settled.extend(group[:-1])  # the last part's rows may be in flight
            result.tail.append(group[-1])
            if len(group) > 1:
                result.last = group[-2].key
            break  # a later write cannot start before this one is closed
        self._under_way, self._seen_last = bool(result.open), result.last
        return result

    def trim(self, below: int) -> None:
        """Forget writes numbered below `below`."""
        if below > 0:
            self.store.delete_where(self.collection, f"seq < {int(below)}")
