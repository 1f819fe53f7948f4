"""Lexical (BM25) passage scoring with one local Okapi BM25 index, on every search backend.

Milvus has full-text search too (Milvus Lite, Milvus >= 2.5), but its analyzer and statistics
differ from ours, so its BM25 put other passages first: on MuSiQue the default method's top 5
differed on 12 of 50 questions between the two. One definition keeps every backend's results
equal to what the benchmark measures.

An index is immutable: a change of the graph gives a new one (`LocalBM25.updated`) that
shares the old one's term counts and adds a segment for the passages added, so following a
10-passage write costs the change, not the graph. Scores depend only on each passage's term
counts and the index's totals (passages, document frequencies, total length), and are
summed over the query's terms in one fixed order (as they first occur in the query), so an
updated index scores every passage exactly as an index built afresh over the same passages;
ties go to the smaller id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import numpy as np
from scipy import sparse

from hopgraph.lexicon.bm25_terms import Segment, tokens
from hopgraph.records import Hit

log = logging.getLogger(__name__)

_K1 = 1.2
_B = 0.75
_MERGE_FRACTION = 8  # all segments folded into one when changes pass 1/8 of the first
_MAX_SEGMENTS = 4


class LocalBM25:
    """Okapi BM25 over passages held in memory, for backends without full-text search."""

    def __init__(self, ids: list[str], texts: list[str]) -> None:
        self.vocab: dict[str, int] = {}
        segment = Segment.of(list(ids), texts, self.vocab)
        df = segment.df
        self._set([segment], [np.ones(len(segment.ids), dtype=bool)], df,
                  {pid: (0, row) for row, pid in enumerate(segment.ids)})

    def _set(self, segments: list[Segment], alive: list[np.ndarray], df: np.ndarray,
             where: dict[str, tuple[int, int]]) -> None:
        """Take these segments (rows `alive`), document frequencies and passage places, and
        compute the statistics a query needs."""
        self._segments, self._alive, self.df, self._where = segments, alive, df, where
        self.size = len(where)
        self.total_length = float(sum(float(segment.lengths[keep].sum(dtype=np.float64))
                                      for segment, keep in zip(segments, alive, strict=True)))
        n = max(self.size, 1)
        self.idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        mean_length = self.total_length / self.size if self.size else 1.0
        self._norms = [(_K1 * (1 - _B + _B * segment.lengths / max(mean_length, 1e-9))
                        ).astype(np.float32) for segment in segments]

    def arrays(self) -> tuple[list[str], list[str], dict[str, np.ndarray]]:
        """The index as one segment of its live passages, to save: their ids, the terms by
        number, and the term counts by column (CSC `indptr`, `indices`, `data`) with each
        passage's length. `from_arrays` reads it back."""
        if len(self._segments) == 1 and self._alive[0].all():
            merged = self._segments[0]
        else:
            merged = Segment.merged(list(zip(self._segments, self._alive, strict=True)),
                                     len(self.vocab))
        terms = [""] * len(self.vocab)
        for term, number in self.vocab.items():
            terms[number] = term
        counts = merged.counts  # built before later terms came: their columns are empty
        indptr = np.concatenate([counts.indptr, np.full(len(terms) - counts.shape[1],
                                                        counts.indptr[-1])])
        return merged.ids, terms, {"indptr": indptr, "indices": counts.indices,
                                   "data": counts.data, "lengths": merged.lengths}

    @classmethod
    def from_arrays(cls, ids: list[str], terms: list[str], arrays: dict[str, np.ndarray]
                    ) -> LocalBM25:
        """The index `arrays` gave (ValueError if the arrays do not fit together). It scores
        every passage exactly as an index built afresh from their texts: same counts,
        lengths and document frequencies, and scores do not depend on term numbers."""
        counts = sparse.csc_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                                   shape=(len(ids), len(terms)))
        counts.check_format(full_check=True)
        lengths = np.asarray(arrays["lengths"], dtype=np.float32)
        index = cls.__new__(cls)
        index.vocab = dict(zip(terms, range(len(terms)), strict=True))
        where = {pid: (0, row) for row, pid in enumerate(ids)}
        if (len(lengths), len(where), len(index.vocab)) != (len(ids), len(ids), len(terms)):
            raise ValueError("BM25 arrays of different lengths, or an id or term twice")
        segment = Segment(list(ids), counts, lengths)
        index._set([segment], [np.ones(len(ids), dtype=bool)], segment.df, where)
        return index

    @property
    def ids(self) -> list[str]:
        """The indexed passages' ids (in no particular order)."""
        return list(self._where)

    def __contains__(self, passage_id: str) -> bool:
        return passage_id in self._where

    def updated(self, removed: Iterable[str], added: list[tuple[str, str]]) -> LocalBM25:
        """A new index: this one without passages `removed` and with `added` (id, text)
        pairs (an id in both is replaced). This index is not changed (queries on it may go
        on meanwhile); the new one shares its segments and adds one for `added`."""
        fresh = dict(added)
        gone = [pid for pid in set(removed) | set(fresh) if pid in self._where]
        if not gone and not fresh:
            return self
        new = LocalBM25.__new__(LocalBM25)
        new.vocab = dict(self.vocab) if fresh else self.vocab
        alive = [keep.copy() for keep in self._alive]
        df = self.df.copy()
        where = dict(self._where)
        for pid in gone:
            s, row = where.pop(pid)
            alive[s][row] = False
            df[self._segments[s].terms_of(row)] -= 1
        segments = list(self._segments)
        if fresh:
            pairs = sorted(fresh.items())
            segment = Segment.of([pid for pid, _ in pairs], [t for _, t in pairs], new.vocab)
            df = np.concatenate([df, np.zeros(len(new.vocab) - len(df), dtype=np.int64)])
            df += segment.df
            where.update((pid, (len(segments), row)) for row, pid in enumerate(segment.ids))
            segments.append(segment)
            alive.append(np.ones(len(segment.ids), dtype=bool))
        first = len(segments[0].ids)
        changed = sum(len(s.ids) for s in segments[1:]) + int((~alive[0]).sum())
        if changed * _MERGE_FRACTION > first:  # all in one again: O(graph), now and then
            new._merged(segments, alive, df, 0)
        elif len(segments) > _MAX_SEGMENTS:  # the added ones in one: O(what was added)
            new._merged(segments, alive, df, 1)
        else:
            new._set(segments, alive, df, where)
        return new

    def _merged(self, segments: list[Segment], alive: list[np.ndarray], df: np.ndarray,
                start: int) -> None:
        """Take the segments with those from `start` on folded into one, less their
        removed rows."""
        merged = Segment.merged(list(zip(segments[start:], alive[start:], strict=True)),
                                 len(self.vocab))
        if start == 0:  # one segment: the terms no passage has any more go
            live = np.flatnonzero(df > 0)
            renumber = np.full(len(df), -1, dtype=np.int64)
            renumber[live] = np.arange(len(live))
            self.vocab = {term: int(renumber[col]) for term, col in self.vocab.items()
                          if renumber[col] >= 0}
            merged = Segment(merged.ids, merged.counts[:, live], merged.lengths)
            df = df[live]
        segments = [*segments[:start], merged]
        alive = [*alive[:start], np.ones(len(merged.ids), dtype=bool)]
        where = {pid: (s, row) for s, segment in enumerate(segments)
                 for row, pid in enumerate(segment.ids) if alive[s][row]}
        self._set(segments, alive, df, where)

    def share(self, name: str) -> float:
        """The largest share of the passages that can hold every word of `name`: its rarest
        word's document frequency over the passage count (0 for a word never indexed)."""
        terms = self._terms(name)  # the indexed words with passages, each once
        if not terms or len(terms) < len(set(tokens(name))):
            return 0.0
        return min(float(self.df[t]) for t in terms) / self.size

    def search(self, query: str, limit: int, allowed: frozenset[str] | None = None
               ) -> list[Hit]:
        """Top-`limit` passages by BM25 score for `query` (ties: the smaller id first);
        with `allowed`, among those passages only (the statistics stay the whole index's)."""
        return self.search_many([query], limit, allowed)[0]

    def search_many(self, queries: list[str], limit: int,
                    allowed: frozenset[str] | None = None) -> list[list[Hit]]:
        """`search` for each query. A query whose terms start with an earlier query's
        terms (a probe: the question, then a bridge's name) goes on from that query's
        sums rather than adding them again: the same additions in the same order, so the
        same scores as searching it alone."""
        done: list[tuple[list[int], list[np.ndarray]]] = []
        found = []
        for query in queries:
            terms = self._terms(query)
            base: tuple[list[int], list[np.ndarray]] = ([], [])
            for earlier in done:
                if len(base[0]) < len(earlier[0]) <= len(terms) and (
                        terms[:len(earlier[0])] == earlier[0]):
                    base = earlier
            sums = self._sums(terms[len(base[0]):], base[1])
            done.append((terms, sums))
            found.append(self._top(sums, limit, allowed) if terms and limit > 0 else [])
        return found

    def _terms(self, query: str) -> list[int]:
        """The query's indexed terms, each once, in the order they first occur: the fixed
        order its scores are summed in, on every index."""
        terms = [self.vocab[t] for t in dict.fromkeys(tokens(query)) if t in self.vocab]
        return [t for t in terms if t < len(self.df) and self.df[t] > 0]

    def _sums(self, terms: list[int], start: list[np.ndarray]) -> list[np.ndarray]:
        """Each segment's scores: `start` (or zeros) plus the terms' parts, in order."""
        sums = []
        for k, (segment, norm) in enumerate(zip(self._segments, self._norms, strict=True)):
            scores = start[k].copy() if start else np.zeros(len(segment.ids), np.float32)
            counts = segment.counts
            for term in terms:
                if term >= counts.shape[1]:
                    continue
                span = slice(counts.indptr[term], counts.indptr[term + 1])
                rows, tf = counts.indices[span], counts.data[span]
                scores[rows] += self.idf[term] * (tf * (_K1 + 1) / (tf + norm[rows]))
            sums.append(scores)
        return sums

    def _top(self, sums: list[np.ndarray], limit: int, allowed: frozenset[str] | None
             ) -> list[Hit]:
        """The best `limit` live passages of each segment's scores."""
        found_at: list[tuple[list[str], np.ndarray]] = []  # (a segment's ids, its hits)
        found_scores: list[np.ndarray] = []
        for segment, keep, scores in zip(self._segments, self._alive, sums, strict=True):
            hit = np.flatnonzero((scores > 0) & keep)
            if allowed is not None:
                hit = hit[[segment.ids[i] in allowed for i in hit.tolist()]] if len(hit) else hit
            found_at.append((segment.ids, hit))
            found_scores.append(scores[hit])
        scores = np.concatenate(found_scores) if found_scores else np.zeros(0, np.float32)
        if not len(scores):
            return []
        if len(scores) > limit:  # every passage scoring at least the limit-th best
            floor = np.partition(scores, len(scores) - limit)[len(scores) - limit]
            chosen = np.flatnonzero(scores >= floor)
        else:
            chosen = np.arange(len(scores))
        # Ids only for the chosen: common words hit every passage, and a Python string per
        # hit was a large cost per query at 100k passages (benchmarks/RESULTS.md, "Figures
        # moved from code comments").
        starts = np.cumsum([0] + [len(hit) for _, hit in found_at])
        segment_of = np.searchsorted(starts, chosen, side="right") - 1
        ids = [found_at[s][0][int(found_at[s][1][i - starts[s]])]
               for s, i in zip(segment_of.tolist(), chosen.tolist(), strict=True)]
        best = sorted(range(len(chosen)), key=lambda k: (-float(scores[chosen[k]]), ids[k]))
        return [Hit(ids[k], float(scores[chosen[k]]), {}) for k in best[:limit]]


def passage_bm25(pairs: list[tuple[str, str]]) -> LocalBM25:
    """The BM25 index of (passage id, text) pairs, in id order whatever order they came in."""
    pairs = sorted(pairs)
    index = LocalBM25([pid for pid, _ in pairs], [text for _, text in pairs])
    log.info("built local BM25 over %d passages", len(pairs))
    return index


def carried_bm25(previous: LocalBM25, passage_ids: list[str], stale: set[str],
                 text_of: Callable[[list[str]], dict[str, str]]) -> LocalBM25:
    """`previous` brought to the passages `passage_ids`: those it lacks and those whose text
    changed (`stale`) are added with their texts (`text_of`: id -> text for the ids given;
    an id it leaves out is not indexed), those no longer listed are removed."""
    current = set(passage_ids)
    removed = [pid for pid in previous.ids if pid not in current or pid in stale]
    wanted = [pid for pid in passage_ids if pid not in previous or pid in stale]
    texts = text_of(wanted) if wanted else {}
    return previous.updated(removed, [(pid, texts[pid]) for pid in wanted if pid in texts])
