"""Fuzzy name lookup that returns what a scan of every name would, without scanning them all.

rapidfuzz's `ratio` is 100 · (1 − d / (|a| + |b|)), with d the insert/delete distance, so a
cutoff c bounds d ≤ (1 − c/100)(|a| + |b|). That gives two filters that never drop a match:
- length: | |a| − |b| | ≤ d;
- trigrams: one insert or delete changes at most 3 of a string's trigrams, so b shares at
  least distinct_trigrams(a) − 3·d of a's distinct trigrams.
Only names passing both are scored; for very short names the trigram bound is ≤ 0 and the
length window alone applies. Measured: benchmarks/RESULTS.md (Scale; linking at 1M entities).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from rapidfuzz import fuzz, process

_Q = 3


def trigrams(text: str) -> set[str]:
    """The distinct character trigrams of `text` (none when it is shorter than three)."""
    return {text[i:i + _Q] for i in range(len(text) - _Q + 1)}


class FuzzyIndex:
    """Best `fuzz.ratio` match among `keys` for a query, through a trigram index."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.lengths = np.array([len(k) for k in keys], dtype=np.int32)
        postings: dict[str, list[int]] = defaultdict(list)
        for i, key in enumerate(keys):
            for gram in trigrams(key):
                postings[gram].append(i)
        self.postings = {g: np.array(ids, dtype=np.int32) for g, ids in postings.items()}

    def arrays(self) -> tuple[list[str], dict[str, np.ndarray]]:
        """The trigrams and their postings as CSR rows (`gram_indptr`, `gram_keys`), to save
        (`from_arrays` reads them back)."""
        grams = list(self.postings)
        sizes = [len(self.postings[g]) for g in grams]
        keys = (np.concatenate([self.postings[g] for g in grams]) if grams
                else np.zeros(0, dtype=np.int32))
        return grams, {"gram_indptr": np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]),
                       "gram_keys": keys.astype(np.int32)}

    @classmethod
    def from_arrays(cls, keys: list[str], grams: list[str], arrays: dict[str, np.ndarray]
                    ) -> FuzzyIndex:
        """The index `arrays` gave over `keys` (ValueError if they do not fit): postings are
        views into one array, nothing is built per trigram."""
        indptr, postings = np.asarray(arrays["gram_indptr"]), np.asarray(arrays["gram_keys"])
        if (len(indptr) != len(grams) + 1 or indptr[0] != 0 or indptr[-1] != len(postings)
                or np.any(np.diff(indptr) < 0) or np.any(postings < 0)
                or np.any(postings >= len(keys))):
            raise ValueError("trigram arrays do not fit the keys")
        index = cls.__new__(cls)
        index.keys = keys
        index.lengths = np.array([len(k) for k in keys], dtype=np.int32)
        bounds = indptr.tolist()
        index.postings = {g: postings[bounds[n]:bounds[n + 1]] for n, g in enumerate(grams)}
        return index

    def extended(self, keys: list[str]) -> FuzzyIndex:
        """The index of this one's keys followed by `keys`, sharing what did not change
        (this index is not changed)."""
        new = FuzzyIndex.__new__(FuzzyIndex)
        new.keys = self.keys + keys
        new.lengths = np.concatenate([self.lengths,
                                      np.array([len(k) for k in keys], dtype=np.int32)])
        more: dict[str, list[int]] = defaultdict(list)
        for i, key in enumerate(keys, start=len(self.keys)):
            for gram in trigrams(key):
                more[gram].append(i)
        new.postings = dict(self.postings)
        for gram, ids in more.items():
            known = new.postings.get(gram)
            added = np.array(ids, dtype=np.int32)
            new.postings[gram] = added if known is None else np.concatenate([known, added])
        return new

    def candidates(self, query: str, cutoff: float) -> np.ndarray:
        """Indices of the keys that can reach `cutoff` against `query`, in key order."""
        slack = 1.0 - cutoff / 100.0
        # d <= slack (|a| + |b|) and |b| <= |a| + d give |b| <= |a| (1 + slack) / (1 - slack).
        longest = math.floor(len(query) * (1 + slack) / (1 - slack) + 1e-9)
        max_d = math.floor(slack * (len(query) + longest) + 1e-9)
        in_window = np.abs(self.lengths - len(query)) <= max_d
        grams = trigrams(query)
        need = len(grams) - _Q * max_d
        if need <= 0:
            return np.flatnonzero(in_window)
        lists = [self.postings[g] for g in grams if g in self.postings]
        if not lists:
            return np.zeros(0, dtype=np.int64)
        shared = np.bincount(np.concatenate(lists), minlength=len(self.keys))
        return np.flatnonzero(in_window & (shared >= need))

    def best(self, query: str, cutoff: float) -> tuple[str, float] | None:
        """The best key with `fuzz.ratio` ≥ `cutoff` (the first on ties, as a full scan)."""
        chosen = self.candidates(query, cutoff)
        if chosen.size == 0:
            return None
        found = process.extractOne(query, [self.keys[i] for i in chosen.tolist()],
                                   scorer=fuzz.ratio, score_cutoff=cutoff)
        return None if found is None else (found[0], float(found[1]))
