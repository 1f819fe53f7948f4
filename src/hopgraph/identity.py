"""Content normalization and the content-derived ids every stored row uses."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=1 << 16)  # entity names recur across triplets: each id normalizes them
def normalize(text: str) -> str:
    """Unicode NFKC, case-folded, whitespace collapsed; non-ASCII is kept as is."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _digest(kind: str, key: str) -> str:
    # 16 bytes of BLAKE2b: collisions are out of reach for any realistic graph.
    return kind + hashlib.blake2b(key.encode("utf-8"), digest_size=16).hexdigest()


def entity_id(name: str) -> str:
    """Id of the entity whose normalized name is `name`'s."""
    return _digest("e", normalize(name))


def relation_id(subject: str, predicate: str, obj: str) -> str:
    """Id of the relation (subject, predicate, object), up to normalization."""
    return _digest("r", "\x1f".join(normalize(p) for p in (subject, predicate, obj)))


def content_key(text: str) -> str:
    """Key of a passage's content alone (its normalized text), whatever document holds it:
    what benchmarks match gold passages by, and a document-less passage's own document id."""
    return _digest("p", normalize(text))


def passage_id(text: str, doc_id: str) -> str:
    """Id of a passage: its normalized text within its document. The same text in two
    documents is two passages (each document owns its passages: deleting one document never
    takes another's text away)."""
    return _digest("p", f"{doc_id}\x1f{normalize(text)}")


def sentence_id(passage_id: str, sentence: str) -> str:
    """Id of a passage's sentence row (`hopgraph.sentences`): the passage and the sentence's
    exact text, so a passage whose text changes only in case or spacing (same passage id)
    gets rows of its new sentences, never keeps its old ones' vectors."""
    return _digest("s", f"{passage_id}\x1f{sentence}")


def relation_text(subject: str, predicate: str, obj: str) -> str:
    """The sentence a relation is embedded and shown as: its three parts joined by spaces."""
    return " ".join(_SPACE.sub(" ", part).strip() for part in (subject, predicate, obj))
