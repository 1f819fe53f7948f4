"""Lexical (BM25) passage scoring with one local Okapi BM25 index, on every search backend.

Milvus has full-text search too (Milvus Lite, Milvus >= 2.5), but its analyzer and statistics
differ from ours, so its BM25 put other passages first: on MuSiQue the default method's top 5
differed on 12 of 50 questions between the two. One definition keeps every backend's results
equal to what the benchmark measures.
"""

from __future__ import annotations

import logging
import re
from collections import Counter

import numpy as np
from scipy import sparse

from hopgraph.identity import normalize
from hopgraph.records import Hit
from hopgraph.retrieve.link import STOPWORDS

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"\w+", re.UNICODE)
_K1 = 1.2
_B = 0.75


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens without stopwords."""
    return [t for t in _TOKEN.findall(normalize(text)) if t not in STOPWORDS]


class LocalBM25:
    """Okapi BM25 over passages held in memory, for backends without full-text search."""

    def __init__(self, ids: list[str], texts: list[str]) -> None:
        self.ids = ids
        vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        lengths = np.zeros(len(texts), dtype=np.float32)
        for row, text in enumerate(texts):
            counts = Counter(tokens(text))
            lengths[row] = sum(counts.values())
            for term, tf in counts.items():
                rows.append(row)
                cols.append(vocab.setdefault(term, len(vocab)))
                vals.append(tf)
        self.vocab = vocab
        tf = sparse.csr_matrix((np.array(vals, dtype=np.float32), (rows, cols)),
                               shape=(len(texts), len(vocab)))
        df = np.bincount(np.array(cols, dtype=np.int64), minlength=len(vocab))
        n = max(len(texts), 1)
        self.idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        mean_length = float(lengths.mean()) if len(texts) else 1.0
        norm = _K1 * (1 - _B + _B * lengths / max(mean_length, 1e-9))
        tf = tf.tocoo()
        weighted = tf.data * (_K1 + 1) / (tf.data + norm[tf.row])
        # Stored column-major so a query reads only the columns of its terms.
        self.weights = sparse.csc_matrix((weighted, (tf.row, tf.col)), shape=tf.shape)

    def search(self, query: str, limit: int) -> list[Hit]:
        """Top-`limit` passages by BM25 score for `query`."""
        terms = [self.vocab[t] for t in set(tokens(query)) if t in self.vocab]
        if not terms or limit <= 0:
            return []
        scores = np.asarray(self.weights[:, terms] @ self.idf[terms]).ravel()
        top = np.argsort(-scores, kind="stable")[:limit]
        return [Hit(self.ids[i], float(scores[i]), {}) for i in top if scores[i] > 0]


def passage_bm25(pairs: list[tuple[str, str]]) -> LocalBM25:
    """The BM25 index of (passage id, text) pairs, in id order whatever order they came in.

    Every search backend builds its index this way, so equal scores break the same way and
    each backend returns the same passages.
    """
    pairs = sorted(pairs)
    index = LocalBM25([pid for pid, _ in pairs], [text for _, text in pairs])
    log.info("built local BM25 over %d passages", len(pairs))
    return index
