"""Which documents of a graph may be partial, and why: said in one place.

Two sources name them. The meta row names the documents of writes that stopped (a failure,
a killed writer closed by the next one), until a write completes or removes them, and flags
a write of an earlier hopgraph version that never finished ("*"). The change log names the
documents of writes under way (or whose process died before anyone closed them). A
document named by both is reported as the meta row says. `MilvusStore.unfinished` reads
both now; an open graph (`state`) combines the meta row it last read with the writes
under way it last saw in the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

UNFINISHED_MAX = 500  # documents named in the meta row; past that, a count
EARLIER_VERSION = "a write of an earlier hopgraph version did not finish; rerun it"


def unfinished_of(meta: Mapping[str, Any], under_way: Mapping[int, Iterable[str]]
                  ) -> dict[str, str]:
    """The documents that may be partial, with why: those the meta row names, then those
    of the writes under way (`under_way`: documents by write number)."""
    found = dict(meta.get("unfinished", {}))
    if meta.get("writing"):  # an unfinished write of an earlier version: no names
        found["*"] = EARLIER_VERSION
    for seq, docs in sorted(under_way.items()):
        for doc in sorted(docs):
            found.setdefault(doc, f"write #{seq} is under way (or its process died)")
    return found


def mark(unfinished: dict[str, str], docs: Iterable[str], why: str) -> None:
    """Name `docs` unfinished (`why`) in a meta row's map, up to UNFINISHED_MAX documents,
    then a count."""
    for doc in sorted(docs):
        if doc in unfinished or len(unfinished) < UNFINISHED_MAX:
            unfinished[doc] = why
        else:
            unfinished["*"] = "more documents are unfinished than the meta row names; " \
                              "`hopgraph check` lists the graph's state"


def describe_unfinished(graph: str, unfinished: Mapping[str, str], shown: int = 5
                        ) -> str | None:
    """One line naming the unfinished documents (the first `shown`), or None."""
    if not unfinished:
        return None
    names = sorted(unfinished)
    listed = "; ".join(f"{doc!r}: {unfinished[doc]}" for doc in names[:shown])
    more = f" (and {len(names) - shown} more)" if len(names) > shown else ""
    return (f"graph {graph!r} is incomplete: {len(names)} unfinished document(s): "
            f"{listed}{more}; ingest them again to complete them, or `hopgraph check "
            "--repair` to remove them")
