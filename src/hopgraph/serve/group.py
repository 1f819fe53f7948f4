"""Group commit on a served graph: adds queued behind a write, written together, each with
its own outcome (`GraphService.add` queues them and chooses who writes).

`write_group` stores a group in one write (`GraphRAG.add_parts`): one lease round for all
of them. If that write fails, each add is written alone, so that only a bad one fails; an
add the group's write stored before the failure keeps the group's summary (the write alone
only completed it).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from hopgraph.api import GraphRAG
from hopgraph.ingest.sync import Part
from hopgraph.records import IngestSummary

log = logging.getLogger(__name__)
GROUP_LIMIT = 32  # queued adds written together at most (one write, one lease round)


@dataclass(eq=False)
class Queued:
    """An add waiting for a write, and its outcome once a write took it."""

    part: Part
    done: threading.Event = field(default_factory=threading.Event)
    summary: IngestSummary | None = None
    error: BaseException | None = None

    @property
    def settled(self) -> bool:
        return self.summary is not None or self.error is not None


def write_group(rag: GraphRAG, take: Callable[[], list[Queued]], group: list[Queued]) -> None:
    """Write the adds `take` gives (called once the write holds the lease; it also fills
    `group`), setting each one's summary or error. Raises only what failed before any add
    was taken and was no `Exception` of the write's own (the caller settles those)."""
    done: list[IngestSummary] = []
    try:
        summaries = rag.add_parts(lambda: [queued.part for queued in take()], done)
    except Exception as exc:
        if len(group) <= 1:
            for queued in group:
                queued.error = exc
            if not group:
                raise
            return
        log.warning("a group of %d adds failed (%s); writing each alone", len(group), exc)
        for index, queued in enumerate(group):
            try:
                again = rag.add_parts([queued.part])[0]
            except Exception as alone:
                queued.error = alone
                continue
            queued.summary = done[index] if index < len(done) else again
        return
    for queued, summary in zip(group, summaries, strict=True):
        queued.summary = summary
