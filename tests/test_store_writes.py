"""The pieces that let several processes share a graph: the change log's parts (packed
under Milvus's row limit, settled once the next part exists) and the writer lease (a second
claimant waits, saying for whom; a dead holder's claim runs out and it may not write on).
Real Milvus Lite rows; the lease is run as on a server (`single_process=False`)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from hopgraph.errors import StoreError
from hopgraph.store import changes
from hopgraph.store.changes import PART_BYTES, WHOLE, ChangeLog, ending, parts_of
from hopgraph.store.lease import WriterLease


def test_parts_stay_under_the_row_limit_and_keep_every_name() -> None:
    ids = [f"r{i:038d}" for i in range(5000)]
    docs = [f"/some/long/path/to/document-{i}-" + "é" * 40 for i in range(2000)]
    parts = parts_of(7, 3, "relations", ids, docs)
    assert [p.part for p in parts] == list(range(3, 3 + len(parts)))
    assert all(len(p.row()["value"].encode("utf-8")) < PART_BYTES + 1024 for p in parts)
    assert [i for p in parts for i in p.ids] == ids
    assert sorted(d for p in parts for d in p.docs) == sorted(docs)
    assert {p.kind for p in parts} == {"docs", "relations"}
    assert parts_of(1, 0, "passages", [], []) == [parts_of(1, 0, "passages", [], [])[0]]
    end = ending(7, 10, "done", "me", ["a", "b"])
    assert [p.kind for p in end] == ["done", "end"] and end[-1].outcome == "done"


def test_a_part_settles_when_the_next_one_exists(open_graph, store_of) -> None:
    store = store_of(open_graph("log"))
    log = ChangeLog(store, store.changes)
    log.append(parts_of(1, 0, "passages", ["p1"], ["d1"]))  # parts 0 (docs), 1 (ids)
    log.append(parts_of(1, 2, "entities", ["e1"], ["d1"]))  # parts 2, 3
    pending = log.pending(0, WHOLE)
    assert [p.part for p in pending.settled] == [0, 1, 2]
    assert [p.part for p in pending.tail] == [3]  # its rows may be in flight
    assert pending.open == {1: {"d1"}} and pending.last == (1, 2)
    log.append(ending(1, 4, "done", "me", ["d1"]))
    pending = log.pending(1, 2)
    assert [(p.part, p.kind) for p in pending.settled] == [(3, "entities"), (4, "done")]
    assert pending.tail == []
    assert [p.kind for p in pending.closed] == ["end"] and pending.open == {}
    assert pending.last == (1, 5)
    assert log.pending(1, WHOLE).settled == []


def test_since_reads_exactly_the_parts_after_a_point(open_graph, store_of) -> None:
    """`since` asks Milvus only for the rows after (seq, part): the same parts, in the same
    order, as filtering the whole log, at every point (including -1 and WHOLE)."""
    store = store_of(open_graph("since"))
    log = ChangeLog(store, store.changes)
    written = []
    for seq, size in ((1, 3), (2, 12), (3, 1), (11, 2)):  # 11 > 9: ids are zero-padded
        parts = parts_of(seq, 0, "relations", [f"r{seq}-{i}" for i in range(size)],
                         [f"d{seq}"])
        parts += ending(seq, len(parts), "done", "me", [f"d{seq}"])
        log.append(parts)
        written += parts
    keys = sorted(p.key for p in written)
    points = [(0, -1), (0, WHOLE), *[(s, p) for s, p in keys], *[(s, -1) for s, _ in keys],
              *[(s, WHOLE) for s, _ in keys], (2, 1), (5, 0), (11, 99), (12, -1)]
    for seq, part in points:
        got = [p.key for p in log.since(seq, part)]
        assert got == [k for k in keys if k > (seq, part)], (seq, part)


def test_a_quick_look_is_quiet_only_when_the_last_strong_look_saw_every_part(
        open_graph, store_of, monkeypatch: pytest.MonkeyPatch) -> None:
    """`quiet` (a session read of the keys) is True only when `pending` already read every
    part after the point; a write under way is read strong again every UNDER_WAY_SECONDS."""
    store = store_of(open_graph("quiet"))
    log = ChangeLog(store, store.changes)
    assert not log.quiet(0, WHOLE)  # never looked strongly
    log.append([*parts_of(1, 0, "passages", ["p1"], ["d1"]), *ending(1, 2, "done", "me")])
    pending = log.pending(0, WHOLE)
    assert pending.last == (1, 2) and not pending.open
    assert not log.quiet(0, WHOLE)  # still short of what it read: its apply failed
    assert log.quiet(1, WHOLE) and log.quiet(1, 2)  # applied: nothing the strong look missed
    log.append(parts_of(2, 0, "entities", ["e1"], ["d2"]))  # a write under way
    assert not log.quiet(1, WHOLE)  # new parts: a strong look is due
    pending = log.pending(1, WHOLE)
    assert pending.open == {2: {"d2"}} and pending.last == (2, 0)  # its tail: part 1
    monkeypatch.setattr(changes, "UNDER_WAY_SECONDS", 3600.0)
    assert log.quiet(2, 0)  # the same parts, looked at strongly just now
    monkeypatch.setattr(changes, "UNDER_WAY_SECONDS", 0.0)
    assert not log.quiet(2, 0)  # its announced rows may have come since: look again
    monkeypatch.setattr(changes, "UNDER_WAY_SECONDS", 3600.0)
    log.append(ending(2, 2, "stopped", "me"))
    assert not log.quiet(2, 0)  # the end part is new
    assert log.pending(2, 0).closed and log.quiet(2, WHOLE)


def _lease(store, seconds: float = 30.0, clock=time.time) -> WriterLease:
    return WriterLease(store, store.writers, seconds, single_process=False, clock=clock)


def test_a_second_writer_waits_for_the_first_and_says_for_whom(open_graph, store_of) -> None:
    store = store_of(open_graph("lease"))
    first, second = _lease(store), _lease(store)
    first.acquire("ingest a.md", wait=60)
    told: list[str] = []
    got = threading.Event()

    def take() -> None:
        second.acquire("delete b", wait=60, waiting=told.append)
        got.set()

    thread = threading.Thread(target=take)
    thread.start()
    while not told:  # the second one has looked at the claims and is waiting
        assert thread.is_alive()
        got.wait(0.05)
    assert not got.is_set() and "ingest a.md" in told[0]
    first.check()  # the holder may write
    first.release()
    thread.join(timeout=60)
    assert got.is_set()
    second.check()
    with pytest.raises(StoreError, match="does not hold the writer lease"):
        first.check()
    second.release()
    assert store.where(store.writers, "ticket >= 0", ["id"]) == []


def test_a_dead_holders_claim_runs_out_and_it_may_not_write_on(open_graph, store_of) -> None:
    """A holder that stops renewing (frozen, or killed) is passed by once its claim has run
    out, and may not write on when it wakes up. Time is moved on by the clocks."""
    store = store_of(open_graph("lease_dead"))
    later = [0.0]
    dead = _lease(store, clock=lambda: time.time() + later[0])
    alive = _lease(store, clock=lambda: time.time() + 31)  # past the dead one's claim
    dead.acquire("ingest", wait=5)
    alive.acquire("ingest", wait=30)
    later[0] = 31  # the dead one wakes up as late as the other one acts
    with pytest.raises(StoreError, match="lost the writer lease"):
        dead.check()
    rows = store.where(store.writers, "ticket >= 0", ["id", "value"])
    assert alive.holder in {r["id"] for r in rows}
    assert all(json.loads(r["value"])["choosing"] is False for r in rows)
    alive.release()
    dead.release()
