"""A passage of several lines scored by its best sentence too (the default method,
`retrieve.sentences`): each sentence stored at ingest with its own vector, read by id at query
time and embedded then when missing, with the same ranking either way; a passage of one
paragraph keeps its score; the rows go with their passages and follow their text; a graph an
earlier version stored gets them when its files are ingested again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import CountingEmbedder

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder
from hopgraph.identity import sentence_id
from hopgraph.ingest.writer import Ingestor
from hopgraph.retrieve import sentences as scoring
from hopgraph.retrieve.search import MemorySearcher, MilvusSearcher
from hopgraph.retrieve.sentences import SentenceCache, with_sentences
from hopgraph.sentences import MAX_SENTENCES, sentence_rows, sentences_of
from hopgraph.store import MilvusStore
from hopgraph.store.check import check, check_and_repair

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

PROFILES = """# Staff profiles

## Tom Okafor

Tom Okafor is the plant manager at the Coalville site.

He lives in Hinckley and works on the early shift.

He joined the company in 2019 from a dairy in Leicester.

## Helen Ashby

Helen Ashby is the managing director.

She chairs the board and signs every supply agreement above fifty thousand pounds.
"""

AUDIT = """# BRCGS audit 2025

The opening meeting was attended by Helen Ashby and Tom Okafor.

The auditor asked for the speck counts of the last three months and for the
cleaning records of line 4.

Keller Polymers supplies the recycled flake for line 4.
"""

NOTE = """# Site history

The Coalville site opened in 1998 as a dairy. It has made trays for salads and
ready meals since 2011, and its line 4 runs on recycled flake.
"""

QUESTION = "On which shift does the plant manager who attended the BRCGS audit work?"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "profiles.md").write_text(PROFILES, encoding="utf-8")
    (folder / "audit.md").write_text(AUDIT, encoding="utf-8")
    (folder / "history.md").write_text(NOTE, encoding="utf-8")  # one paragraph
    return folder


class Stop(Exception):
    """Stands for the process dying at that point."""


def _stored(store: MilvusStore) -> dict[str, dict[str, str]]:
    """Each stored passage's sentence rows (id → sentence), by passage id."""
    return {row["id"]: sentence_rows(row["id"], row["text"])
            for row in store.scan(store.passages, ["id", "text"])}


def _exactly_its_passages_rows(store: MilvusStore) -> bool:
    """The sentence collection holds the rows of the stored passages' texts, and no other."""
    wanted = {sid for rows in _stored(store).values() for sid in rows}
    return {row["id"] for row in store.scan(store.sentences, ["id"])} == wanted


def _ranking(rag: GraphRAG) -> list[tuple[str, float]]:
    return [(p.id, round(p.score, 5)) for p in rag.retrieve(QUESTION, top_k=8).passages]


def test_a_passage_of_several_lines_has_sentences_and_one_paragraph_none() -> None:
    text = "Staff profiles > Tom Okafor\nTom Okafor is the plant manager. He lives in Hinckley.\n" \
           "Regards,\nSee the register for line 4.\nSee the register for line 4."
    assert sentences_of(text) == ["Tom Okafor is the plant manager.", "He lives in Hinckley.",
                                  "See the register for line 4."]  # each once
    # A paragraph under its title (a Wikipedia passage, a chunk of prose) is about one thing.
    assert sentences_of("Euler\nEuler was born in Basel. He studied there.") == []
    assert sentences_of("Euler\nEuler was born in Basel.\n\n  \n") == []
    assert sentences_of("One line and no heading above it. And a second sentence.") == []
    long = "Title\n\n" + "\n".join(f"Sentence number {n} is here." for n in range(100))
    assert len(sentences_of(long)) == MAX_SENTENCES
    rows = sentence_rows("p1", text)
    assert list(rows.values()) == sentences_of(text)
    assert list(rows) == [sentence_id("p1", s) for s in sentences_of(text)]
    assert sentence_id("p1", "He lives in Hinckley.") != sentence_id("p1", "he lives in Hinckley.")
    assert sentence_id("p1", "He lives in Hinckley.") != sentence_id("p2", "He lives in Hinckley.")


