"""Crash safety of ingestion, checked with `store.check`: a write that stops after any stage
leaves a graph that says it is incomplete, and running the same ingest again gives exactly
a clean run's graph with every invariant holding."""

from __future__ import annotations

import pytest
from conftest import BERNOULLI, need

from hopgraph.ingest.loaders import source_doc_id
from hopgraph.ingest.writer import Ingestor
from hopgraph.store import MilvusStore
from hopgraph.store.check import check, check_and_repair
from hopgraph.store.writes import WriteSession

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each


class Stop(Exception):
    """Stands for the process dying at that point."""


def _rows(store: MilvusStore) -> tuple[set[str], set[str], dict[str, list[str]]]:
    return ({r["id"] for r in store.scan(store.passages, ["id"])},
            {r["id"] for r in store.scan(store.entities, ["id"])},
            {r["id"]: sorted(r["passage_ids"])
             for r in store.scan(store.relations, ["id", "passage_ids"])})


# Each stage of a write, in order; the failure is injected when it is reached.
STAGES = {
    "after passages": (Ingestor, "_store_entities"),
    "after entities": (Ingestor, "_store_relations"),
    "after relations": (MilvusStore, "flush"),
    "before finishing": (WriteSession, "finish"),
}


@pytest.mark.parametrize("chunk", [500, 2])
@pytest.mark.parametrize("stage", list(STAGES))
def test_rerun_after_a_failure_at_any_stage_equals_a_clean_run(
        open_graph, store_of, monkeypatch: pytest.MonkeyPatch, stage: str, chunk: int) -> None:
    """With chunks of 2 passages the per-chunk stages fail in the second chunk, after the
    first one was written completely."""
    from hopgraph.ingest import writer

    monkeypatch.setattr(writer, "CHUNK_PASSAGES", chunk)
    data = need(BERNOULLI)
    clean = open_graph("clean")
    clean.add_files([data])
    expected = _rows(store_of(clean))

    crashed = open_graph("crashed")
    owner, name = STAGES[stage]
    original = getattr(owner, name)
    calls = []
    per_chunk = owner is Ingestor and chunk == 2

    def stop(*args: object, **kwargs: object) -> object:
        calls.append(name)
        if per_chunk and len(calls) == 1:
            return original(*args, **kwargs)  # the first chunk goes through
        raise Stop(stage)

    with monkeypatch.context() as patch:
        patch.setattr(owner, name, stop)
        with pytest.raises(Stop):
            crashed.add_files([data])
    crashed.close()
    reopened = open_graph("crashed")  # a new process would reopen it like this
    store = store_of(reopened)
    assert store.incomplete is not None
    assert list(reopened.unfinished()) == [source_doc_id(data)]
    assert any(p.kind == "unfinished document" and p.id == source_doc_id(data)
               for p in check(store).problems)
    summary = reopened.add_files([data])
    assert summary.passages_added + summary.passages_present == len(expected[0])
    assert _rows(store) == expected
    assert check(store).problems == []
    assert store.incomplete is None


