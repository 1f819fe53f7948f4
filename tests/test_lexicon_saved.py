"""The lexicon saved beside the snapshot (BM25 index, entity linker, passage texts): a
reopened graph retrieves exactly what one built from scratch retrieves, without building
them again; a damaged, foreign or outdated file is never trusted wrongly."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hopgraph import GraphRAG
from hopgraph.lexicon import fuzzy, keeper, lexical, link
from hopgraph.lexicon import saved as lexicon
from hopgraph.records import PassageRecord, Triplet
from hopgraph.store import MilvusStore, sidecar
from hopgraph.store.changes import ChangeLog

PEOPLE = ["Anna Berg", "Jonas Keller", "Marta Lind", "Otto Brandt", "Greta Voss",
          "Tomas Hale", "Ines Roth", "Karl Weber", "Lena Fuchs", "Paul Meier"]
PLACES = ["Basel", "Zurich", "Bern", "Lucerne", "Geneva", "Lugano"]
FACTS = ["was born in", "taught in", "founded a school in", "wrote a book about"]
QUESTIONS = ["Where was Anna Berg born?", "Who taught in Basel before Jonas Keller?",
             "Which school did Marta Lind found in Bern?", "What did Otto Brandt write?"]


class WordsEmbedder:
    """A text's vector: the sum of its words' hashed vectors (no model: these tests are
    about BM25, the linker and texts, and must be quick)."""

    name, dim = "test:hashed-words-64", 64
    fail = False  # set: embedding raises (a write that fails part way)

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.fail:
            raise RuntimeError("the embedder is down")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest())
                out[row] += np.random.default_rng(seed).standard_normal(self.dim)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


@pytest.fixture
def open_graph(open_graph: Callable[..., GraphRAG]) -> Callable[..., GraphRAG]:
    """The shared fixture's graphs, with the hashed-words embedder."""
    return lambda graph, embedder=None: open_graph(graph, embedder=embedder or WordsEmbedder())


@pytest.fixture(scope="module")
def documents() -> list[list[PassageRecord]]:
    """Three documents of passages, each with the triplets it states."""
    rng = np.random.default_rng(3)
    docs: list[list[PassageRecord]] = [[], [], []]
    for number in range(36):
        triplets = [Triplet(str(rng.choice(PEOPLE)), str(rng.choice(FACTS)),
                            str(rng.choice(PLACES))) for _ in range(3)]
        text = " ".join(f"{t.subject} {t.predicate} {t.object}." for t in triplets)
        docs[number % 3].append(PassageRecord(f"Note {number}. {text}", triplets,
                                              doc_id=f"doc{number % 3}"))
    return docs


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many BM25 indexes, linkers and trigram indexes were built from texts and names,
    and how many times the passages were scanned in Milvus."""
    counts = {"bm25": 0, "linker": 0, "fuzzy": 0, "scan": 0}
    for name, cls in (("bm25", lexical.LocalBM25), ("linker", link.EntityLinker),
                      ("fuzzy", fuzzy.FuzzyIndex)):
        monkeypatch.setattr(cls, "__init__", _counted(cls.__init__, counts, name))
    real_scan = MilvusStore.scan

    def scan(self: MilvusStore, collection: str, fields: list[str]) -> Any:
        counts["scan"] += collection == self.passages
        return real_scan(self, collection, fields)

    monkeypatch.setattr(MilvusStore, "scan", scan)
    return counts


def _counted(real: Any, counts: dict[str, int], name: str) -> Any:
    def init(self: Any, *args: Any) -> None:
        counts[name] += 1
        real(self, *args)
    return init


def results(rag: GraphRAG, questions: list[str]) -> list[dict[str, Any]]:
    """The top 10 of the methods that use BM25 and the linker for each question (ids,
    scores, texts, entities), and a misspelt name resolved (the trigram index)."""
    out = []
    for method in ("default", "naive_lexical"):
        for question in questions:
            got = rag.retrieve(question, top_k=10, method=method).as_dict()
            got.pop("timings_ms", None)
            out.append(got)
    name = rag.graph.entity_names[0]
    misspelt = name[:-1] + "x" + name[-1]
    resolved = rag.retrieve(misspelt, method="seed", entities=[misspelt]).entities
    out.append({"resolved": [(e["id"], e["how"], e["score"]) for e in resolved]})
    return out


def lexicon_file(store: MilvusStore) -> Path:
    """Where the graph's lexicon is saved (beside its snapshot)."""
    return sidecar.lexicon_path(store.snapshot_path())


