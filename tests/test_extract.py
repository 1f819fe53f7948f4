"""Building records from raw documents: reading, chunking, estimating and LLM extraction."""

from __future__ import annotations

import functools
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_server import FakeLLMServer, Reply

from hopgraph.extract import (
    PASSAGE_MARKER,
    Chunk,
    Document,
    build_prompt,
    chunk_documents,
    count_tokens,
    estimate,
    extract_records,
    load_prompt,
    read_documents,
)
from hopgraph.loaders import InputError
from hopgraph.records import Problem, Triplet


@pytest.fixture
def make_client(llm_client_factory: Any) -> Any:
    """Clients against the scripted `server`; see conftest.llm_client_factory."""
    return functools.partial(llm_client_factory, max_retries=1, retry_base_delay=0.001,
                             concurrency=2)


def triplets_json(*triplets: list[Any]) -> str:
    return json.dumps({"triplets": list(triplets)})


def make_chunks(*texts: str, doc: str = "notes/a.txt") -> list[Chunk]:
    return [Chunk(doc, i, text, count_tokens(text)) for i, text in enumerate(texts)]


def answer_by_passage(replies: dict[str, Reply]) -> Any:
    """A responder picking the reply whose key appears in the prompt's passage."""
    def respond(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        passage = prompt[len(build_prompt(load_prompt(), "").rstrip()):]
        return next(reply for key, reply in replies.items() if key in passage)
    return respond


def test_read_documents_from_folder_and_files(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.txt").write_text("Bob lives in Bern.", encoding="utf-8")
    (tmp_path / "sub" / "a.md").write_text("# Alice\n\nAlice lives in Arles.", encoding="utf-8")
    (tmp_path / "data.csv").write_text("x,y\n", encoding="utf-8")
    (tmp_path / ".hidden.txt").write_text("ignored", encoding="utf-8")
    problems: list[Problem] = []
    docs = read_documents([tmp_path], problems)
    assert [Path(d.path).relative_to(tmp_path).as_posix() for d in docs] == ["b.txt", "sub/a.md"]
    assert docs[0].text == "Bob lives in Bern."
    assert len(problems) == 1 and problems[0].where.endswith("data.csv")
    assert "unsupported" in problems[0].what
    assert read_documents([tmp_path / "b.txt"]) == [docs[0]]


@pytest.mark.parametrize(("name", "content", "message"), [
    ("empty.txt", "  \n", "empty"),
    ("table.csv", "x,y", "unsupported file type"),
    ("latin.txt", b"caf\xe9", "cannot read"),
])
def test_bad_named_files_raise_input_error(tmp_path: Path, name: str, content: str | bytes,
                                           message: str) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        read_documents([path])
    assert name in str(caught.value)


def test_missing_path_and_folder_without_documents_raise(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_documents([tmp_path / "nope.txt"])
    (tmp_path / "only.csv").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match=r"no \.txt"):
        read_documents([tmp_path])


def test_pdf_without_text_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    with open(tmp_path / "scan.pdf", "wb") as out:
        writer.write(out)
    (tmp_path / "note.txt").write_text("Carol met Dan.", encoding="utf-8")
    problems: list[Problem] = []
    docs = read_documents([tmp_path], problems)
    assert [Path(d.path).name for d in docs] == ["note.txt"]
    assert problems[0].where.endswith("scan.pdf") and "no extractable text" in problems[0].what
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf at all")
    with pytest.raises(InputError, match=r"broken\.pdf"):
        read_documents([tmp_path / "broken.pdf"])


def test_long_text_becomes_overlapping_chunks_within_the_limit() -> None:
    text = " ".join(f"Fact {i}: Alice {i} met Bob {i} in town {i}." for i in range(80))
    chunks = chunk_documents([Document("long.txt", text), Document("short.md", "# Hi\n\nYo.")],
                             chunk_tokens=60, overlap_tokens=25)
    long = [c for c in chunks if c.doc == "long.txt"]
    assert len(long) > 3
    assert [c.index for c in long] == list(range(len(long)))
    assert all(0 < c.tokens <= 60 and c.tokens == count_tokens(c.text) for c in long)
    for before, after in itertools.pairwise(long):
        first_sentence = after.text.split(".")[0] + "."
        assert first_sentence in before.text  # the next chunk starts inside this one
    assert [(c.doc, c.index, c.text) for c in chunks if c.doc == "short.md"] == [
        ("short.md", 0, "# Hi\n\nYo.")]
    with pytest.raises(ValueError, match="overlap"):
        chunk_documents([], chunk_tokens=10, overlap_tokens=10)


def test_prompt_template_has_one_marker_and_survives_braces() -> None:
    template = load_prompt()
    assert template.count(PASSAGE_MARKER) == 1 and '{"triplets": [' in template
    prompt = build_prompt(template, 'Set {x} and {"y": 1}.')
    assert prompt.endswith('Set {x} and {"y": 1}.\n') and PASSAGE_MARKER not in prompt
    with pytest.raises(ValueError, match="exactly once"):
        estimate([], prompt_template="no marker here")


def test_estimate_counts_prompt_tokens_without_any_request(server: FakeLLMServer) -> None:
    chunks = make_chunks("Alice met Bob in Paris.", "Bob married Carol in 1901.")
    result = estimate(chunks, "Extract facts: <<PASSAGE>>")
    expected = [count_tokens(f"Extract facts: {c.text}") for c in chunks]
    assert result.chunks == 2 and result.prompt_tokens == sum(expected)
    assert result.chunk_tokens == sum(c.tokens for c in chunks)
    assert result.template_tokens == count_tokens("Extract facts: ")
    assert result.max_prompt_tokens == max(expected)
    assert estimate(chunks).prompt_tokens > result.prompt_tokens  # the real prompt is longer
    assert server.requests == []


def test_good_replies_become_records(server: FakeLLMServer, make_client: Any) -> None:
    server.responder = answer_by_passage({
        "Alice": Reply(content=triplets_json(["Alice", "met", "Bob"],
                                             [" Alice ", "lives in", "Paris"],
                                             ["Alice", "met", "Bob"])),
        "Carol": Reply(content=triplets_json()),
    })
    chunks = make_chunks("Alice met Bob in Paris.", "Carol stayed home.")
    seen: list[int] = []
    report = extract_records(make_client(), chunks, progress=seen.append)
    assert sum(seen) == 2
    assert [r.doc_id for r in report.records] == ["notes/a.txt#0", "notes/a.txt#1"]
    first = report.records[0]
    assert first.text == "Alice met Bob in Paris."
    assert first.metadata == {"source": "notes/a.txt", "chunk": 0}
    assert first.triplets == [Triplet("Alice", "met", "Bob"), Triplet("Alice", "lives in", "Paris")]
    assert report.records[1].triplets == []
    assert (report.chunks, report.triplets, report.chunks_failed, report.problems) == (2, 2, 0, [])
    bodies = [r.body for r in server.chat_requests]
    assert all(b["response_format"] == {"type": "json_object"} for b in bodies)
    assert sorted(b["messages"][-1]["content"] for b in bodies) == sorted(
        build_prompt(load_prompt(), c.text) for c in chunks)


def test_json_inside_prose_is_read(server: FakeLLMServer, make_client: Any) -> None:
    server.script(Reply(content='Sure!\n```json\n{"triplets": [["Ada", "knew", "Babbage"]]}\n```'))
    report = extract_records(make_client(), make_chunks("Ada knew Babbage."))
    assert report.records[0].triplets == [Triplet("Ada", "knew", "Babbage")]


def test_non_json_reply_is_a_problem_and_other_chunks_are_kept(
    server: FakeLLMServer, make_client: Any
) -> None:
    server.responder = answer_by_passage({
        "first": Reply(content=triplets_json(["X", "is", "first"])),
        "second": Reply(content="I cannot help with that."),
        "third": Reply(content='{"facts": []}'),
        "fourth": Reply(content=triplets_json(["Z", "is", "fourth"])),
    })
    chunks = make_chunks("the first one", "the second one", "the third one", "the fourth one")
    report = extract_records(make_client(), chunks)
    assert [r.doc_id for r in report.records] == ["notes/a.txt#0", "notes/a.txt#3"]
    assert report.chunks_failed == 2
    assert [p.where for p in report.problems] == ["notes/a.txt#1", "notes/a.txt#2"]
    assert report.problems[0].what == "reply is not JSON: 'I cannot help with that.'"
    assert report.problems[1].what.startswith('reply has no "triplets" list')


def test_malformed_triplets_are_skipped_and_counted(server: FakeLLMServer, make_client: Any
                                                    ) -> None:
    server.script(Reply(content=triplets_json(
        ["Ann", "wrote", "Book"], ["Ann", "wrote"], ["Ann", "", "Book"], "Ann wrote Book",
        ["Ann", 3, "Book"], {"subject": "Book", "predicate": "cites", "object": "Paper"})))
    report = extract_records(make_client(), make_chunks("Ann wrote Book, which cites Paper."))
    assert report.records[0].triplets == [Triplet("Ann", "wrote", "Book"),
                                          Triplet("Book", "cites", "Paper")]
    assert report.triplets == 2 and report.triplets_skipped == 4 and report.chunks_failed == 0
    assert [p.where for p in report.problems] == [f"notes/a.txt#0 triplet {i}" for i in range(1, 5)]
    assert [p.what for p in report.problems] == [
        "expected 3 parts, got 2", "predicate is empty",
        "expected [subject, predicate, object], got str", "predicate is int, expected a string"]


def test_persistent_500_fails_its_chunk_and_the_rest_go_on(
    server: FakeLLMServer, make_client: Any
) -> None:
    server.responder = answer_by_passage({
        "broken": Reply(status=500),
        "fine": Reply(content=triplets_json(["A", "is", "fine"])),
    })
    chunks = make_chunks("fine 0", "broken 1", "fine 2", "fine 3")
    report = extract_records(make_client(concurrency=1), chunks)
    assert [r.doc_id for r in report.records] == ["notes/a.txt#0", "notes/a.txt#2", "notes/a.txt#3"]
    assert report.chunks_failed == 1
    assert report.problems[0].where == "notes/a.txt#1"
    assert "HTTP 500" in report.problems[0].what
    assert len(server.chat_requests) == 5  # the broken chunk: one try plus one retry


def test_rerun_after_interruption_sends_only_missing_chunks(
    server: FakeLLMServer, make_client: Any
) -> None:
    server.responder = lambda body: Reply(content=triplets_json(["P", "is", "done"]))
    chunks = make_chunks(*(f"passage number {i}" for i in range(5)))

    def interrupt(done: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C after the first batch

    with pytest.raises(KeyboardInterrupt):
        extract_records(make_client(), chunks, progress=interrupt, batch_size=2)
    assert len(server.chat_requests) == 2
    report = extract_records(make_client(), chunks, batch_size=2)
    assert len(server.chat_requests) == 5  # only the three unanswered chunks were sent
    sent = [r.body["messages"][-1]["content"] for r in server.chat_requests[2:]]
    assert sorted(sent) == [build_prompt(load_prompt(), c.text) for c in chunks[2:]]
    assert report.cached == 2 and len(report.records) == 5 and report.chunks_failed == 0


def test_cli_extract_dry_run_then_ingest(tmp_path: Path) -> None:
    """`hopgraph ingest --extract` end to end: dry run, extraction over HTTP, rerun cached."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "curie.txt").write_text("Marie Curie was born in Warsaw.\n", encoding="utf-8")
    (folder / "notes.md").write_text("# Ada\n\nAda Lovelace worked with Charles Babbage.\n",
                                     encoding="utf-8")

    def responder(body: dict) -> Reply:
        text = body["messages"][-1]["content"].rsplit("Passage:", 1)[-1]
        triplets = []
        if "Warsaw" in text:
            triplets.append(["Marie Curie", "was born in", "Warsaw"])
        if "Babbage" in text:
            triplets.append(["Ada Lovelace", "worked with", "Charles Babbage"])
        return Reply(json.dumps({"triplets": triplets}))

    with FakeLLMServer(responder) as server:
        env = {**os.environ, "HOPGRAPH_URI": str(tmp_path / "x.db"), "HOPGRAPH_GRAPH": "docs",
               "HOPGRAPH_LLM_MODEL": "scripted", "HOPGRAPH_LLM_BASE_URL": server.url,
               "OPENAI_API_KEY": "test", "HOPGRAPH_LLM_CACHE": str(tmp_path / "c.sqlite")}

        def run(*args: str) -> subprocess.CompletedProcess:
            done = subprocess.run([sys.executable, "-m", "hopgraph.cli", "ingest", "--extract",
                                   str(folder), "--quiet", *args], env=env, text=True,
                                  capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, done.stderr
            return done

        dry = run("--dry-run")
        assert "2 documents, 2 chunks" in dry.stdout and "estimated prompt tokens" in dry.stdout
        assert server.chat_requests == []
        first = run("--json")
        summary = json.loads(first.stdout)
        assert summary["passages_added"] == 2 and summary["relations_added"] == 2
        assert "extracted 2 triplets from 2 chunks" in first.stderr
        assert len(server.chat_requests) == 2
        again = run("--json")
        assert "2 chunks from cache" in again.stderr
        assert json.loads(again.stdout)["passages_added"] == 0
        assert len(server.chat_requests) == 2  # resumed from the cache: nothing re-sent