def test_ingest_stores_each_sentence_with_its_own_vector(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable,
        local_embedder: LocalEmbedder) -> None:
    rag = open_graph("stored")
    summary = rag.add_files([_folder(tmp_path)])
    store = store_of(rag)
    rows = {row["id"]: row["text"] for row in store.scan(store.passages, ["id", "text"])}
    count = 0
    for pid, text in rows.items():
        found = sentence_rows(pid, text)
        vectors = store.vectors(store.sentences, list(found))
        assert sorted(vectors) == sorted(found)
        if found:
            np.testing.assert_allclose(np.vstack([vectors[sid] for sid in found]),
                                       local_embedder.embed(list(found.values())), atol=1e-5)
        count += len(found)
    assert count >= 5 and summary.texts_embedded >= count + len(rows)
    assert any(not sentence_rows(pid, text) for pid, text in rows.items())  # the audit's
    assert _exactly_its_passages_rows(store)
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
    assert store.count(store.sentences) == 0
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
            return {pid: TEXTS[pid] for pid in ids}

        def sentence_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
            return {sid: np.eye(dim, dtype=np.float32)[AXIS[sid]] for sid in ids}

    TEXTS = {pid: f"Heading\nFirst sentence of {pid}.\nSecond sentence of {pid}."
             for pid in "ab"}
    TEXTS["c"] = "Heading\nFirst sentence of c. Second sentence of c."  # one paragraph
    AXIS = dict(zip([*sentence_rows("a", TEXTS["a"]), *sentence_rows("b", TEXTS["b"])],
                    [1, 0, 2, 2], strict=True))
    query = np.eye(dim, dtype=np.float32)[:1]
    dense = [{"a": 0.5, "b": 0.6, "c": 0.3}]
    scored = [{"a": 0.55, "b": 0.62, "c": 0.31}]  # BM25 added
    out = with_sentences(Stored(), Unit(), SentenceCache(), query, dense,  # type: ignore[arg-type]
                         scored)
    assert out[0]["a"] == pytest.approx(0.55 + scoring.SENTENCE_WEIGHT * (1.0 - 0.5))
    assert out[0]["b"] == pytest.approx(0.62 + scoring.SENTENCE_WEIGHT * (0.0 - 0.6))
    assert out[0]["a"] > out[0]["b"]
    assert out[0]["c"] == 0.31  # no sentences: its score stands


