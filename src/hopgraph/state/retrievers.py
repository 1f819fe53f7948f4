"""The retriever of an opened graph's current version, and where the next one starts.

A retriever is built for one version (`GraphVersion.same`) and kept while that version is
current. The next one starts from the last one built and the passages whose texts changed
since (`stale`), so that its BM25 index and linker cost the change, not the graph; the first
of a process (or after a change of settings, or a reload) from the lexicon file, which writes
keep in step (`lexicon.keeper`). What a retriever is and how it is built is the caller's
(`retrieve.pipeline.Retriever.over`): here it is anything that can say where the next one
starts (`lexicon.keeper.Carrier`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from hopgraph.lexicon.keeper import Carrier, Keeper
from hopgraph.lexicon.link import EntityLinker
from hopgraph.state.version import GraphVersion
from hopgraph.store.ann import Ann
from hopgraph.store.milvus import MilvusStore


class Held(Carrier, Protocol):
    """What a graph's state asks of a retriever: what the keeper asks (`Carrier`), and to
    take up nearest-neighbour indexes built after it (`store.indexing`)."""

    def use_indexes(self, found: dict[str, Ann]) -> None: ...


R = TypeVar("R", bound=Held)


@dataclass(frozen=True)
class Start(Generic[R]):
    """What a retriever is built from: one version, the store, the vectors that match it,
    and where its BM25 index and linker start (`search_from`: the holder of an index to
    carry over, a retriever's searcher or a saved lexicon; `previous`: the last retriever,
    whose other caches may carry over; `stale`: passages whose text changed since)."""

    version: GraphVersion
    store: MilvusStore
    vectors: dict[str, np.ndarray | None]
    indexes: Callable[[], dict[str, Ann]]
    search_from: Any = None
    linker_from: EntityLinker | None = None
    previous: R | None = None
    stale: frozenset[str] = frozenset()


@dataclass
class Built(Generic[R]):
    """A retriever, and what building it learned: the passage texts now known (None: as
    the version had them) and the vectors it read back from Milvus (graph order, by kind)."""

    retriever: R
    texts: Mapping[str, str] | None = None
    vectors: dict[str, np.ndarray] = field(default_factory=dict)


class Retrievers(Generic[R]):
    """The retriever of one version at a time, and the last one built (see the module
    docstring)."""

    def __init__(self, keeper: Keeper) -> None:
        self.keeper = keeper
        self._built: tuple[GraphVersion, R] | None = None
        self._previous: R | None = None  # the last one built: the next one's start
        self.stale: set[str] = set()  # passages whose texts changed since (with a last one)

    def of(self, version: GraphVersion) -> R | None:
        """The retriever built for `version`, if any."""
        built = self._built
        return built[1] if built is not None and built[0].same(version) else None

    @property
    def carries(self) -> bool:
        """Whether the next retriever starts from a last one (not from the lexicon file)."""
        return self._previous is not None

    def touched(self, passages: Iterable[str]) -> None:
        """Passages whose texts may have changed (a write, a change followed)."""
        if self._previous is not None:  # kept only for a next retriever to carry over
            self.stale.update(passages)

    def start(self, version: GraphVersion, store: MilvusStore,
              vectors: dict[str, np.ndarray | None], indexes: Callable[[], dict[str, Ann]],
              fresh: bool = False) -> Start[R]:
        """Where a new retriever of `version` starts: the lexicon a write of this process
        left when the version is that write's, else the last retriever's searcher and
        linker, else the saved lexicon. `fresh`: not from the last retriever (the graph is
        being written)."""
        previous = None if fresh else self._previous
        stale = frozenset() if fresh else frozenset(self.stale)
        search_from: Any
        if previous is not None and not self.keeper.current(version.at):
            search_from, linker_from = previous.carried()
        else:
            search_from = self.keeper.starting_lexicon()
            linker_from = None if search_from is None else search_from.linker
        return Start(version, store, vectors, indexes, search_from, linker_from, previous,
                     stale)

    def keep(self, version: GraphVersion, retriever: R, start: Start[R]) -> None:
        """`retriever` was built from `start` and `version` is current: it is the version's,
        and the next one's start; the keeper is told (the first of a process may save the
        lexicon file)."""
        self._built = (version, retriever) if version.same(start.version) else None
        self._previous = retriever
        self.stale.difference_update(start.stale)
        self.keeper.note_built(version.at, version.graph, version.texts, retriever,
                               start.previous is None)

    def take_indexes(self, version: GraphVersion,
                     indexes: Callable[[GraphVersion], dict[str, Ann]]) -> None:
        """Nearest-neighbour indexes were built after `version`'s retriever
        (`store.indexing`): it searches with them; later ones load them."""
        retriever = self.of(version)
        if retriever is not None:
            retriever.use_indexes(indexes(version))

    def drop_built(self) -> None:
        """The current version's retriever no longer holds (its graph changed under it)."""
        self._built = None

    def forget(self) -> None:
        """Start afresh: no retriever, none to carry over (new settings, a reload)."""
        self._built = self._previous = None
        self.stale.clear()
