"""Lexical (BM25) passage scoring: Milvus full-text search, or a local index where it has none."""

from __future__ import annotations

import logging
import re
from collections import Counter

import numpy as np
from scipy import sparse

from hopgraph.identity import normalize
from hopgraph.records import Hit
from hopgraph.retrieve.link import STOPWORDS
from hopgraph.store import MilvusStore

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
        top = np.argsort(-scores)[:limit]
        return [Hit(self.ids[i], float(scores[i]), {}) for i in top if scores[i] > 0]


class LexicalSearch:
    """BM25 over the passage collection, through Milvus when the backend supports it."""

    def __init__(self, store: MilvusStore) -> None:
        self.store = store
        self._local: LocalBM25 | None = None

    @property
    def backend(self) -> str:
        """"milvus" (server-side BM25) or "local" (in-process fallback)."""
        return "milvus" if self.store.meta.get("lexical") else "local"

    def search(self, queries: list[str], limit: int) -> list[list[Hit]]:
        """Top-`limit` passages per query by BM25."""
        if self.backend == "milvus":
            return self.store.search_text(queries, limit)
        if self._local is None:
            ids, texts = [], []
            for row in self.store.scan(self.store.passages, ["id", "text"]):
                ids.append(row["id"])
                texts.append(row["text"])
            self._local = LocalBM25(ids, texts)
            log.info("built local BM25 over %d passages", len(ids))
        return [self._local.search(q, limit) for q in queries]

