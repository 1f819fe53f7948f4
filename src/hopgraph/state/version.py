"""What a process knows of a graph at one point of its change log: one immutable value.

A `GraphVersion` is the graph's structure (`KnowledgeGraph`), the point of the change log it
is at (`at`: a write number, and how much of that write), the passage texts known to be
current there, and the documents that may be partial. Nothing changes a version once made:
`advance(version, changes)` is the one way to the next one, whether the changes are this
process's own write or other processes' writes read back from Milvus. What is built from a
version — retrievers, their BM25 index, linker, search mirror, filter scopes — is keyed by
it, so a version handed to a reader stays what it was while a later one is made.

The vector files and their nearest-neighbour indexes live on disk and are shared by every
version: rows are appended at the end and the files are rewritten only when a removal
compacts them. A version names the rows it covers (`sizes`); the state hands out the files'
rows only while they hold exactly those (`state.opened.GraphState.vectors_of`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hopgraph.graph import KnowledgeGraph
from hopgraph.store.changes import WHOLE
from hopgraph.store.follow import sizes

CLOSED = WHOLE  # the part number of a write taken whole (`GraphVersion.at`)
_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, eq=False)
class GraphVersion:
    """One opened graph as of one point of its change log (see the module docstring).

    `at` is (write, part): the write number of the last change taken, and CLOSED when that
    write was taken whole (else the part up to which its settled parts were). `source`
    says how the version came to be: "snapshot" or "Milvus" (read when opened or reloaded),
    "followed" (other processes' writes), "written" (this process's write), "stopped"
    (this process's write that failed: the graph holds what it changed, and the next look
    at the log re-reads those ids)."""

    at: tuple[int, int]
    graph: KnowledgeGraph
    source: str
    texts: Mapping[str, str]  # passage texts known to be current at `at`
    unfinished: Mapping[str, str]  # documents that may be partial, with why

    @property
    def closed(self) -> bool:
        """Whether the version is at a write taken whole (no write's parts half taken)."""
        return self.at[1] == CLOSED

    @property
    def sizes(self) -> dict[str, int]:
        """Rows of each kind the graph holds: the rows of the vector files it covers."""
        return sizes(self.graph)

    def same(self, other: GraphVersion | None) -> bool:
        """Whether `other` holds this version's graph at the same point of the log (it may
        know more texts or unfinished documents): what retrievers and caches are keyed by."""
        return other is not None and other.graph is self.graph and other.at == self.at


@dataclass(frozen=True)
class Changes:
    """What makes the next version: where in the log it is, the graph with the changes in
    it (a graph no version holds), the passages whose text may have changed, texts read
    while the changes were made (current at `at`) and, when known, the unfinished
    documents."""

    at: tuple[int, int]
    graph: KnowledgeGraph
    source: str
    touched: Iterable[str] = ()
    texts: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    unfinished: Mapping[str, str] | None = None


def opened(at: tuple[int, int], graph: KnowledgeGraph, source: str,
           unfinished: Mapping[str, str]) -> GraphVersion:
    """The first version of a graph read whole (from its snapshot or from Milvus)."""
    return GraphVersion(at, graph, source, _EMPTY, MappingProxyType(dict(unfinished)))


def advance(version: GraphVersion, changes: Changes) -> GraphVersion:
    """The version after `changes`: their graph; the texts still current (those of
    passages not touched) with the texts read; their unfinished documents, or the
    version's."""
    touched = set(changes.touched)
    texts = ({pid: text for pid, text in version.texts.items() if pid not in touched}
             if touched else dict(version.texts))
    texts.update(changes.texts)
    unfinished = version.unfinished if changes.unfinished is None else MappingProxyType(
        dict(changes.unfinished))
    return GraphVersion(changes.at, changes.graph, changes.source, MappingProxyType(texts),
                        unfinished)


def with_texts(version: GraphVersion, texts: Mapping[str, str]) -> GraphVersion:
    """The same version knowing more passage texts (read by a search mirror, or from the
    lexicon file): current at the same point of the log, so the same graph and place."""
    known = dict(version.texts)
    known.update(texts)
    return GraphVersion(version.at, version.graph, version.source, MappingProxyType(known),
                        version.unfinished)
