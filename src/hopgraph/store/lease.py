"""The writer lease: one write at a time per graph, across processes and machines.

Milvus has no compare-and-swap, so the lease is Lamport's bakery algorithm over the rows of
the graph's `writers` collection, always read strong (a read sees every write acknowledged
before it). A process that wants to write

1. claims a row (its holder id) marked `choosing`;
2. takes a ticket above every ticket drawn before it: twice a timestamp from the server's
   oracle, plus one (no read, so no wait for the server's time tick), or, where there is
   none, one above the highest live claim's;
3. writes its ticket, no longer choosing;
4. waits while another live claim is choosing, or holds a lower (ticket, holder) pair.

It then holds the lease until it deletes its row. The bakery needs no atomic read-modify-
write: two processes that draw the same ticket are ordered by holder id, and one that was
still choosing when the other looked is waited for. A claim lives while its `expires` time
(wall clock, renewed every quarter of the lease by a heartbeat thread) is in the future: a
process that died stops renewing and, one lease later, the others pass it by.

Fencing is the holder's own: before every change to the graph the writer checks that its
claim has not run out (`check`), so a holder paused past its lease (a stopped process, a
clock jump) stops instead of writing beside the next holder. Not excluded: a holder paused
*inside* one Milvus call for longer than the lease, and clocks of different machines that
differ by more than the margin (`MARGIN_S`, or a quarter of a short lease).

On Milvus Lite one process holds the file, so every other claim found there is a dead one.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hopgraph.errors import StoreError
from hopgraph.store.collections import Collections

log = logging.getLogger(__name__)

MARGIN_S = 2.0  # a holder stops writing this long (at most) before its claim would run out
_POLL_S = 0.2  # between looks at the other claims while waiting (each look is a strong read)
_FIELDS = ["id", "ticket", "value"]


@dataclass(frozen=True)
class Claim:
    """One process's row in the writers collection."""

    holder: str
    ticket: int
    choosing: bool
    expires: float  # wall-clock seconds
    who: str  # host, pid and what it is doing, for the messages of those who wait

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Claim:
        value = json.loads(row["value"])
        return cls(row["id"], int(row["ticket"]), bool(value.get("choosing")),
                   float(value.get("expires", 0)), str(value.get("who", "?")))

    def row(self) -> dict[str, Any]:
        value = {"choosing": self.choosing, "expires": self.expires, "who": self.who}
        return {"id": self.holder, "ticket": self.ticket, "value": json.dumps(value),
                "vector": [1.0, 0.0]}


