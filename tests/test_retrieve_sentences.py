"""A passage scored by its best sentence too (the default method, `retrieve.sentences`): each
sentence stored at ingest with its own vector, read by id at query time and embedded then
when missing, with the same ranking either way; the rows go with their passages; a graph an
earlier version stored gets them when its files are ingested again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import CountingEmbedder

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder
from hopgraph.retrieve import sentences as scoring
from hopgraph.retrieve.search import MemorySearcher, MilvusSearcher
from hopgraph.retrieve.sentences import SentenceCache, with_sentences
from hopgraph.sentences import MAX_SENTENCES, sentence_ids, sentences_of
from hopgraph.store import MilvusStore

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

PROFILES = """# Staff profiles

## Tom Okafor

Tom Okafor is the plant manager at the Coalville site. He lives in Hinckley and
works on the early shift. He joined the company in 2019 from a dairy in Leicester.

## Helen Ashby

Helen Ashby is the managing director. She chairs the board and signs every
supply agreement above fifty thousand pounds.
"""

AUDIT = """# BRCGS audit 2025

The opening meeting was attended by Helen Ashby and Tom Okafor. The auditor
asked for the speck counts of the last three months and for the cleaning records
of line 4. Keller Polymers supplies the recycled flake for line 4.
"""

QUESTION = "On which shift does the plant manager who attended the BRCGS audit work?"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "profiles.md").write_text(PROFILES, encoding="utf-8")
    (folder / "audit.md").write_text(AUDIT, encoding="utf-8")
    return folder


def _stored(store: MilvusStore) -> dict[str, list[str]]:
    """Each stored passage's sentence ids, by passage id."""
    return {row["id"]: sentence_ids(row["id"], len(sentences_of(row["text"])))
            for row in store.scan(store.passages, ["id", "text"])}


def _ranking(rag: GraphRAG) -> list[tuple[str, float]]:
    return [(p.id, round(p.score, 5)) for p in rag.retrieve(QUESTION, top_k=8).passages]


def test_a_passage_s_sentences_leave_its_context_line_out() -> None:
    text = "Staff profiles > Tom Okafor\nTom Okafor is the plant manager. He lives in Hinckley.\n" \
           "Regards,\nSee the register for line 4."
    assert sentences_of(text) == ["Tom Okafor is the plant manager.", "He lives in Hinckley.",
                                  "See the register for line 4."]
    assert sentences_of("One line and no heading above it.") == [
        "One line and no heading above it."]
    long = "Title\n" + " ".join(f"Sentence number {n} is here." for n in range(100))
    assert len(sentences_of(long)) == MAX_SENTENCES
    assert sentence_ids("p1", 2) == ["p1#0", "p1#1"]


def test_ingest_stores_each_sentence_with_its_own_vector(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable,
        local_embedder: LocalEmbedder) -> None:
    rag = open_graph("stored")
    summary = rag.add_files([_folder(tmp_path)])
    store = store_of(rag)
    rows = {row["id"]: row["text"] for row in store.scan(store.passages, ["id", "text"])}
    count = 0
    for pid, text in rows.items():
        found = sentences_of(text)
        ids = sentence_ids(pid, len(found))
        vectors = store.vectors(store.sentences, ids)
        assert sorted(vectors) == sorted(ids)
        np.testing.assert_allclose(np.vstack([vectors[sid] for sid in ids]),
                                   local_embedder.embed(found), atol=1e-5)
        count += len(found)
    assert count >= 8 and summary.texts_embedded >= count + len(rows)
    again = rag.add_files([_folder(tmp_path)])
    assert again.texts_embedded == 0  # nothing new: not even a sentence


def test_a_query_reads_stored_sentences_and_embeds_missing_ones_alike(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable,
        embedder: CountingEmbedder) -> None:
    rag = open_graph("read")
    rag.add_files([_folder(tmp_path)])
    rag.close()
    with open_graph("read") as reopened:  # a new context: nothing kept yet
        before = embedder.texts
        stored = _ranking(reopened)
        read_only = embedder.texts - before
    store = store_of(rag)
    rows = _stored(store)
    store.delete(store.sentences, [sid for ids in rows.values() for sid in ids])
    with open_graph("read") as reopened:
        before = embedder.texts
        embedded = _ranking(reopened)
        embedded_now = embedder.texts - before
        kept = embedder.texts
        assert _ranking(reopened) == embedded and embedder.texts - kept <= read_only
    assert [pid for pid, _ in embedded] == [pid for pid, _ in stored]
    assert [score for _, score in embedded] == pytest.approx([s for _, s in stored], abs=1e-4)
    assert embedded_now > read_only  # the candidates' sentences, embedded for the query