def fresh_results(open_graph: Any, store_of: Any, graph: str, questions: list[str]
                  ) -> list[dict[str, Any]]:
    """What a process that finds no lexicon file retrieves (it saves one again)."""
    rag = open_graph(graph)
    lexicon_file(store_of(rag)).unlink(missing_ok=True)
    got = results(rag, questions)
    rag.close()
    return got


@pytest.mark.slow
def test_a_reopened_graph_retrieves_as_one_built_afresh(open_graph, store_of, documents,
                                                        built) -> None:
    questions, (first, second, third) = QUESTIONS, documents
    steps = [lambda rag: (rag.add(first), rag.add(second)),  # a process that only ingests
             lambda rag: (results(rag, questions),  # then from its retriever: texts changed
                          rag.add([replace(r, text=r.text.upper()) for r in first]),
                          rag.delete("doc1"), rag.add(third))]  # removed, added
    for number, step in enumerate(steps):
        rag = open_graph("reopened")
        step(rag)
        store = store_of(rag)
        path, writes, identity = lexicon_file(store), store.writes, store.identity
        rag.close()
        saved = sidecar.load(path, identity, version=lexicon.VERSION)
        assert saved is not None and saved.writes == writes, number  # saved by the write
        before = dict(built)
        again = open_graph("reopened")
        reopened = results(again, questions)
        again.close()
        assert built == before, number  # nothing built from texts or names, nothing scanned
        assert reopened == fresh_results(open_graph, store_of, "reopened", questions), number
    assert any(p["doc_id"] == "doc0" and p["text"] == p["text"].upper()
               for got in reopened[:-1] for p in got["passages"])  # the texts written last


@pytest.mark.slow
def test_a_write_whose_file_was_never_saved_is_not_served_from_the_older_one(
        open_graph, store_of, documents) -> None:
    """Another process wrote (texts changed under the same ids, a document deleted, one
    added) and died before saving its lexicon: the older file's texts are not used, its
    index and linker only as a start that is brought up to date."""
    questions, (first, second, third) = QUESTIONS, documents
    rag = open_graph("other")
    rag.add(first)
    rag.add(second)
    path = lexicon_file(store_of(rag))
    rag.close()
    older = path.read_bytes()
    other = open_graph("other")
    other.add([replace(r, text=r.text.upper()) for r in first])
    other.delete("doc1")
    other.add(third)
    other.close()
    path.write_bytes(older)
    again = open_graph("other")
    reopened = results(again, questions)
    again.close()
    fresh = fresh_results(open_graph, store_of, "other", questions)
    assert reopened == fresh
    hits = [p for got in reopened[:-1] for p in got["passages"]]
    assert {p["doc_id"] for p in hits} == {"doc0", "doc2"}
    assert all(p["text"] == p["text"].upper() for p in hits if p["doc_id"] == "doc0")


def test_a_failed_write_leaves_the_saved_texts_unused(open_graph, store_of, documents) -> None:
    """A write that changed texts (same ids) and then failed: the graph keeps what it
    changed, so the texts saved at the write before no longer fit it."""
    first, embedder = documents[0], WordsEmbedder()
    open_graph("failed", embedder).add(first)
    rag = open_graph("failed", embedder)
    assert rag.retrieve("Anna Berg", method="naive_lexical").passages  # every text known
    embedder.fail = True
    with pytest.raises(RuntimeError, match="embedder is down"):
        rag.add([*(replace(r, text=r.text.upper()) for r in first),
                 PassageRecord("Anna Berg visited Basel.",
                               [Triplet("Anna Berg", "visited", "Basel")], doc_id="doc0")])
    embedder.fail = False
    rag.memory_limit = None  # a change of settings: the next retriever starts afresh
    hits = rag.retrieve("Anna Berg Basel", top_k=20, method="naive_lexical").passages
    store = store_of(rag)
    stored = {row["id"]: row["text"] for row in
              store.get(store.passages, [p.id for p in hits], ["id", "text"])}
    assert hits and [p.text for p in hits] == [stored[p.id] for p in hits]
    assert any(p.text.isupper() for p in hits)