class WriterLease:
    """This process's claim on one graph's writer lease (see the module docstring)."""

    def __init__(self, store: Collections, collection: str, seconds: float,
                 single_process: bool, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.collection = collection
        self.seconds = seconds
        self.single_process = single_process
        self.clock = clock
        self.margin = min(MARGIN_S, seconds / 4)  # a renewal is due every quarter lease
        self.holder = uuid.uuid4().hex
        self.claim: Claim | None = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self._lost: str | None = None

    # --- taking and giving back ------------------------------------------------------------

    def acquire(self, doing: str, wait: float,
                waiting: Callable[[str], None] | None = None) -> None:
        """Take the lease, waiting at most `wait` s for the holders before us; `waiting` is
        told once, with whom we wait for."""
        who = f"{socket.gethostname()} pid {os.getpid()}: {doing}"
        self._lost = None
        self._put(Claim(self.holder, 0, True, self._expiry(), who))
        ticket = self._ticket()
        self._put(Claim(self.holder, ticket, False, self._expiry(), who))
        self._start_heartbeat()
        deadline = time.monotonic() + wait
        told = False
        try:
            while True:
                ahead = [c for c in self._others()
                         if c.choosing or (c.ticket, c.holder) < (ticket, self.holder)]
                if not ahead:
                    return
                if not told and waiting is not None:
                    waiting(_describe(ahead[0], self.clock()))
                    told = True
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"waited {wait:.0f} s for the writer lease of graph "
                        f"{self.store.graph!r}; it is held by {_describe(ahead[0], self.clock())}",
                        where=self.store.uri,
                        fix="wait for that write to finish, or raise HOPGRAPH_LEASE_WAIT")
                time.sleep(_POLL_S)  # polling the other claims, not synchronization
        except BaseException:
            self.release()
            raise

    def _ticket(self) -> int:
        """Our ticket, drawn after our `choosing` claim was written (step 2).

        From the server's timestamp oracle: 2 × stamp + 1. Stamps strictly grow, so this is
        above every oracle ticket drawn before it, and above a ticket drawn as one above
        the claims then seen (2 × an earlier stamp + 2; or + k for k such tickets drawn one
        above another, each while the others' claims lived: a stamp grows by 2^18 each
        millisecond, so that needs over 2^18 such draws within one millisecond). So a process
        that looks at our claim after we drew finds us choosing or holding a lower ticket, as
        the bakery needs, and one that starts choosing after our look draws a higher one. On
        Milvus Lite, or when the server gives no timestamp: one above the highest live claim
        (one Strong read)."""
        stamp = None if self.single_process else self.store.timestamp()
        if stamp:
            return 2 * stamp + 1
        return 1 + max((c.ticket for c in self._others()), default=0)

    def release(self) -> None:
        """Give the lease back (delete our claim); safe to call twice."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
            self._beat = None
        if self.claim is not None:
            self.claim = None
            try:
                self.store.delete(self.collection, [self.holder])
            except StoreError as exc:  # the claim runs out by itself
                log.warning("could not release the writer lease: %s", exc)

    def check(self) -> None:
        """Raise unless we still hold a live claim (called before every change)."""
        if self.claim is None:
            raise StoreError("this process does not hold the writer lease",
                             where=self.store.uri)
        if self._lost or self.clock() > self.claim.expires - self.margin:
            reason = self._lost or "its claim ran out (was the process paused?)"
            raise StoreError(f"lost the writer lease of graph {self.store.graph!r}: "
                             f"{reason}; the write stopped before its next change",
                             where=self.store.uri,
                             fix="run it again: a stopped write is completed by a rerun")

    # --- rows ------------------------------------------------------------------------------

    def _expiry(self) -> float:
        return self.clock() + self.seconds

    def _put(self, claim: Claim) -> None:
        self.store.upsert(self.collection, [claim.row()])
        self.claim = claim

    def _others(self) -> list[Claim]:
        """The other live claims (expired ones, and on Lite all, are passed by)."""
        now = self.clock()
        claims = [Claim.from_row(r) for r in self.store.where(self.collection, "ticket >= 0",
                                                              _FIELDS)]
        others = [c for c in claims if c.holder != self.holder]
        dead = [c.holder for c in others
                if self.single_process or c.expires + self.seconds < now]
        if dead:  # long dead: tidy up (a claim only just expired may still be renewed)
            self.store.delete(self.collection, dead)
        return [c for c in others if not self.single_process and c.expires > now]

    # --- heartbeat -------------------------------------------------------------------------

    def _start_heartbeat(self) -> None:
        if self.single_process:  # no one else can take a Lite file's lease
            self.claim = Claim(self.holder, self.claim.ticket if self.claim else 0, False,
                               float("inf"), self.claim.who if self.claim else "")
            return
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._renew, name="hopgraph-lease",
                                      daemon=True)
        self._beat.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.seconds / 4):
            claim = self.claim
            if claim is None:
                return
            try:
                self._put(Claim(claim.holder, claim.ticket, claim.choosing, self._expiry(),
                                claim.who))
            except StoreError as exc:
                self._lost = f"renewing it failed ({exc})"
                return


def _describe(claim: Claim, now: float) -> str:
    state = "choosing a ticket" if claim.choosing else f"ticket {claim.ticket}"
    return f"{claim.who} ({state}; its claim runs out in {max(0.0, claim.expires - now):.0f} s)"
