"""Term counts of passages for the local BM25 index (`lexical`): the tokenizer and the
immutable segments an index is made of."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from hopgraph.identity import normalize
from hopgraph.lexicon.link import STOPWORDS

_TOKEN = re.compile(r"\w+", re.UNICODE)
_MARKS = re.compile("[\u0300-\u036f]")  # combining accents, once a letter is decomposed


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens without their accents, and without stopwords.

    A question typed without accents ("Akinoshu Kenji", "Tekeze River") must match the
    passage that writes them ("Akinoshū Kenji", "Tekezé"): BM25 is the one search that
    matches a rare name whole, and with the accents kept the two were different terms.
    """
    text = normalize(text)
    if not text.isascii():
        text = unicodedata.normalize("NFC", _MARKS.sub("", unicodedata.normalize("NFD", text)))
    return [t for t in _TOKEN.findall(text) if t not in STOPWORDS]


@dataclass(frozen=True)
class Segment:
    """Term counts of some passages (never changed once built): rows are passages, columns
    the index's term numbers known when it was built."""

    ids: list[str]
    counts: sparse.csc_matrix  # float32 term counts; read by column (a query's terms)
    lengths: np.ndarray  # tokens per passage (float32)

    @cached_property
    def rows(self) -> sparse.csr_matrix:
        """The counts by row (which terms a removed passage had), made when first needed:
        an index read from disk may never remove a passage."""
        return self.counts.tocsr()

    @property
    def df(self) -> np.ndarray:
        """How many of the segment's passages have each term (int64)."""
        return np.diff(self.counts.indptr).astype(np.int64)

    @classmethod
    def of(cls, ids: list[str], texts: Iterable[str], vocab: dict[str, int]) -> Segment:
        """Count the texts' terms; new terms get the next numbers in `vocab` (in the order
        they first occur). One flat pass, the counting in SciPy: per term occurrence a dict
        look-up, not a Counter and three list appends (faster: benchmarks/RESULTS.md,
        "Figures moved from code comments")."""
        lengths, terms = [0], []
        for text in texts:
            found = tokens(text)
            terms.extend(found)
            lengths.append(len(found))
        cols = np.fromiter((vocab.setdefault(t, len(vocab)) for t in terms), dtype=np.int64,
                           count=len(terms))
        indptr = np.cumsum(lengths, dtype=np.int64)
        matrix = sparse.csr_matrix((np.ones(len(cols), dtype=np.float32), cols, indptr),
                                   shape=(len(ids), len(vocab)))
        matrix.sum_duplicates()  # a term's occurrences in one passage: its count
        return cls(ids, matrix.tocsc(), np.diff(indptr).astype(np.float32))

    def terms_of(self, row: int) -> np.ndarray:
        """The term numbers of one passage."""
        return self.rows.indices[self.rows.indptr[row]:self.rows.indptr[row + 1]]

    @staticmethod
    def merged(parts: list[tuple[Segment, np.ndarray]], width: int) -> Segment:
        """One segment of the rows kept (`(segment, mask of rows kept)`) of several."""
        ids: list[str] = []
        matrices, lengths = [], []
        for segment, keep in parts:
            ids.extend(i for i, kept in zip(segment.ids, keep.tolist(), strict=True) if kept)
            rows = segment.rows[np.flatnonzero(keep)]
            # scipy-stubs refuse resize (a shape changed in place); `rows` is a fresh copy
            rows.resize((rows.shape[0], width))  # type: ignore[arg-type]
            matrices.append(rows)
            lengths.append(segment.lengths[keep])
        # scipy-stubs type an empty matrix of a given shape as float64 only, not float32
        matrix = sparse.vstack(matrices, format="csr") if matrices else sparse.csr_matrix(
            (0, width), dtype=np.float32)  # type: ignore[arg-type]
        return Segment(ids, matrix.tocsc(),
                        np.concatenate(lengths) if lengths else np.zeros(0, np.float32))