def test_a_real_kill_9_mid_ingest_then_a_rerun_equals_a_clean_run(
        open_graph, store_of, embedder, tmp_path) -> None:
    """A child process ingests with chunks of 2 passages and SIGKILLs itself while storing
    the second chunk's relations (no cleanup, no atexit: as `kill -9`); the rerun here
    completes the graph."""
    import signal
    import subprocess
    import sys

    from hopgraph import GraphRAG

    data = need(BERNOULLI)
    clean = open_graph("clean_k9")
    clean.add_files([data])
    expected = _rows(store_of(clean))
    uri = str(tmp_path / "killed.db")
    child = f"""
import os, signal
from hopgraph import GraphRAG
from hopgraph.ingest import writer
writer.CHUNK_PASSAGES = 2
calls = []
original = writer.Ingestor._store_relations
def die(self, *args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, *args, **kwargs)
writer.Ingestor._store_relations = die
GraphRAG(uri={uri!r}, graph="k9").add_files([{str(data)!r}])
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == -signal.SIGKILL, done.stderr
    with GraphRAG(uri=uri, graph="k9", embedder=embedder, create=False) as killed:
        store = store_of(killed)
        assert store.incomplete is not None
        assert len(_rows(store)[2]) < len(expected[2])  # the second chunk's relations
        killed.add_files([data])
        assert _rows(store) == expected
        assert check(store).problems == []
        assert store.incomplete is None


def test_a_later_write_never_makes_a_stopped_document_look_complete(
        open_graph, store_of, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A write of document A stops half way; writes of other documents finish after it:
    A stays unfinished (in `check`, stats and query notes) until it is ingested again."""
    from test_documents import ROWS, write

    from hopgraph.ingest import writer

    monkeypatch.setattr(writer, "CHUNK_PASSAGES", 2)
    a = write(tmp_path / "a.jsonl", ROWS)
    b = write(tmp_path / "b.jsonl", [{"passage": "Euler was born in Basel.",
                                      "triplets": [["Leonhard Euler", "born in", "Basel"]]}])
    rag = open_graph("later")
    original, calls = Ingestor._store_relations, []

    def stop(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise Stop("mid-write")
        return original(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Ingestor, "_store_relations", stop)
        with pytest.raises(Stop):
            rag.add_files([a])
    rag.add_files([b])
    assert list(rag.unfinished()) == [source_doc_id(a)]
    assert "write #1 failed" in rag.unfinished()[source_doc_id(a)]
    assert [p.id for p in check(store_of(rag)).problems
            if p.kind == "unfinished document"] == [source_doc_id(a)]
    assert any("is incomplete" in n for n in rag.retrieve("Who taught Euler?").notes)
    rag.add_files([a])
    assert rag.unfinished() == {} and check(store_of(rag)).problems == []
    assert not any("is incomplete" in n for n in rag.retrieve("Who taught Euler?").notes)


def test_check_repair_rolls_an_unfinished_document_back(
        open_graph, store_of, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """`check --repair` removes a half-written document and what hung on it only; the
    graph then equals one built from the other documents alone."""
    from test_documents import ROWS, write

    from hopgraph.ingest import writer

    monkeypatch.setattr(writer, "CHUNK_PASSAGES", 2)
    a = write(tmp_path / "a.jsonl", ROWS)
    b = write(tmp_path / "b.jsonl", ROWS[3:])
    clean = open_graph("rollback_clean")
    clean.add_files([b])
    rag = open_graph("rollback")
    rag.add_files([b])
    with monkeypatch.context() as patch:
        patch.setattr(Ingestor, "_store_relations", lambda *a, **k: (_ for _ in ()).throw(
            Stop("mid-write")))
        with pytest.raises(Stop):
            rag.add_files([a])
    store = store_of(rag)
    report = check_and_repair(store)
    assert report.problems == [] and report.repaired > 0
    assert _rows(store) == _rows(store_of(clean))
    assert store.unfinished() == {}
    rag.refresh()
    assert rag.unfinished() == {} and source_doc_id(a) not in rag.documents()


# Replace (re-ingest of an edited file) and delete: a stop after each stage of the write.
PRUNE_STAGES = {
    "after the new rows": (Ingestor, "_store_entities", 1),
    "after unlinking": ("prune", "_drop", 1),
    "after orphan entities": ("prune", "_drop", 2),
    "after empty relations": ("prune", "_drop", 3),
    "before finishing": (WriteSession, "finish", 1),
}
# A delete adds no rows, so it has no stop after the new rows.
STOPS = [(stage, operation) for operation in ("replace", "delete") for stage in PRUNE_STAGES
         if not (operation == "delete" and PRUNE_STAGES[stage][0] is Ingestor)]


@pytest.mark.parametrize(("stage", "operation"), STOPS)
def test_replace_or_delete_stopped_at_any_stage_then_rerun_equals_a_clean_run(
        open_graph, store_of, monkeypatch: pytest.MonkeyPatch, tmp_path, stage: str,
        operation: str) -> None:
    from test_documents import ROWS, edited, write

    from hopgraph.ingest import prune
    from hopgraph.ingest.loaders import source_doc_id

    path = write(tmp_path / "doc.jsonl", ROWS)
    other = write(tmp_path / "other.jsonl", [ROWS[3], {
        "passage": "Johann Bernoulli taught Euler.",
        "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"]]}])
    crashed = open_graph(f"stop_{operation}")
    crashed.add_files([path, other])
    clean = open_graph(f"clean_{operation}")
    if operation == "replace":
        write(path, edited(ROWS))
        clean.add_files([path, other])
    else:
        clean.add_files([other])

    def run(rag) -> object:  # the command, run again after the stop
        if operation == "replace":
            return rag.add_files([path])
        return rag.delete([source_doc_id(path)])
    owner, name, at = PRUNE_STAGES[stage]
    owner = prune if owner == "prune" else owner
    original = getattr(owner, name)
    calls = []

    def stop(*args: object, **kwargs: object) -> object:
        calls.append(name)
        if len(calls) == at:
            raise Stop(stage)
        return original(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(owner, name, stop)
        with pytest.raises(Stop):
            run(crashed)
    crashed.close()
    reopened = open_graph(f"stop_{operation}")
    store = store_of(reopened)
    assert store.incomplete is not None
    run(reopened)
    assert _rows(store) == _rows(store_of(clean))
    assert check(store).problems == []
    assert store.incomplete is None
    assert reopened.documents() == clean.documents()


def test_a_real_kill_9_mid_delete_then_a_rerun_equals_a_clean_run(
        open_graph, store_of, embedder, tmp_path) -> None:
    """A child process deletes a document and SIGKILLs itself after the orphan entities
    are deleted, before the relations and passages; the rerun here finishes the delete."""
    import signal
    import subprocess
    import sys

    from test_documents import ROWS, write

    from hopgraph import GraphRAG
    from hopgraph.ingest.loaders import source_doc_id

    path = write(tmp_path / "doc.jsonl", ROWS)
    other = write(tmp_path / "other.jsonl", ROWS[3:])
    clean = open_graph("clean_delete_k9")
    clean.add_files([other])
    uri = str(tmp_path / "killed.db")
    # The child writes the graph too: a Milvus Lite file stays held by this process once
    # opened here.
    child = f"""
import os, signal
from hopgraph import GraphRAG
from hopgraph.ingest import prune
rag = GraphRAG(uri={uri!r}, graph="k9")
rag.add_files([{str(path)!r}, {str(other)!r}])
calls = []
original = prune._drop
def die(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args, **kwargs)
prune._drop = die
rag.delete([{source_doc_id(path)!r}])
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == -signal.SIGKILL, done.stderr
    with GraphRAG(uri=uri, graph="k9", embedder=embedder, create=False) as killed:
        store = store_of(killed)
        assert store.incomplete is not None
        assert killed.documents()[source_doc_id(path)] == 4  # its passages go last
        killed.delete([source_doc_id(path)])
        assert _rows(store) == _rows(store_of(clean))
        assert check(store).problems == []
        assert store.incomplete is None
