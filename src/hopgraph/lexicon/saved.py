"""The lexicon of a graph: its BM25 index and entity linker, the two structures a first
query would otherwise build over the whole graph, kept beside the snapshot with the passage
texts (`store.sidecar`) so that a new process starts from them.

Both are determined by content: a passage's term counts by its id (the id hashes the
normalized text that `bm25_terms.tokens` reads), a linker by its entity names in order. So
a lexicon saved at any write is a starting point that `carried` brings to the graph at the
cost of what differs (passages added or removed, by id; names added at the end, else the
linker is built again), and the result equals a build from scratch. Texts, which a write may
change under the same id (case, spacing), join the state's known texts only for passages no
write since the file's touched (`keeper.Keeper.saved_texts`).

When the file is read, made and saved is `lexicon.keeper`'s business.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.lexicon.lexical import LocalBM25, carried_bm25, passage_bm25
from hopgraph.lexicon.link import STOPWORDS, EntityLinker
from hopgraph.store import MilvusStore, sidecar

log = logging.getLogger(__name__)

# Bump when `bm25_terms.tokens`, `link.match_key` or the trigram index change what they give:
# a saved lexicon of another version is not used. The stopwords are in it as they stand.
VERSION = "2:" + hashlib.blake2b(" ".join(sorted(STOPWORDS)).encode(), digest_size=4).hexdigest()


@dataclass(frozen=True)
class Lexicon:
    """A graph's BM25 index over its passages and its entity linker (with its trigram
    index)."""

    bm25: LocalBM25
    linker: EntityLinker

    def saved_form(self) -> tuple[dict[str, list[str]], dict[str, np.ndarray]]:
        """Strings and arrays to save (`from_saved` reads them back)."""
        ids, terms, counts = self.bm25.arrays()
        keys, grams, lookups = self.linker.arrays()
        strings = {"bm25_ids": ids, "bm25_terms": terms, "names": self.linker.names,
                   "keys": keys, "grams": grams or []}
        return strings, {**{f"bm25_{k}": v for k, v in counts.items()}, **lookups}

    @classmethod
    def from_saved(cls, saved: sidecar.Saved) -> Lexicon:
        """The lexicon a file held (ValueError if its parts do not fit)."""
        strings, arrays = saved.strings, saved.arrays
        bm25 = LocalBM25.from_arrays(strings["bm25_ids"], strings["bm25_terms"],
                                     {k: arrays[f"bm25_{k}"] for k in _BM25})
        linker = EntityLinker.from_arrays(strings["names"], strings["keys"], strings["grams"],
                                          arrays)
        return cls(bm25, linker)


_BM25 = ("indptr", "indices", "data", "lengths")
_STRINGS = ("bm25_ids", "bm25_terms", "names", "keys", "grams")
_ARRAYS = (*(f"bm25_{k}" for k in _BM25), "key_indptr", "key_entities", "unspaced_key",
           "unspaced_entity", "gram_indptr", "gram_keys")


def read(path: Path, graph: str) -> tuple[Lexicon, sidecar.Saved] | None:
    """The lexicon saved at `path` for graph `graph` (its identity), and what the file
    says of itself; None (logged) when there is none that fits."""
    saved = sidecar.load(path, graph, _STRINGS, _ARRAYS, version=VERSION)
    if saved is None:
        return None
    try:
        return Lexicon.from_saved(saved), saved
    except (ValueError, KeyError, IndexError) as exc:
        log.warning("lexicon file %s does not fit together (%s); it is built again", path,
                    exc)
        return None


def carried(store: MilvusStore, graph: KnowledgeGraph, bm25: LocalBM25 | None,
            linker: EntityLinker | None, known: Mapping[str, str]
            ) -> tuple[Lexicon, dict[str, str]]:
    """The lexicon of `graph` from a BM25 index and a linker of any earlier state (None:
    built from scratch), and the texts read for it from Milvus (those `known` are not)."""
    read: dict[str, str] = {}

    def text_of(ids: list[str]) -> dict[str, str]:
        read.update(passage_texts(store, graph, [i for i in ids if i not in known]))
        return {i: known[i] if i in known else read[i] for i in ids if i in known or i in read}

    if bm25 is None:
        texts = text_of(graph.passage_ids)
        bm25 = passage_bm25([(pid, texts[pid]) for pid in graph.passage_ids if pid in texts])
    else:
        bm25 = carried_bm25(bm25, graph.passage_ids, set(), text_of)
    names = graph.entity_names
    linker = (linker.extended(names) if linker is not None and linker.extends_to(names)
              else EntityLinker(names))
    return Lexicon(bm25, linker), read


def passage_texts(store: MilvusStore, graph: KnowledgeGraph, ids: list[str]) -> dict[str, str]:
    """Texts of the graph's passages `ids` from Milvus: by id when they are few, else in
    one scan of the collection."""
    if not ids:
        return {}
    if len(ids) * 4 <= len(graph.passage_ids):
        rows = store.get(store.passages, ids, ["id", "text"])
        found = {row["id"]: row["text"] for row in rows}
    else:
        wanted = set(ids)
        found = {row["id"]: row["text"] for row in store.scan(store.passages, ["id", "text"])
                 if row["id"] in wanted}
    found.update((row["id"], row["text"])  # rows a session read did not see yet
                 for row in store.missed(store.passages, ids, found, ["id", "text"]))
    return found