@pytest.mark.parametrize("damage", ["corrupt", "other graph", "other version", "misfit"])
def test_a_bad_file_is_built_again(open_graph, store_of, documents, built, damage: str
                                   ) -> None:
    questions, (first, _, _) = QUESTIONS, documents
    rag = open_graph("damaged")
    rag.add(first)
    store = store_of(rag)
    path, identity, writes = lexicon_file(store), store.identity, store.writes
    rag.close()
    found = lexicon.read(path, identity)  # what the write saved
    assert found is not None and found[1].writes == writes
    strings, arrays = found[0].saved_form()
    texts = sidecar.texts(path, identity)[1]
    if damage == "corrupt":
        path.write_bytes(b"PK\x03\x04 not really a zip file")
    elif damage == "other graph":
        sidecar.save(path, "someone_else", writes, lexicon.VERSION, texts, strings, arrays)
    elif damage == "other version":
        sidecar.save(path, identity, writes, "0:older", texts, strings, arrays)
    else:  # every part readable, but they do not fit together
        arrays["bm25_indptr"] = arrays["bm25_indptr"][:-1]
        sidecar.save(path, identity, writes, lexicon.VERSION, texts, strings, arrays)
    before = dict(built)
    again = open_graph("damaged")
    reopened = results(again, questions)
    again.close()
    assert built["bm25"] == before["bm25"] + 1  # built again from the texts
    assert reopened == fresh_results(open_graph, store_of, "damaged", questions)
    saved = sidecar.load(path, identity, version=lexicon.VERSION)
    assert saved is not None and saved.writes == writes  # saved again by the first query


def test_lexicon_file_round_trip_keeps_unicode(tmp_path: Path) -> None:
    texts = {"p1": "Gödel met 爱因斯坦 in Princeton.", "p2": "C++ in Basel"}
    bm25 = lexical.passage_bm25(list(texts.items()))
    linker = link.EntityLinker(["Gödel", "爱因斯坦", "Princeton", "C++", "the"])
    strings, arrays = lexicon.Lexicon(bm25, linker).saved_form()
    path = tmp_path / "g.lexicon.npz"
    sidecar.save(path, "g", 3, lexicon.VERSION, texts, strings, arrays)
    found = lexicon.read(path, "g")
    assert found is not None and found[1].writes == 3 and found[1].texts == 2
    again = found[0]
    assert [(h.id, h.score) for h in again.bm25.search("Gödel Princeton", 2)] == [
        (h.id, h.score) for h in bm25.search("Gödel Princeton", 2)]
    assert again.linker.link("爱因斯坦在普林斯顿") == linker.link("爱因斯坦在普林斯顿")
    assert sidecar.texts(path, "g") == (3, texts)
    assert sidecar.texts(path, "h") == (-1, {})


@pytest.mark.parametrize("log", ["kept", "trimmed"])
def test_a_small_write_leaves_the_file_behind_and_readers_catch_up(
        open_graph, store_of, documents, built, monkeypatch: pytest.MonkeyPatch, log: str
        ) -> None:
    """A process with no lexicon in memory makes a small write (a document's texts changed
    under the same ids, one passage added): it neither reads nor rewrites the file. A new
    process starts from the file and the change log: it retrieves what a fresh build
    retrieves, the changed texts included, without building or scanning anything."""
    questions, (first, second, third) = QUESTIONS, documents
    small = [PassageRecord("Anna Berg taught in Basel.", [Triplet("Anna Berg", "taught in",
                                                                 "Basel")], doc_id="small"),
             PassageRecord("Jonas Keller wrote a book about Bern.",
                           [Triplet("Jonas Keller", "wrote a book about", "Bern")],
                           doc_id="small")]
    rag = open_graph("behind")
    rag.add(first + second + third + small)
    path = lexicon_file(store_of(rag))
    rag.close()
    saved_before = path.read_bytes()
    writer = open_graph("behind")
    with monkeypatch.context() as patch:
        patch.setattr(keeper, "read", lambda *_: pytest.fail("the file was read"))
        writer.add([replace(r, text=r.text.upper()) for r in small])
        writer.add([PassageRecord("Greta Voss founded a school in Lugano.",
                                  [Triplet("Greta Voss", "founded a school in", "Lugano")],
                                  doc_id="one more")])
    if log == "trimmed":  # the log no longer says what the writes since the file touched
        store = store_of(writer)
        ChangeLog(store, store.changes).trim(store.writes + 1)
    writer.close()
    assert path.read_bytes() == saved_before  # left behind, by two writes
    before = dict(built)
    again = open_graph("behind")
    reopened = results(again, [*questions, "Where did Greta Voss found a school?"])
    again.close()
    changed = path.read_bytes() != saved_before  # texts it could not use: saved again
    assert changed == (log == "trimmed")
    # Nothing built from texts or names; the texts scanned only without the log.
    assert built == {**before, "scan": before["scan"] + (log == "trimmed")}
    assert reopened == fresh_results(open_graph, store_of, "behind",
                                     [*questions, "Where did Greta Voss found a school?"])
    texts = {p["id"]: p["text"] for got in reopened[:-1] for p in got["passages"]}
    assert "ANNA BERG TAUGHT IN BASEL." in texts.values()
    scans = built["scan"]
    open_graph("behind").retrieve(questions[0])
    assert built["scan"] == scans  # the next process scans nothing either way
    assert "Greta Voss founded a school in Lugano." in texts.values()