def test_both_search_backends_rank_alike(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], parts_of: Callable) -> None:
    rag = open_graph("backends")
    rag.add_files([_folder(tmp_path)])
    mirror, milvus = parts_of(rag).retriever, parts_of(rag, memory_limit=0).retriever
    assert isinstance(mirror.search, MemorySearcher)
    assert isinstance(milvus.search, MilvusSearcher)
    a, b = mirror.retrieve(QUESTION, top_k=8), milvus.retrieve(QUESTION, top_k=8)
    assert [p.id for p in a.passages] == [p.id for p in b.passages]
    assert [p.score for p in a.passages] == pytest.approx([p.score for p in b.passages],
                                                          abs=1e-4)
    assert "sentences" in a.timings_ms and "sentences" in b.timings_ms


def test_the_best_sentence_moves_a_passage_up_its_search() -> None:
    dim = 4

    class Unit:
        name, dim = "unit", 4

        def embed(self, texts: list[str]) -> np.ndarray:
            raise AssertionError("every sentence here is stored")

    class Stored:
        """What the default method's searches give `with_sentences`: texts and stored
        sentence vectors (no Milvus needed to check the arithmetic)."""

        def texts(self, ids: list[str]) -> dict[str, str]:
            return {pid: f"Heading\nFirst sentence of {pid}. Second sentence of {pid}."
                    for pid in ids}

        def sentence_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
            axis = {"a#0": 1, "a#1": 0, "b#0": 2, "b#1": 2}
            return {sid: np.eye(dim, dtype=np.float32)[axis[sid]] for sid in ids}

    query = np.eye(dim, dtype=np.float32)[:1]
    dense = [{"a": 0.5, "b": 0.6}]
    scored = [{"a": 0.55, "b": 0.62}]  # BM25 added
    out = with_sentences(Stored(), Unit(), SentenceCache(), query, dense,  # type: ignore[arg-type]
                         scored)
    assert out[0]["a"] == pytest.approx(0.55 + scoring.SENTENCE_WEIGHT * (1.0 - 0.5))
    assert out[0]["b"] == pytest.approx(0.62 + scoring.SENTENCE_WEIGHT * (0.0 - 0.6))
    assert out[0]["a"] > out[0]["b"]


def test_only_each_search_s_first_passages_are_rescored(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(scoring, "SENTENCE_TOP", 1)

    class Stored:
        def texts(self, ids: list[str]) -> dict[str, str]:
            return {pid: "One sentence stands here." for pid in ids}

        def sentence_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
            return {sid: np.ones(2, dtype=np.float32) / np.sqrt(2) for sid in ids}

    query = np.array([[1.0, 0.0]], dtype=np.float32)
    out = with_sentences(Stored(), None, SentenceCache(), query,  # type: ignore[arg-type]
                         [{"a": 0.2, "b": 0.1}], [{"a": 0.2, "b": 0.1}])
    assert out[0]["b"] == 0.1 and out[0]["a"] != 0.2


def test_sentence_rows_go_with_their_passages(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable) -> None:
    rag = open_graph("pruned")
    folder = _folder(tmp_path)
    rag.add_files([folder])
    store = store_of(rag)
    before = _stored(store)
    rag.delete(["audit.md"])
    after = _stored(store)
    gone = [sid for pid in set(before) - set(after) for sid in before[pid]]
    assert gone and store.vectors(store.sentences, gone) == {}
    kept = [sid for ids in after.values() for sid in ids]
    assert sorted(store.vectors(store.sentences, kept)) == sorted(kept)
    (folder / "profiles.md").write_text(PROFILES.split("## Helen Ashby")[0], encoding="utf-8")
    rag.add_files([folder / "profiles.md"])  # replaced: Helen's section is no more
    now = _stored(store)
    dropped = [sid for pid in set(after) - set(now) for sid in after[pid]]
    assert dropped and store.vectors(store.sentences, dropped) == {}


def test_a_graph_stored_without_sentences_gets_them_when_ingested_again(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable) -> None:
    rag = open_graph("older")
    folder = _folder(tmp_path)
    rag.add_files([folder])
    ranking = _ranking(rag)
    rag.close()
    store = store_of(rag)
    store._client.drop_collection(store.sentences)  # as an earlier version stored it
    with open_graph("older") as reopened:  # opening adds the collection, empty
        assert store.count(store.sentences) == 0
        assert _ranking(reopened) == ranking
        summary = reopened.add_files([folder])
        rows = _stored(store)
        assert summary.passages_added == 0
        assert summary.texts_embedded == sum(len(ids) for ids in rows.values())
        everything = [sid for ids in rows.values() for sid in ids]
        assert sorted(store.vectors(store.sentences, everything)) == sorted(everything)


def test_the_cache_keeps_the_latest_within_its_bytes() -> None:
    cache = SentenceCache(limit=2 * 4 * 3)  # two 1×3 float32 matrices
    one = np.ones((1, 3), dtype=np.float32)
    cache.put(("a", "text"), one)
    cache.put(("b", "text"), one)
    assert cache.get(("a", "text")) is not None  # now the latest
    cache.put(("c", "text"), one)
    assert cache.get(("b", "text")) is None and len(cache) == 2
    assert cache.get(("a", "other text")) is None  # the text is part of the key