def test_only_each_search_s_first_passages_are_rescored(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(scoring, "SENTENCE_TOP", 1)

    class Stored:
        def texts(self, ids: list[str]) -> dict[str, str]:
            return {pid: "Title\nOne sentence stands here.\nAnother one stands here."
                    for pid in ids}

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
    assert _exactly_its_passages_rows(store)


def test_a_passage_whose_text_changes_in_case_gets_the_rows_of_its_new_sentences(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable,
        local_embedder: LocalEmbedder) -> None:
    """The passage keeps its id (the id ignores case) and its vector; its sentences are
    other texts, so their rows are new ones and the old ones go."""
    rag = open_graph("recased")
    folder = _folder(tmp_path)
    rag.add_files([folder])
    store = store_of(rag)
    before = _stored(store)
    (folder / "profiles.md").write_text(PROFILES.replace("early shift", "Early Shift"),
                                        encoding="utf-8")
    summary = rag.add_files([folder / "profiles.md"])
    after = _stored(store)
    assert set(after) == set(before) and summary.passages_updated == 1
    [pid] = [pid for pid in after if after[pid] != before[pid]]
    fresh = {sid: s for sid, s in after[pid].items() if sid not in before[pid]}
    assert list(fresh.values()) == ["He lives in Hinckley and works on the Early Shift."]
    assert summary.texts_embedded == 1 + summary.entities_added + summary.relations_added
    stale = [sid for sid in before[pid] if sid not in after[pid]]
    assert len(stale) == 1 and store.vectors(store.sentences, stale) == {}
    [(sid, sentence)] = fresh.items()
    np.testing.assert_allclose(store.vectors(store.sentences, [sid])[sid],
                               local_embedder.embed([sentence])[0], atol=1e-5)
    assert _exactly_its_passages_rows(store)


# Where a write of a stored passage whose text changed can stop: before anything, after
# its stale sentence rows went (the passage's upsert), after its text was rewritten (the
# sentence rows of the new text).
STOPS = {"before anything": (Ingestor, "_update_passages", 1),
         "after the stale rows": (MilvusStore, "upsert", 1),
         "after the new text": (Ingestor, "_store_sentences", 1)}


@pytest.mark.parametrize("then", ["rerun", "revert", "delete"])
@pytest.mark.parametrize("stop", list(STOPS))
def test_a_write_stopped_around_a_changed_passage_leaves_no_stray_row(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable,
        monkeypatch: pytest.MonkeyPatch, stop: str, then: str) -> None:
    """Stopped anywhere around a stored passage whose text changed, then run again, given
    back its old text, or deleted: the sentence collection holds the rows of the stored
    texts and no other (a row of a text never stored would be found by nothing)."""
    rag = open_graph("stopped")
    folder = _folder(tmp_path)
    rag.add_files([folder])
    profiles = folder / "profiles.md"
    profiles.write_text(PROFILES.replace("early shift", "Early Shift"), encoding="utf-8")
    owner, name, nth = STOPS[stop]
    original = getattr(owner, name)
    calls: list[str] = []

    def stopping(self: object, *args: object, **kwargs: object) -> object:
        if owner is MilvusStore and args[0] != self.passages:  # type: ignore[attr-defined]
            return original(self, *args, **kwargs)
        calls.append(name)
        if len(calls) == nth:
            raise Stop(stop)
        return original(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(owner, name, stopping)
        with pytest.raises(Stop):
            rag.add_files([profiles])
    rag.close()
    with open_graph("stopped") as reopened:  # the next process
        if then == "revert":
            profiles.write_text(PROFILES, encoding="utf-8")
        if then == "delete":
            reopened.delete(["profiles.md"])
        else:
            reopened.add_files([profiles])
        store = store_of(reopened)
        assert _exactly_its_passages_rows(store)
        assert check(store).problems == []


def _half_written(rag: GraphRAG, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                  ) -> GraphRAG:
    """`rag` holding audit.md, and profiles.md written up to its relations, where the
    write stopped: an unfinished document for `check --repair` to roll back."""
    folder = _folder(tmp_path)
    rag.add_files([folder / "audit.md"])
    with monkeypatch.context() as patch:
        patch.setattr(Ingestor, "_store_relations", lambda *a, **k: (_ for _ in ()).throw(
            Stop("mid-write")))
        with pytest.raises(Stop):
            rag.add_files([folder / "profiles.md"])
    return rag


def test_check_repair_deletes_the_sentence_rows_of_what_it_rolls_back(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = store_of(_half_written(open_graph("rolled"), tmp_path, monkeypatch))
    rolled = {sid for row in store.scan(store.passages, ["id", "text", "doc_id"])
              if row["doc_id"] == "profiles.md" for sid in sentence_rows(row["id"], row["text"])}
    assert rolled and rolled <= {row["id"] for row in store.scan(store.sentences, ["id"])}
    report = check_and_repair(store)
    assert report.problems == [] and report.repaired > 0
    assert _exactly_its_passages_rows(store) and store.count(store.sentences) > 0
    assert store.vectors(store.sentences, sorted(rolled)) == {}


def test_check_repair_rolls_back_a_graph_that_has_no_sentence_collection(
        tmp_path: Path, open_graph: Callable[..., GraphRAG], store_of: Callable,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`check --repair` opens the collections as they are (no migration): a graph an
    earlier version stored has no sentence rows to delete."""
    store = store_of(_half_written(open_graph("repaired"), tmp_path, monkeypatch))
    store._client.drop_collection(store.sentences)
    report = check_and_repair(store)
    assert report.problems == [] and report.repaired > 0
    assert {row["doc_id"] for row in store.scan(store.passages, ["doc_id"])} == {
        "audit.md"}


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
        now = _ranking(reopened)  # every sentence embedded by the query
        assert [pid for pid, _ in now] == [pid for pid, _ in ranking]
        assert [s for _, s in now] == pytest.approx([s for _, s in ranking], abs=1e-4)
        summary = reopened.add_files([folder])
        rows = _stored(store)
        assert summary.passages_added == 0
        assert summary.texts_embedded == sum(len(ids) for ids in rows.values())
        everything = [sid for ids in rows.values() for sid in ids]
        assert sorted(store.vectors(store.sentences, everything)) == sorted(everything)


def test_the_cache_keeps_the_latest_within_its_bytes() -> None:
    cache = SentenceCache(limit=2 * (4 * 3 + len("a") + len("text")))  # two kept passages
    one = np.ones((1, 3), dtype=np.float32)
    cache.put(("a", "text"), one)
    cache.put(("b", "text"), one)
    assert cache.get(("a", "text")) is not None  # now the latest
    cache.put(("c", "text"), one)
    assert cache.get(("b", "text")) is None and len(cache) == 2
    assert cache.get(("a", "other text")) is None  # the text is part of the key
